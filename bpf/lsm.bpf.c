// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * BPF LSM enforcement for guarded cgroups, on hosts that accept LSM programs: file access by
 * inode rules, exec, and network destinations. Tasks outside the guarded cgroups are never
 * touched, and a denial by an earlier LSM is passed straight through.
 *
 * A file access is granted when the union of the rights stored for the file and for its
 * ancestor directories covers it. The walk goes up to MAX_DEPTH dentries and, where the hook
 * has a struct path, crosses from a mount's root to the directory it is mounted on. Creating,
 * removing and renaming entries need write on the directory they change. A refused call fails
 * with EPERM and sends a deny event carrying the kernel-resolved path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "common.bpf.h"
#include "net_policy.bpf.h"
#include "lsm.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define MAX_DEPTH 32

/* Kernel macros that vmlinux.h does not carry. */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define __FMODE_EXEC 0x20 /* in f_flags: the file is opened to be executed */
#define O_TRUNC 01000
#define SB_NOUSER (1U << 31) /* s_flags: a kernel-internal filesystem (pipes, sockets, memfd) */
#define S_PRIVATE (1U << 9)  /* i_flags: an inode of the kernel's own */
#define S_IFMT 0170000
#define S_IFREG 0100000
#define MSG_FASTOPEN 0x20000000
#define SIN6_LEN_RFC2133 24 /* the shortest sockaddr_in6 the kernel takes: no scope id */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCPGUARD_INODE_RULES);
	__type(key, struct mcpguard_inode_key);
	__type(value, __u8);
} mcpguard_inodes SEC(".maps");

/*
 * Scratch for an event's path: the walk records each step's name (none for a mount crossing),
 * then the names are joined root first. The buffer is twice the path length so that every
 * masked offset plus a masked length stays inside it.
 */
struct path_scratch {
	const unsigned char *name[MAX_DEPTH];
	__u32 len[MAX_DEPTH];
	char buf[2 * MCPGUARD_PATH_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} mcpguard_path_scratch SEC(".maps");

static __always_inline struct mount *real_mount(struct vfsmount *mnt)
{
	return (struct mount *)((char *)mnt - bpf_core_field_offset(struct mount, mnt));
}

static __always_inline __u8 rights_of(__u64 cgroup_id, struct dentry *d)
{
	struct mcpguard_inode_key key = {
		.cgroup_id = cgroup_id,
		.ino = BPF_CORE_READ(d, d_inode, i_ino),
		.dev = BPF_CORE_READ(d, d_sb, s_dev),
	};
	__u8 *rights = bpf_map_lookup_elem(&mcpguard_inodes, &key);

	return rights ? *rights : 0;
}

/*
 * Where step_up went. STEP_PARENT passes the name of the dentry left, STEP_MOUNT passes none.
 * STEP_DETACHED ends the walk at a dentry outside any directory tree (a memfd, say), whose own
 * name is still its path.
 */
enum step { STEP_TOP, STEP_DETACHED, STEP_PARENT, STEP_MOUNT };

/*
 * Move *d to its parent directory. At the root of a mount, move to the directory it is mounted
 * on instead. Without a mount (mnt NULL) the walk ends at the root of the filesystem.
 */
static __always_inline enum step step_up(struct dentry **d, struct mount **mnt)
{
	struct dentry *parent;

	if (*mnt && *d == BPF_CORE_READ(*mnt, mnt.mnt_root)) {
		struct mount *below = BPF_CORE_READ(*mnt, mnt_parent);

		if (below == *mnt)
			return STEP_TOP;
		*d = BPF_CORE_READ(*mnt, mnt_mountpoint);
		*mnt = below;
		return STEP_MOUNT;
	}
	parent = BPF_CORE_READ(*d, d_parent);
	if (parent == *d)
		return *mnt ? STEP_DETACHED : STEP_TOP;
	*d = parent;
	return STEP_PARENT;
}

static __always_inline bool allowed(__u64 cgroup_id, struct dentry *d, struct mount *mnt, __u8 need)
{
	__u8 granted = 0;

	for (int i = 0; i < MAX_DEPTH; i++) {
		granted |= rights_of(cgroup_id, d);
		if ((granted & need) == need)
			return true;
		if (step_up(&d, &mnt) <= STEP_DETACHED)
			return false;
	}
	return false;
}

/*
 * The path of d as the walk sees it: absolute when a mount is known, else from the root of its
 * filesystem. Of a path longer than the event's field the leading components are kept, of one
 * deeper than MAX_DEPTH the last MAX_DEPTH.
 */
static __always_inline void put_path(struct mcpguard_event *e, struct dentry *d, struct mount *mnt)
{
	const __u32 mask = MCPGUARD_PATH_LEN - 1;
	__u32 zero = 0, off = 0;
	struct path_scratch *s = bpf_map_lookup_elem(&mcpguard_path_scratch, &zero);

	if (!s)
		return;
	/* Nothing but the scratch itself carries over from the walk: the verifier can merge its exits. */
	__builtin_memset(s->len, 0, sizeof(s->len));
	for (int i = 0; i < MAX_DEPTH; i++) {
		struct dentry *child = d;
		enum step step = step_up(&d, &mnt);

		if (step == STEP_TOP)
			break;
		s->name[i] = step == STEP_MOUNT ? NULL : BPF_CORE_READ(child, d_name.name);
		s->len[i] = step == STEP_MOUNT ? 0 : BPF_CORE_READ(child, d_name.len);
		if (step == STEP_DETACHED)
			break;
	}
	for (int i = MAX_DEPTH - 1; i >= 0; i--) {
		__u32 len = s->len[i], end = off + 1 + len;

		if (!len)
			continue;
		if (end >= MCPGUARD_PATH_LEN)
			break;
		s->buf[off & mask] = '/';
		bpf_probe_read_kernel(&s->buf[(off + 1) & mask], len & mask, s->name[i]);
		/*
		 * end < MCPGUARD_PATH_LEN already; the mask (kept by the barrier) tells the verifier
		 * too, so that the iterations' states merge.
		 */
		off = end;
		barrier_var(off);
		off &= mask;
	}
	if (!off)
		s->buf[off++] = '/';
	s->buf[off & mask] = 0;
	e->has_path = bpf_probe_read_kernel_str(e->path, sizeof(e->path), s->buf) > 0;
}

static __always_inline int deny_file(__u16 op, __u8 need, struct dentry *d, struct mount *mnt)
{
	struct mcpguard_event *e = event_reserve(MCPGUARD_EV_DENY);

	if (e) {
		e->backend = MCPGUARD_BACKEND_BPF_LSM;
		e->op = op;
		e->access = need;
		put_path(e, d, mnt);
		bpf_ringbuf_submit(e, 0);
	}
	return -EPERM;
}

/* Write on dir (a struct path) to change its entry dentry. */
static __always_inline int judge_entry(__u16 op, const struct path *dir, struct dentry *dentry)
{
	__u64 cgroup_id = guarded_cgroup();
	struct mount *mnt;

	if (!cgroup_id)
		return 0;
	mnt = real_mount(BPF_CORE_READ(dir, mnt));
	if (allowed(cgroup_id, BPF_CORE_READ(dir, dentry), mnt, MCPGUARD_ACCESS_WRITE))
		return 0;
	return deny_file(op, MCPGUARD_ACCESS_WRITE, dentry, mnt);
}

SEC("lsm/file_open")
int BPF_PROG(mcpguard_file_open, struct file *file, int ret)
{
	unsigned int flags, mode;
	struct dentry *d;
	struct mount *mnt;
	__u64 cgroup_id;
	__u8 need = 0;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	d = BPF_CORE_READ(file, f_path.dentry);
	/*
	 * As Landlock does, files without a place in the user-visible tree pass: a pipe reopened
	 * through /proc/self/fd, say. Executing one (a memfd) is still judged by bprm_check_security.
	 */
	if ((BPF_CORE_READ(d, d_sb, s_flags) & SB_NOUSER) || (BPF_CORE_READ(d, d_inode, i_flags) & S_PRIVATE))
		return 0;
	flags = BPF_CORE_READ(file, f_flags);
	mode = BPF_CORE_READ(file, f_mode);
	mnt = real_mount(BPF_CORE_READ(file, f_path.mnt));
	/* As Landlock does: reading, writing (or truncating on open) and executing. */
	if (mode & FMODE_READ)
		need |= MCPGUARD_ACCESS_READ;
	if ((mode & FMODE_WRITE) || (flags & O_TRUNC))
		need |= MCPGUARD_ACCESS_WRITE;
	if (flags & __FMODE_EXEC)
		need |= MCPGUARD_ACCESS_EXEC;
	if (!need)
		need = MCPGUARD_ACCESS_READ;
	if (allowed(cgroup_id, d, mnt, need))
		return 0;
	return deny_file(MCPGUARD_OP_FILE_OPEN, need, d, mnt);
}

/* Only the directory's inode is known here: the walk stays within its filesystem. */
SEC("lsm/inode_create")
int BPF_PROG(mcpguard_inode_create, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
	__u64 cgroup_id;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	if (allowed(cgroup_id, BPF_CORE_READ(dentry, d_parent), NULL, MCPGUARD_ACCESS_WRITE))
		return 0;
	return deny_file(MCPGUARD_OP_INODE_CREATE, MCPGUARD_ACCESS_WRITE, dentry, NULL);
}

SEC("lsm/path_truncate")
int BPF_PROG(mcpguard_path_truncate, const struct path *path, int ret)
{
	struct dentry *d;
	struct mount *mnt;
	__u64 cgroup_id;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	d = BPF_CORE_READ(path, dentry);
	mnt = real_mount(BPF_CORE_READ(path, mnt));
	if (allowed(cgroup_id, d, mnt, MCPGUARD_ACCESS_WRITE))
		return 0;
	return deny_file(MCPGUARD_OP_PATH_TRUNCATE, MCPGUARD_ACCESS_WRITE, d, mnt);
}

SEC("lsm/path_unlink")
int BPF_PROG(mcpguard_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ?: judge_entry(MCPGUARD_OP_PATH_UNLINK, dir, dentry);
}

SEC("lsm/path_rmdir")
int BPF_PROG(mcpguard_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ?: judge_entry(MCPGUARD_OP_PATH_RMDIR, dir, dentry);
}

SEC("lsm/path_mkdir")
int BPF_PROG(mcpguard_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode, int ret)
{
	return ret ?: judge_entry(MCPGUARD_OP_PATH_MKDIR, dir, dentry);
}

/* Regular files (also those made by open with O_CREAT) are judged by inode_create. */
SEC("lsm/path_mknod")
int BPF_PROG(mcpguard_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	if (ret)
		return ret;
	if ((mode & S_IFMT) == S_IFREG || (mode & S_IFMT) == 0)
		return 0;
	return judge_entry(MCPGUARD_OP_PATH_MKNOD, dir, dentry);
}

SEC("lsm/path_symlink")
int BPF_PROG(mcpguard_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name, int ret)
{
	return ret ?: judge_entry(MCPGUARD_OP_PATH_SYMLINK, dir, dentry);
}

/* A hard link needs write on both directories: it cannot pull a file out of a tree it may not change. */
SEC("lsm/path_link")
int BPF_PROG(mcpguard_path_link, struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry,
	     int ret)
{
	struct mount *mnt;
	__u64 cgroup_id;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	mnt = real_mount(BPF_CORE_READ(new_dir, mnt));
	if (!allowed(cgroup_id, BPF_CORE_READ(old_dentry, d_parent), mnt, MCPGUARD_ACCESS_WRITE))
		return deny_file(MCPGUARD_OP_PATH_LINK, MCPGUARD_ACCESS_WRITE, old_dentry, mnt);
	return judge_entry(MCPGUARD_OP_PATH_LINK, new_dir, new_dentry);
}

SEC("lsm/path_rename")
int BPF_PROG(mcpguard_path_rename, const struct path *old_dir, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, unsigned int flags, int ret)
{
	return ret ?: judge_entry(MCPGUARD_OP_PATH_RENAME, old_dir, old_dentry) ?:
		      judge_entry(MCPGUARD_OP_PATH_RENAME, new_dir, new_dentry);
}

/* Every binary the exec runs, the script interpreter of a #! file included. */
SEC("lsm/bprm_check_security")
int BPF_PROG(mcpguard_bprm_check_security, struct linux_binprm *bprm, int ret)
{
	struct dentry *d;
	struct mount *mnt;
	__u64 cgroup_id;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	d = BPF_CORE_READ(bprm, file, f_path.dentry);
	mnt = real_mount(BPF_CORE_READ(bprm, file, f_path.mnt));
	if (allowed(cgroup_id, d, mnt, MCPGUARD_ACCESS_EXEC))
		return 0;
	return deny_file(MCPGUARD_OP_BPRM_CHECK_SECURITY, MCPGUARD_ACCESS_EXEC, d, mnt);
}

/*
 * An IPv4 or IPv6 destination of an inet socket, by the allow maps of net.bpf.c. Other socket
 * families (unix, netlink) pass. AF_UNSPEC is a disconnect for connect and "no address" for a
 * send on an IPv6 socket, and passes; a send on an IPv4 socket takes it as AF_INET.
 */
static __always_inline int judge_sockaddr(__u16 op, __u64 cgroup_id, struct socket *sock,
					  struct sockaddr *address, int addrlen)
{
	__u16 sk_family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
	__u16 family = BPF_CORE_READ(address, sa_family);
	struct mcpguard_event *e;
	__u32 addr[4] = {};
	__u16 port = 0;

	if (sk_family != AF_INET && sk_family != AF_INET6)
		return 0;
	if (family == AF_UNSPEC) {
		if (op == MCPGUARD_OP_SOCKET_CONNECT || sk_family == AF_INET6)
			return 0;
		family = AF_INET;
	}
	if (family == AF_INET && addrlen >= (int)sizeof(struct sockaddr_in)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)address;

		addr[0] = BPF_CORE_READ(sin, sin_addr.s_addr);
		port = bpf_ntohs(BPF_CORE_READ(sin, sin_port));
		/* Port 53 goes to the proxy's resolver: the cgroup hooks redirect it (net.bpf.c). */
		if (net4_allowed(cgroup_id, addr[0], port) || dns_redirect(cgroup_id, port))
			return 0;
	} else if (family == AF_INET6 && addrlen >= SIN6_LEN_RFC2133) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)address;

		bpf_probe_read_kernel(addr, sizeof(addr), &sin6->sin6_addr);
		port = bpf_ntohs(BPF_CORE_READ(sin6, sin6_port));
		if (net6_allowed(cgroup_id, addr, port) || dns_redirect(cgroup_id, port))
			return 0;
	}
	e = event_reserve(MCPGUARD_EV_DENY);
	if (e) {
		e->backend = MCPGUARD_BACKEND_BPF_LSM;
		e->op = op;
		e->family = family;
		e->sock_type = BPF_CORE_READ(sock, type);
		e->protocol = BPF_CORE_READ(sock, sk, sk_protocol);
		e->port = port;
		__builtin_memcpy(e->addr, addr, sizeof(e->addr));
		bpf_ringbuf_submit(e, 0);
	}
	return -EPERM;
}

SEC("lsm/socket_connect")
int BPF_PROG(mcpguard_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	__u64 cgroup_id;

	if (ret)
		return ret;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	return judge_sockaddr(MCPGUARD_OP_SOCKET_CONNECT, cgroup_id, sock, address, addrlen);
}

/* Raw, packet and ICMP sockets, as net.bpf.c refuses them; this hook sees every family. */
SEC("lsm/socket_create")
int BPF_PROG(mcpguard_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct mcpguard_event *e;

	if (ret)
		return ret;
	if (kern || !socket_refused(family, type, protocol) || !guarded_cgroup())
		return 0;
	e = event_reserve(MCPGUARD_EV_DENY);
	if (e) {
		e->backend = MCPGUARD_BACKEND_BPF_LSM;
		e->op = MCPGUARD_OP_SOCKET_CREATE;
		e->family = family;
		e->sock_type = type;
		e->protocol = protocol;
		bpf_ringbuf_submit(e, 0);
	}
	return -EPERM;
}

/*
 * A send that names a destination. A connected socket was judged at connect; TCP ignores the
 * address except for Fast Open, which connects without the connect hook.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(mcpguard_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct sockaddr *address;
	__u64 cgroup_id;

	if (ret)
		return ret;
	address = BPF_CORE_READ(msg, msg_name);
	if (!address)
		return 0;
	if (BPF_CORE_READ(sock, type) == SOCK_STREAM && !(BPF_CORE_READ(msg, msg_flags) & MSG_FASTOPEN))
		return 0;
	cgroup_id = guarded_cgroup();
	if (!cgroup_id)
		return 0;
	return judge_sockaddr(MCPGUARD_OP_SOCKET_SENDMSG, cgroup_id, sock, address, BPF_CORE_READ(msg, msg_namelen));
}
