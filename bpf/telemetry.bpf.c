// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Audit telemetry of guarded cgroups from BTF tracepoints: process fork, exec and exit, and the
 * file and network syscalls that failed with EACCES or EPERM (on a host without BPF LSM that is
 * mostly Landlock refusing them) or with EROFS (a write outside the write grants, where the
 * launcher made the server's mounts read-only), and renames and links that failed with EXDEV
 * (Landlock refusing to reparent a file, or a move between two write grants' mounts; the loader
 * drops those that really crossed filesystems), and a change of a file's metadata refused with EROFS. Observation only: a tracepoint runs beside the syscall and
 * cannot stop it, so nothing here enforces.
 *
 * The argument worth reporting (a path or a destination) is copied from user memory at
 * sys_enter into per-thread storage and reported at sys_exit if the call failed. A path whose
 * page was not resident at sys_enter (a tracepoint cannot fault it in) is read again at sys_exit,
 * after the kernel's own copy brought it in. Every syscall on the host pays a number test at
 * sys_enter and a return-value test at sys_exit; only the watched calls of guarded tasks pay more.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "lsm.h"
#include "telemetry.h"
#include "unix.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by the loader when the BPF LSM programs enforce too. */
const volatile bool lsm_enforces;

#if defined(__TARGET_ARCH_x86)
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#else
#error "telemetry.bpf.c knows the x86_64 syscall numbers only"
#endif

/* What sys_enter saw of a watched call; task storage: one per thread, freed with it. */
struct pending {
	long nr; /* the syscall recorded, -1 once reported */
	const void *user_path;
	const void *user_path2; /* a rename's or link's destination */
	__u16 family;
	__u16 port;
	__u8 addr[16];
	__u8 has_path;
	__u8 has_path2;
	__u8 access; /* MCPGUARD_ACCESS_* the call asked for, 0 when not known */
	char path[MCPGUARD_PATH_LEN];
	char path2[MCPGUARD_PATH_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending);
} mcpguard_pending SEC(".maps");

/* A call that changes a file's metadata: reported for EROFS only (another errno is not the guard's). */
static __always_inline bool metadata_call(long nr)
{
	switch (nr) {
	case MCPGUARD_NR_CHMOD:
	case MCPGUARD_NR_FCHMOD:
	case MCPGUARD_NR_CHOWN:
	case MCPGUARD_NR_FCHOWN:
	case MCPGUARD_NR_LCHOWN:
	case MCPGUARD_NR_UTIME:
	case MCPGUARD_NR_SETXATTR:
	case MCPGUARD_NR_LSETXATTR:
	case MCPGUARD_NR_FSETXATTR:
	case MCPGUARD_NR_REMOVEXATTR:
	case MCPGUARD_NR_LREMOVEXATTR:
	case MCPGUARD_NR_FREMOVEXATTR:
	case MCPGUARD_NR_UTIMES:
	case MCPGUARD_NR_FCHOWNAT:
	case MCPGUARD_NR_FUTIMESAT:
	case MCPGUARD_NR_FCHMODAT:
	case MCPGUARD_NR_UTIMENSAT:
	case MCPGUARD_NR_FCHMODAT2:
	case MCPGUARD_NR_SETXATTRAT:
	case MCPGUARD_NR_REMOVEXATTRAT:
		return true;
	default:
		return false;
	}
}

static __always_inline bool watched(long nr)
{
	switch (nr) {
	case MCPGUARD_NR_OPEN:
	case MCPGUARD_NR_OPENAT:
	case MCPGUARD_NR_OPENAT2:
	case MCPGUARD_NR_CREAT:
	case MCPGUARD_NR_TRUNCATE:
	case MCPGUARD_NR_MKDIR:
	case MCPGUARD_NR_MKDIRAT:
	case MCPGUARD_NR_RMDIR:
	case MCPGUARD_NR_UNLINK:
	case MCPGUARD_NR_UNLINKAT:
	case MCPGUARD_NR_RENAME:
	case MCPGUARD_NR_RENAMEAT:
	case MCPGUARD_NR_RENAMEAT2:
	case MCPGUARD_NR_LINK:
	case MCPGUARD_NR_LINKAT:
	case MCPGUARD_NR_SYMLINK:
	case MCPGUARD_NR_SYMLINKAT:
	case MCPGUARD_NR_EXECVE:
	case MCPGUARD_NR_EXECVEAT:
	case MCPGUARD_NR_CONNECT:
	case MCPGUARD_NR_SENDTO:
	case MCPGUARD_NR_SENDMSG:
		return true;
	default:
		return metadata_call(nr);
	}
}

static __always_inline void read_path(struct pending *p, const void *user_path)
{
	p->user_path = user_path;
	p->has_path = bpf_probe_read_user_str(p->path, sizeof(p->path), user_path) > 0;
}

/* A rename's or link's source and destination. */
static __always_inline void read_paths(struct pending *p, const void *from, const void *to)
{
	read_path(p, from);
	p->user_path2 = to;
	p->has_path2 = bpf_probe_read_user_str(p->path2, sizeof(p->path2), to) > 0;
}

/* The family of a destination, and its address and port when it is IPv4 or IPv6. */
static __always_inline void read_sockaddr(struct pending *p, const void *user_addr)
{
	__u16 family;

	if (!user_addr || bpf_probe_read_user(&family, sizeof(family), user_addr))
		return;
	p->family = family;
	if (family == AF_INET) {
		struct sockaddr_in sin;

		if (bpf_probe_read_user(&sin, sizeof(sin), user_addr))
			return;
		__builtin_memcpy(p->addr, &sin.sin_addr, 4);
		p->port = bpf_ntohs(sin.sin_port);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 sin6;

		if (bpf_probe_read_user(&sin6, sizeof(sin6), user_addr))
			return;
		__builtin_memcpy(p->addr, &sin6.sin6_addr, 16);
		p->port = bpf_ntohs(sin6.sin6_port);
	} else if (family == AF_UNIX) {
		char first = '\0';

		/* A pathname (not an abstract name): its first byte is not NUL. addr is unused for unix. */
		bpf_probe_read_user(&first, 1, user_addr + offsetof(struct sockaddr_un, sun_path));
		p->addr[0] = first != '\0';
	}
}

/* open(2)'s flags as the access they ask for: read unless write-only, write when writing or creating. */
static __always_inline __u8 open_access(__u64 flags)
{
	__u64 mode = flags & 3; /* O_ACCMODE */
	__u8 access = 0;

	if (flags & 010000000) /* O_PATH: no access to the file's data */
		return MCPGUARD_ACCESS_READ;
	if (mode != 1) /* not O_WRONLY */
		access |= MCPGUARD_ACCESS_READ;
	if (mode != 0 || (flags & (0100 | 01000))) /* O_WRONLY, O_RDWR, O_CREAT, O_TRUNC */
		access |= MCPGUARD_ACCESS_WRITE;
	return access;
}

/*
 * What a watched file call asks of its path: the flags of an open, write for a call that changes
 * the tree (creat, truncate, mkdir, unlink, rename, link, symlink), exec for an execve. What
 * policy learn grants for a refusal (the proxy's audit log), never what is enforced.
 */
static __always_inline __u8 access_of(long nr, struct pt_regs *regs)
{
	__u64 flags = 0;

	switch (nr) {
	case MCPGUARD_NR_OPEN:
		return open_access(PT_REGS_PARM2_CORE_SYSCALL(regs));
	case MCPGUARD_NR_OPENAT:
		return open_access(PT_REGS_PARM3_CORE_SYSCALL(regs));
	case MCPGUARD_NR_OPENAT2:
		/* struct open_how starts with its u64 flags. */
		if (bpf_probe_read_user(&flags, sizeof(flags), (const void *)PT_REGS_PARM3_CORE_SYSCALL(regs)))
			return 0;
		return open_access(flags);
	case MCPGUARD_NR_EXECVE:
	case MCPGUARD_NR_EXECVEAT:
		return MCPGUARD_ACCESS_EXEC;
	case MCPGUARD_NR_CONNECT:
	case MCPGUARD_NR_SENDTO:
	case MCPGUARD_NR_SENDMSG:
		return 0;
	default:
		return MCPGUARD_ACCESS_WRITE;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(mcpguard_sys_enter, struct pt_regs *regs, long nr)
{
	struct pending *p;

	if (!watched(nr) || !guarded_cgroup())
		return 0;
	p = bpf_task_storage_get(&mcpguard_pending, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		return 0;
	p->nr = nr;
	p->user_path = NULL;
	p->user_path2 = NULL;
	p->family = 0;
	p->port = 0;
	p->has_path = 0;
	p->has_path2 = 0;
	p->access = access_of(nr, regs);
	switch (nr) {
	case MCPGUARD_NR_EXECVE:
	case MCPGUARD_NR_OPEN:
	case MCPGUARD_NR_CREAT:
	case MCPGUARD_NR_TRUNCATE:
	case MCPGUARD_NR_MKDIR:
	case MCPGUARD_NR_RMDIR:
	case MCPGUARD_NR_UNLINK:
	case MCPGUARD_NR_CHMOD:
	case MCPGUARD_NR_CHOWN:
	case MCPGUARD_NR_LCHOWN:
	case MCPGUARD_NR_UTIME:
	case MCPGUARD_NR_UTIMES:
	case MCPGUARD_NR_SETXATTR:
	case MCPGUARD_NR_LSETXATTR:
	case MCPGUARD_NR_REMOVEXATTR:
	case MCPGUARD_NR_LREMOVEXATTR:
		read_path(p, (const void *)PT_REGS_PARM1_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_FCHOWNAT:
	case MCPGUARD_NR_FUTIMESAT:
	case MCPGUARD_NR_FCHMODAT:
	case MCPGUARD_NR_FCHMODAT2:
	case MCPGUARD_NR_UTIMENSAT:
	case MCPGUARD_NR_SETXATTRAT:
	case MCPGUARD_NR_REMOVEXATTRAT:
		/* utimensat's path may be NULL: the file of its descriptor, as fchmod's, has none here. */
		if (PT_REGS_PARM2_CORE_SYSCALL(regs))
			read_path(p, (const void *)PT_REGS_PARM2_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_OPENAT:
	case MCPGUARD_NR_OPENAT2:
	case MCPGUARD_NR_EXECVEAT:
	case MCPGUARD_NR_MKDIRAT:
	case MCPGUARD_NR_UNLINKAT:
	case MCPGUARD_NR_SYMLINK:
		read_path(p, (const void *)PT_REGS_PARM2_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_SYMLINKAT:
		read_path(p, (const void *)PT_REGS_PARM3_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_RENAME:
	case MCPGUARD_NR_LINK:
		read_paths(p, (const void *)PT_REGS_PARM1_CORE_SYSCALL(regs),
			   (const void *)PT_REGS_PARM2_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_RENAMEAT:
	case MCPGUARD_NR_RENAMEAT2:
	case MCPGUARD_NR_LINKAT:
		read_paths(p, (const void *)PT_REGS_PARM2_CORE_SYSCALL(regs),
			   (const void *)PT_REGS_PARM4_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_CONNECT:
		read_sockaddr(p, (const void *)PT_REGS_PARM2_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_SENDTO:
		read_sockaddr(p, (const void *)PT_REGS_PARM5_CORE_SYSCALL(regs));
		break;
	case MCPGUARD_NR_SENDMSG: {
		struct user_msghdr *msg = (struct user_msghdr *)PT_REGS_PARM2_CORE_SYSCALL(regs);
		void *name = NULL;

		bpf_probe_read_user(&name, sizeof(name), &msg->msg_name);
		read_sockaddr(p, name);
		break;
	}
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mcpguard_sys_exit, struct pt_regs *regs, long ret)
{
	struct mcpguard_event *e;
	struct pending *p;
	long nr;

	if (ret != -EACCES && ret != -EPERM && ret != -EXDEV && ret != -EROFS)
		return 0;
	nr = SYSCALL_NR(regs);
	if (!watched(nr) || (ret == -EXDEV && !MCPGUARD_NR_TWO_PATHS(nr)) ||
	    (ret != -EROFS && metadata_call(nr)))
		return 0;
	p = bpf_task_storage_get(&mcpguard_pending, bpf_get_current_task_btf(), NULL, 0);
	if (!p || p->nr != nr)
		return 0;
	p->nr = -1;
	/*
	 * Landlock refuses files and TCP with EACCES, and only abstract unix sockets with EPERM.
	 * Another EPERM of a send or connect (a pathname unix socket's included: unix.bpf.h) is a
	 * cgroup or LSM program's refusal, and of a file the LSM program's: each sent its own deny
	 * event.
	 */
	if (ret == -EPERM && (p->user_path ? lsm_enforces : p->family != AF_UNIX || p->addr[0]))
		return 0;
	e = event_reserve(MCPGUARD_EV_DENIED);
	if (!e)
		return 0;
	e->op = nr;
	e->errno_ = -ret;
	e->access = p->access;
	e->family = p->family;
	e->port = p->port;
	__builtin_memcpy(e->addr, p->addr, sizeof(e->addr));
	if (p->has_path)
		e->has_path = bpf_probe_read_kernel_str(e->path, sizeof(e->path), p->path) > 0;
	else if (p->user_path)
		e->has_path = bpf_probe_read_user_str(e->path, sizeof(e->path), p->user_path) > 0;
	if (p->has_path2)
		e->has_path2 = bpf_probe_read_kernel_str(e->path2, sizeof(e->path2), p->path2) > 0;
	else if (p->user_path2)
		e->has_path2 = bpf_probe_read_user_str(e->path2, sizeof(e->path2), p->user_path2) > 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* New processes only: a new thread shares its parent's thread group. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(mcpguard_fork, struct task_struct *parent, struct task_struct *child)
{
	struct mcpguard_event *e;
	__u32 child_tgid = BPF_CORE_READ(child, tgid);

	if (child_tgid == BPF_CORE_READ(parent, tgid) || !guarded_cgroup())
		return 0;
	e = event_reserve(MCPGUARD_EV_FORK);
	if (!e)
		return 0;
	e->other = child_tgid;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(mcpguard_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct mcpguard_event *e;

	if (!guarded_cgroup())
		return 0;
	e = event_reserve(MCPGUARD_EV_EXEC);
	if (!e)
		return 0;
	e->other = BPF_CORE_READ(p, real_parent, tgid);
	e->has_path = bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename)) > 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Reported once per process, by the last of its threads to exit. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(mcpguard_exit, struct task_struct *p)
{
	struct mcpguard_event *e;

	if (BPF_CORE_READ(p, signal, live.counter) != 0 || !guarded_cgroup())
		return 0;
	e = event_reserve(MCPGUARD_EV_EXIT);
	if (!e)
		return 0;
	e->other = BPF_CORE_READ(p, exit_code);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
