/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The pathname unix sockets a guarded cgroup may connect or send to (unix.bpf.h), shared by the
 * programs and the loader's policy (policy.c).
 */
#ifndef MCPGUARD_UNIX_H
#define MCPGUARD_UNIX_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* sizeof(sockaddr_un.sun_path): a path of this many bytes has no NUL in the address. */
#define MCPGUARD_UNIX_PATH_LEN 108

/*
 * The key of mcpguard_unix_allow: the cgroup, and the path as the kernel reads it from the
 * address, the bytes up to the first NUL, the rest zero: always NUL-terminated, and with no
 * padding in the struct, whose every byte the hash compares.
 */
struct mcpguard_unix_key {
	__u64 cgroup_id;
	char path[MCPGUARD_UNIX_PATH_LEN + 4];
};

/* enum bpf_attach_type values of kernel 6.7, which libbpf 1.1's headers (Debian 12) lack. */
#define MCPGUARD_ATTACH_UNIX_CONNECT 49
#define MCPGUARD_ATTACH_UNIX_SENDMSG 50

#endif
