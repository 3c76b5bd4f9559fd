/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The record every program sends through the mcpguard_events ring buffer, and the codes the
 * loader turns into JSON. One fixed-size layout for all kinds keeps the ring buffer single and
 * the reader simple; fields a kind does not use are zero.
 */
#ifndef MCPGUARD_EVENTS_H
#define MCPGUARD_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MCPGUARD_COMM_LEN 16
#define MCPGUARD_PATH_LEN 256

enum mcpguard_event_type {
	MCPGUARD_EV_DENY = 1, /* an operation a BPF program refused */
	MCPGUARD_EV_DENIED,   /* a syscall of a guarded task that failed with EACCES, EPERM or EROFS */
	MCPGUARD_EV_EXEC,
	MCPGUARD_EV_FORK,
	MCPGUARD_EV_EXIT,
};

enum mcpguard_backend {
	MCPGUARD_BACKEND_CGROUP_BPF = 1,
	MCPGUARD_BACKEND_BPF_LSM,
};

/* What was refused: the hook for MCPGUARD_EV_DENY. */
enum mcpguard_op {
	MCPGUARD_OP_CONNECT4 = 1,
	MCPGUARD_OP_CONNECT6,
	MCPGUARD_OP_SENDMSG4,
	MCPGUARD_OP_SENDMSG6,
	MCPGUARD_OP_SOCK_CREATE,
	MCPGUARD_OP_FILE_OPEN,
	MCPGUARD_OP_INODE_CREATE,
	MCPGUARD_OP_PATH_TRUNCATE,
	MCPGUARD_OP_PATH_UNLINK,
	MCPGUARD_OP_PATH_RENAME,
	MCPGUARD_OP_PATH_MKDIR,
	MCPGUARD_OP_PATH_RMDIR,
	MCPGUARD_OP_PATH_MKNOD,
	MCPGUARD_OP_PATH_SYMLINK,
	MCPGUARD_OP_PATH_LINK,
	MCPGUARD_OP_BPRM_CHECK_SECURITY,
	MCPGUARD_OP_SOCKET_CONNECT,
	MCPGUARD_OP_SOCKET_SENDMSG,
	MCPGUARD_OP_SOCKET_CREATE,
	MCPGUARD_OP_CONNECT_UNIX,
	MCPGUARD_OP_SENDMSG_UNIX,
};

struct mcpguard_event {
	__u8 type;	 /* enum mcpguard_event_type */
	__u8 backend;	 /* MCPGUARD_EV_DENY: enum mcpguard_backend */
	__u8 access;	 /* bpf-lsm file hooks: MCPGUARD_ACCESS_* bits that were needed */
	__u8 has_path;	 /* path holds a string */
	__u16 op;	 /* MCPGUARD_EV_DENY: enum mcpguard_op; MCPGUARD_EV_DENIED: syscall number */
	__u16 family;	 /* AF_* of the socket or address, 0 when none */
	__u16 sock_type; /* SOCK_* */
	__u16 protocol;	 /* IPPROTO_* */
	__u16 port;	 /* host byte order */
	__u16 errno_;	 /* MCPGUARD_EV_DENIED: the errno */
	__u32 pid;	 /* thread group id */
	__u32 other;	 /* EXEC: parent pid; FORK: child pid; EXIT: wait status */
	__u8 addr[16];	 /* IPv4 in the first 4 bytes, or IPv6; network byte order */
	char comm[MCPGUARD_COMM_LEN];
	char path[MCPGUARD_PATH_LEN];
	__u8 has_path2;	 /* path2 holds a string */
	char path2[MCPGUARD_PATH_LEN]; /* MCPGUARD_EV_DENIED of a rename or link: the destination */
};

#endif
