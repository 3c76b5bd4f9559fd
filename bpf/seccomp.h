/* SPDX-License-Identifier: MIT */
/*
 * The launcher's seccomp filter: what Landlock and the cgroup socket hooks cannot see.
 *
 * - Foreign system call ABIs are fatal (SECCOMP_RET_KILL_PROCESS): i386 `int 0x80` and x32 on
 *   x86_64, AArch32 on aarch64. Their numbers differ from the native ones the rules below test,
 *   and i386 reaches sockets through socketcall(2), whose arguments a filter cannot read.
 * - memfd_create without MFD_NOEXEC_SEAL fails with ENOSYS, the answer of a kernel without
 *   memfd, on which ordinary programs fall back to a temporary file. A memfd lives on an internal
 *   mount that Landlock lets through, so an executable one would let a server run code it wrote
 *   itself; a sealed non-executable memfd is fine. execveat(2) with AT_EMPTY_PATH (fexecve: exec
 *   of an open descriptor, such as one received over a unix socket) fails with EACCES.
 * - socket(2) and socketpair(2) work for AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK with
 *   NETLINK_ROUTE only (glibc's getaddrinfo and Node's os.networkInterfaces read interfaces with
 *   it; changing routes needs CAP_NET_ADMIN, which the launcher drops). Every other family or
 *   netlink protocol (vsock, packet, kobject uevents, audit, ...) fails with EAFNOSUPPORT: the
 *   cgroup sock_create hook runs for inet sockets only.
 * - io_uring_setup(2) fails with ENOSYS (libuv and others fall back to epoll): io_uring can open
 *   sockets and files without passing through the system calls above.
 * The family, flags and protocol arguments are C ints: the kernel reads their low 32 bits, and so
 * does the filter. Installed after no_new_privs, inherited by every descendant, never loosened.
 */
#ifndef MCPGUARD_SECCOMP_H
#define MCPGUARD_SECCOMP_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define MG_AUDIT_ARCH AUDIT_ARCH_X86_64
/* x32 calls carry __X32_SYSCALL_BIT in their number, under the x86_64 arch value. */
#define MG_FOREIGN_NR BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1)
#elif defined(__aarch64__)
#define MG_AUDIT_ARCH AUDIT_ARCH_AARCH64
/* No second ABI shares the native arch value: jump over the kill. */
#define MG_FOREIGN_NR BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0)
#else
#error "seccomp.h knows the x86_64 and aarch64 system call ABIs only"
#endif

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MG_ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define MG_ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

#define MG_LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define MG_RET(val) BPF_STMT(BPF_RET | BPF_K, (val))
#define MG_ERRNO(e) MG_RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
/* if (A == k) skip t instructions, else skip f */
#define MG_JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

/* Jumps count the instructions skipped, forward only; the comments name their targets. */
static const struct sock_filter mg_filter[] = {
	/* 0 */ MG_LOAD(offsetof(struct seccomp_data, arch)),
	/* 1 */ MG_JEQ(MG_AUDIT_ARCH, 1, 0),
	/* 2 */ MG_RET(SECCOMP_RET_KILL_PROCESS),
	/* 3 */ MG_LOAD(offsetof(struct seccomp_data, nr)),
	/* 4 */ MG_FOREIGN_NR,
	/* 5 */ MG_RET(SECCOMP_RET_KILL_PROCESS),
	/* 6 */ MG_JEQ(__NR_socket, 6, 0),	   /* -> 13 */
	/* 7 */ MG_JEQ(__NR_socketpair, 5, 0),	   /* -> 13 */
	/* 8 */ MG_JEQ(__NR_memfd_create, 14, 0),  /* -> 23 */
	/* 9 */ MG_JEQ(__NR_execveat, 16, 0),	   /* -> 26 */
	/* 10 */ MG_JEQ(__NR_io_uring_setup, 1, 0), /* -> 12 */
	/* 11 */ MG_RET(SECCOMP_RET_ALLOW),
	/* 12 */ MG_ERRNO(ENOSYS),
	/* socket, socketpair: the family (arg 0), then a netlink socket's protocol (arg 2) */
	/* 13 */ MG_LOAD(MG_ARG_LO(0)),
	/* 14 */ MG_JEQ(AF_UNIX, 6, 0),	   /* -> 21 */
	/* 15 */ MG_JEQ(AF_INET, 5, 0),	   /* -> 21 */
	/* 16 */ MG_JEQ(AF_INET6, 4, 0),   /* -> 21 */
	/* 17 */ MG_JEQ(AF_NETLINK, 1, 0), /* -> 19 */
	/* 18 */ MG_ERRNO(EAFNOSUPPORT),
	/* 19 */ MG_LOAD(MG_ARG_LO(2)),
	/* 20 */ MG_JEQ(NETLINK_ROUTE, 0, 1), /* -> 21 : 22 */
	/* 21 */ MG_RET(SECCOMP_RET_ALLOW),
	/* 22 */ MG_ERRNO(EAFNOSUPPORT),
	/* memfd_create: only with MFD_NOEXEC_SEAL in its flags (arg 1) */
	/* 23 */ MG_LOAD(MG_ARG_LO(1)),
	/* 24 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MFD_NOEXEC_SEAL, 4, 0), /* -> 29 : 25 */
	/* 25 */ MG_ERRNO(ENOSYS),
	/* execveat: not with AT_EMPTY_PATH in its flags (arg 4) */
	/* 26 */ MG_LOAD(MG_ARG_LO(4)),
	/* 27 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 1), /* -> 28 : 29 */
	/* 28 */ MG_ERRNO(EACCES),
	/* 29 */ MG_RET(SECCOMP_RET_ALLOW),
};

/* Install the filter (no_new_privs must be set): 0, or -errno. */
static inline int mg_seccomp_install(void)
{
	struct sock_fprog prog = {
		.len = sizeof(mg_filter) / sizeof(mg_filter[0]),
		.filter = (struct sock_filter *)mg_filter,
	};

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

#endif
