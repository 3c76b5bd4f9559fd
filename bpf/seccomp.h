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
 * - No user namespace: unshare(2) and clone(2) with CLONE_NEWUSER fail with EPERM (what a kernel
 *   answers where they are not allowed), and clone3(2), whose flags sit in memory a filter cannot
 *   read, fails with ENOSYS, on which glibc falls back to clone(2). Inside a user namespace of its
 *   own a server would hold every capability over new network, mount and IPC namespaces, the
 *   kernel's widest attack surface for an unprivileged process. Without one, creating any other
 *   namespace needs CAP_SYS_ADMIN, which the launcher drops.
 * - No kernel keyring: add_key(2), request_key(2) and keyctl(2) fail with ENOSYS, the answer of a
 *   kernel without keys. The session and user keyrings are shared with the account's other
 *   processes.
 * - open_by_handle_at(2) fails with EPERM: a file handle opened through a descriptor of a writable
 *   mount reaches any file of that filesystem, beneath no rule Landlock judges (the launcher also
 *   drops CAP_DAC_READ_SEARCH, which the call needs).
 * - With MG_SECCOMP_SYSV (where the launcher cannot give the server an IPC namespace of its own,
 *   see launcher.c), SysV IPC (msg*, sem*, shm*) and POSIX message queues fail with ENOSYS, the
 *   answer of a kernel without them: their keys and names are shared with every process of the
 *   host's IPC namespace, and Landlock mediates neither.
 * The flag and family arguments are C ints: the kernel reads their low 32 bits, and so does the
 * filter. Installed after no_new_privs, inherited by every descendant, never loosened.
 */
#ifndef MCPGUARD_SECCOMP_H
#define MCPGUARD_SECCOMP_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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
#define MG_FOREIGN_BIT 0x40000000U
#elif defined(__aarch64__)
#define MG_AUDIT_ARCH AUDIT_ARCH_AARCH64
/* No second ABI shares the native arch value. */
#define MG_FOREIGN_BIT 0
#else
#error "seccomp.h knows the x86_64 and aarch64 system call ABIs only"
#endif

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MG_ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define MG_ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

/* Options of mg_seccomp_install(). */
#define MG_SECCOMP_SYSV 1U

/*
 * The filter is built at run time from rules, each a block that starts with a test of the system
 * call number (the accumulator holds it between blocks) and ends in a return on every path, so a
 * block's jumps stay inside it and no offset is counted by hand across the program.
 */
#define MG_MAX_INSNS 160

struct mg_prog {
	struct sock_filter insn[MG_MAX_INSNS];
	unsigned int n;
	int overflow;
};

static inline void mg_emit(struct mg_prog *p, struct sock_filter insn)
{
	if (p->n < MG_MAX_INSNS)
		p->insn[p->n++] = insn;
	else
		p->overflow = 1;
}

#define MG_STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define MG_JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define MG_LOAD(off) MG_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define MG_RET(val) MG_STMT(BPF_RET | BPF_K, (val))
#define MG_ERRNO(e) MG_RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define MG_ALLOW MG_RET(SECCOMP_RET_ALLOW)

/* if (nr == `nr`) run the next `len` instructions, else skip them. */
static inline void mg_block(struct mg_prog *p, unsigned int nr, unsigned int len)
{
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, len));
}

/* The call fails with `err`. */
static inline void mg_refuse(struct mg_prog *p, unsigned int nr, int err)
{
	mg_block(p, nr, 1);
	mg_emit(p, MG_ERRNO(err));
}

/* The call fails with `err` when argument `arg` has any bit of `mask` set (`when_set`), or none. */
static inline void mg_refuse_bits(struct mg_prog *p, unsigned int nr, unsigned int arg, unsigned int mask,
				  int when_set, int err)
{
	mg_block(p, nr, 4);
	mg_emit(p, MG_LOAD(MG_ARG_LO(arg)));
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, when_set ? 0 : 1, when_set ? 1 : 0));
	mg_emit(p, MG_ERRNO(err));
	mg_emit(p, MG_ALLOW);
}

/* socket(2), socketpair(2): unix, inet, inet6, and netlink route only. */
static inline void mg_socket_families(struct mg_prog *p, unsigned int nr)
{
	mg_block(p, nr, 9);
	mg_emit(p, MG_LOAD(MG_ARG_LO(0)));
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 6, 0));	 /* -> allow */
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 5, 0));	 /* -> allow */
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 4, 0)); /* -> allow */
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 2)); /* -> refuse */
	mg_emit(p, MG_LOAD(MG_ARG_LO(2)));
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_ROUTE, 1, 0)); /* -> allow */
	mg_emit(p, MG_ERRNO(EAFNOSUPPORT));
	mg_emit(p, MG_ALLOW);
}

/* System calls of SysV IPC and POSIX message queues (MG_SECCOMP_SYSV). */
static const unsigned int mg_sysv_calls[] = {
	__NR_msgget, __NR_msgsnd,   __NR_msgrcv,      __NR_msgctl,     __NR_semget,	      __NR_semop,
	__NR_semctl, __NR_semtimedop, __NR_shmget,    __NR_shmat,      __NR_shmdt,	      __NR_shmctl,
	__NR_mq_open, __NR_mq_unlink, __NR_mq_timedsend, __NR_mq_timedreceive, __NR_mq_notify, __NR_mq_getsetattr,
};

/* Build the filter; 0, or -EOVERFLOW when it does not fit. */
static inline int mg_seccomp_build(struct mg_prog *p, unsigned int options)
{
	p->n = 0;
	p->overflow = 0;
	mg_emit(p, MG_LOAD(offsetof(struct seccomp_data, arch)));
	mg_emit(p, MG_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MG_AUDIT_ARCH, 1, 0));
	mg_emit(p, MG_RET(SECCOMP_RET_KILL_PROCESS));
	mg_emit(p, MG_LOAD(offsetof(struct seccomp_data, nr)));
	if (MG_FOREIGN_BIT) {
		mg_emit(p, MG_JUMP(BPF_JMP | BPF_JGE | BPF_K, MG_FOREIGN_BIT, 0, 1));
		mg_emit(p, MG_RET(SECCOMP_RET_KILL_PROCESS));
	}
	mg_socket_families(p, __NR_socket);
	mg_socket_families(p, __NR_socketpair);
	/* memfd_create: only with MFD_NOEXEC_SEAL in its flags (arg 1). */
	mg_refuse_bits(p, __NR_memfd_create, 1, MFD_NOEXEC_SEAL, 0, ENOSYS);
	/* execveat: not with AT_EMPTY_PATH in its flags (arg 4). */
	mg_refuse_bits(p, __NR_execveat, 4, AT_EMPTY_PATH, 1, EACCES);
	mg_refuse(p, __NR_io_uring_setup, ENOSYS);
	mg_refuse_bits(p, __NR_unshare, 0, CLONE_NEWUSER, 1, EPERM);
	/* clone's flags are its first argument on x86_64 and aarch64 alike. */
	mg_refuse_bits(p, __NR_clone, 0, CLONE_NEWUSER, 1, EPERM);
	mg_refuse(p, __NR_clone3, ENOSYS);
	mg_refuse(p, __NR_add_key, ENOSYS);
	mg_refuse(p, __NR_request_key, ENOSYS);
	mg_refuse(p, __NR_keyctl, ENOSYS);
	mg_refuse(p, __NR_open_by_handle_at, EPERM);
	if (options & MG_SECCOMP_SYSV)
		for (size_t i = 0; i < sizeof(mg_sysv_calls) / sizeof(mg_sysv_calls[0]); i++)
			mg_refuse(p, mg_sysv_calls[i], ENOSYS);
	mg_emit(p, MG_ALLOW);
	return p->overflow ? -EOVERFLOW : 0;
}

/* Install the filter (no_new_privs must be set): 0, or -errno. */
static inline int mg_seccomp_install(unsigned int options)
{
	static struct mg_prog prog;
	struct sock_fprog fprog;
	int err = mg_seccomp_build(&prog, options);

	if (err)
		return err;
	fprog.len = (unsigned short)prog.n;
	fprog.filter = prog.insn;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog))
		return -errno;
	return 0;
}

#endif
