/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Keys of the network allow maps, filled by the loader from `net allow4|allow6` policy lines
 * and read by net.bpf.c (cgroup hooks) and lsm.bpf.c (socket hooks). A key with port 0 allows
 * every port of the address. Explicit padding keeps the keys free of undefined bytes.
 */
#ifndef MCPGUARD_NET_H
#define MCPGUARD_NET_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MCPGUARD_NET_RULES 4096

struct mcpguard_net4_key {
	__u64 cgroup_id;
	__u32 addr; /* network byte order */
	__u16 port; /* host byte order; 0 = any */
	__u16 pad;
};

struct mcpguard_net6_key {
	__u64 cgroup_id;
	__u8 addr[16];
	__u16 port; /* host byte order; 0 = any */
	__u16 pad[3];
};

#endif
