// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Network egress of a guarded cgroup, enforced at the cgroup-v2 socket hooks: a connect or an
 * unconnected send passes only to an address (and port) the policy allows for the task's cgroup,
 * and raw and ICMP sockets, whose traffic passes none of the address hooks, cannot be created.
 * A refused call fails with EPERM and sends a deny event. The programs are attached to the
 * guarded cgroup, so they only ever see its sockets; a task whose cgroup has no rules (a child
 * cgroup, a socket handed outside) is refused.
 *
 * sendmsg4/6 run for UDP sends that name a destination; a connected socket was judged at
 * connect. TCP Fast Open (sendto with MSG_FASTOPEN) goes through connect4/6.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.bpf.h"
#include "net_policy.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define SK_REFUSE 0
#define SK_PASS 1

/* addr_len: 4 (IPv4), 16 (IPv6) or 0 (no address). */
static __always_inline void report(__u16 op, __u16 family, __u16 type, __u16 protocol, const void *addr,
				   __u32 addr_len, __u16 port)
{
	struct mcpguard_event *e = event_reserve(MCPGUARD_EV_DENY);

	if (!e)
		return;
	e->backend = MCPGUARD_BACKEND_CGROUP_BPF;
	e->op = op;
	e->family = family;
	e->sock_type = type;
	e->protocol = protocol;
	e->port = port;
	if (addr_len == 4)
		__builtin_memcpy(e->addr, addr, 4);
	else if (addr_len == 16)
		__builtin_memcpy(e->addr, addr, 16);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int judge4(struct bpf_sock_addr *ctx, __u16 op)
{
	__u32 addr = ctx->user_ip4;
	__u16 port = bpf_ntohs(ctx->user_port);

	if (net4_allowed(bpf_get_current_cgroup_id(), addr, port))
		return SK_PASS;
	report(op, AF_INET, ctx->type, ctx->protocol, &addr, 4, port);
	return SK_REFUSE;
}

static __always_inline int judge6(struct bpf_sock_addr *ctx, __u16 op)
{
	__u32 addr[4];
	__u16 port = bpf_ntohs(ctx->user_port);

	/* Each word is its own context load: the verifier allows 4-byte reads of user_ip6. */
	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
	if (net6_allowed(bpf_get_current_cgroup_id(), addr, port))
		return SK_PASS;
	report(op, AF_INET6, ctx->type, ctx->protocol, addr, 16, port);
	return SK_REFUSE;
}

SEC("cgroup/connect4")
int mcpguard_connect4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx, MCPGUARD_OP_CONNECT4);
}

SEC("cgroup/connect6")
int mcpguard_connect6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx, MCPGUARD_OP_CONNECT6);
}

SEC("cgroup/sendmsg4")
int mcpguard_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx, MCPGUARD_OP_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int mcpguard_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx, MCPGUARD_OP_SENDMSG6);
}

/*
 * The kernel runs this hook for IPv4 and IPv6 sockets only: packet sockets (which need
 * CAP_NET_RAW) are refused by lsm.bpf.c where BPF LSM works.
 */
SEC("cgroup/sock_create")
int mcpguard_sock_create(struct bpf_sock *ctx)
{
	__u32 family = ctx->family, type = ctx->type, protocol = ctx->protocol;

	if (!socket_refused(family, type, protocol))
		return SK_PASS;
	report(MCPGUARD_OP_SOCK_CREATE, family, type, protocol, NULL, 0, 0);
	return SK_REFUSE;
}
