/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Pathname unix sockets of a guarded cgroup, enforced at the cgroup-v2 unix socket hooks (kernel
 * 6.7): a connect, or a datagram sent to a named address, passes only to a socket path the policy
 * names; any other fails with EPERM and sends a deny event. Landlock (ABI 7) mediates neither.
 * The server cannot bind a pathname socket itself (its ruleset grants no make_sock), so every one
 * it could reach is another program's: a container daemon's, a D-Bus bus, an ssh agent, a
 * database. Abstract names (a first byte of NUL) pass here: Landlock's scope keeps the server to
 * its own domain's.
 *
 * The path is judged as the kernel will read it, the bytes of sun_path up to the first NUL or the
 * address's end, before the kernel looks it up: a name compared as a string. That is exact
 * because a run admits only absolute, normal paths whose walk, symlinks followed, passes through
 * no procfs and no folder the server may write (packages/kernel/src/sockets.ts), and the server
 * cannot change its root (the launcher drops CAP_SYS_CHROOT): no symlink or socket of its making
 * can stand in for one, and another spelling (a relative path, `..`, `//`) is refused, not
 * resolved.
 *
 * Included by telemetry.bpf.c: these programs read the kernel's context through its BTF
 * (bpf_cast_to_kern_ctx, CO-RE), which libbpf parses once per object, about 12 ms of every L3
 * start for an object of their own. libbpf 1.1 does not know their section names: the loader
 * sets their type and attach point, or leaves them out where the kernel has no unix hooks
 * (telemetry.c).
 */
#include "unix.h"

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct mcpguard_unix_key);
	__type(value, __u8);
} mcpguard_unix_allow SEC(".maps");

#define UNIX_REFUSE 0
#define UNIX_PASS 1

static __always_inline int judge_unix(struct bpf_sock_addr *ctx, __u16 op)
{
	struct bpf_sock_addr_kern *kern = bpf_cast_to_kern_ctx(ctx);
	struct mcpguard_unix_key key;
	struct mcpguard_event *e;
	struct sockaddr_un *addr;
	__u32 len, size;

	__builtin_memset(&key, 0, sizeof(key));
	/* Before the policy fills the maps, and for a task outside the guarded cgroup: refused. */
	key.cgroup_id = guarded_cgroup();
	len = BPF_CORE_READ(kern, uaddrlen);
	addr = (struct sockaddr_un *)BPF_CORE_READ(kern, uaddr);
	if (len <= offsetof(struct sockaddr_un, sun_path))
		return key.cgroup_id ? UNIX_PASS : UNIX_REFUSE; /* no name */
	/*
	 * The name's bytes up to a NUL or the address's end, at most 108, and a NUL after them. The
	 * address lies in the kernel's sockaddr_storage (128 bytes).
	 */
	size = len - offsetof(struct sockaddr_un, sun_path) + 1;
	if (size > MCPGUARD_UNIX_PATH_LEN + 1)
		size = MCPGUARD_UNIX_PATH_LEN + 1;
	if (bpf_probe_read_kernel_str(key.path, size, addr->sun_path) < 0)
		return UNIX_REFUSE;
	if (key.path[0] == '\0')
		return key.cgroup_id ? UNIX_PASS : UNIX_REFUSE; /* an abstract name */
	if (key.cgroup_id && bpf_map_lookup_elem(&mcpguard_unix_allow, &key))
		return UNIX_PASS;
	e = event_reserve(MCPGUARD_EV_DENY);
	if (e) {
		e->backend = MCPGUARD_BACKEND_CGROUP_BPF;
		e->op = op;
		e->family = AF_UNIX;
		e->sock_type = ctx->type;
		__builtin_memcpy(e->path, key.path, sizeof(key.path));
		e->has_path = 1;
		bpf_ringbuf_submit(e, 0);
	}
	return UNIX_REFUSE;
}

SEC("cgroup/connect_unix")
int mcpguard_connect_unix(struct bpf_sock_addr *ctx)
{
	return judge_unix(ctx, MCPGUARD_OP_CONNECT_UNIX);
}

SEC("cgroup/sendmsg_unix")
int mcpguard_sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return judge_unix(ctx, MCPGUARD_OP_SENDMSG_UNIX);
}
