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

/*
 * Where a guarded cgroup's DNS goes (the map mcpguard_dns, keyed by cgroup id): the resolver the
 * proxy runs for it, which answers only the names its policy grants. Every UDP send and TCP
 * connect of the cgroup to port 53, whatever the address, is sent there instead (net.bpf.c);
 * port4 0 or port6 0 means no such resolver for that family, and port-53 traffic of it is refused.
 */
struct mcpguard_dns_value {
	__u32 ip4;	/* network byte order */
	__u16 port4;	/* host byte order */
	__u16 pad;
	__u32 ip6[4];	/* network byte order */
	__u16 port6;	/* host byte order */
	__u16 pad2[3];
};

/* The destination a redirected socket asked for (mcpguard_dns_orig, by socket cookie). */
struct mcpguard_dns_orig {
	__u32 addr[4];	/* IPv4 in addr[0], or IPv6; network byte order */
	__u16 port;	/* host byte order */
	__u16 family;	/* AF_INET or AF_INET6 */
};

#endif
