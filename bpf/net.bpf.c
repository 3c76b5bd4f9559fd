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
 *
 * DNS is names, not a port: where the policy names a host, the loader gives the cgroup a resolver
 * the proxy runs (mcpguard_dns), and every connect or send to port 53, whatever the address, goes
 * there instead: the resolver answers only for the names the policy grants and refuses everything
 * else, non-DNS payloads included. The destination the socket asked for is kept by its cookie, and
 * recvmsg4/6 and getpeername4/6 show it back in place of the resolver's, since stub resolvers
 * (the C library's, c-ares) drop an answer that comes from another address than they asked.
 */
/*
 * The UAPI's context types, not vmlinux.h's: these programs read only bpf_sock_addr and bpf_sock,
 * whose layout is the kernel's ABI, so they carry no CO-RE relocation and libbpf loads them without
 * parsing the kernel's BTF (about 8 ms of every L3 start; the telemetry programs still need it).
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.bpf.h"
/* From the C library's headers in user space (vmlinux.h has it as an enum). */
#define SOCK_RAW 3
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

/* What a redirected socket asked for, by its cookie (read back by recvmsg and getpeername). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct mcpguard_dns_orig);
} mcpguard_dns_orig SEC(".maps");

static __always_inline void remember(struct bpf_sock_addr *ctx, __u16 family, const __u32 addr[4])
{
	struct mcpguard_dns_orig orig = { .port = 53, .family = family };
	__u64 cookie = bpf_get_socket_cookie(ctx);

	__builtin_memcpy(orig.addr, addr, sizeof(orig.addr));
	bpf_map_update_elem(&mcpguard_dns_orig, &cookie, &orig, BPF_ANY);
}

static __always_inline int judge4(struct bpf_sock_addr *ctx, __u16 op)
{
	__u32 addr[4] = { ctx->user_ip4 };
	__u16 port = bpf_ntohs(ctx->user_port);
	__u64 cgroup_id = bpf_get_current_cgroup_id();
	struct mcpguard_dns_value *dns = dns_redirect(cgroup_id, port);

	if (dns && dns->port4) {
		remember(ctx, AF_INET, addr);
		ctx->user_ip4 = dns->ip4;
		ctx->user_port = bpf_htons(dns->port4);
		return SK_PASS;
	}
	if (!dns && net4_allowed(cgroup_id, addr[0], port))
		return SK_PASS;
	report(op, AF_INET, ctx->type, ctx->protocol, addr, 4, port);
	return SK_REFUSE;
}

static __always_inline int judge6(struct bpf_sock_addr *ctx, __u16 op)
{
	__u32 addr[4];
	__u16 port = bpf_ntohs(ctx->user_port);
	__u64 cgroup_id = bpf_get_current_cgroup_id();
	struct mcpguard_dns_value *dns = dns_redirect(cgroup_id, port);

	/* Each word is its own context load: the verifier allows 4-byte reads of user_ip6. */
	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
	if (dns && ip6_is_v4_mapped(addr) && dns->port4) {
		/* A dual-stack socket keeps to IPv4: the resolver's IPv4 address, mapped. */
		remember(ctx, AF_INET6, addr);
		ctx->user_ip6[3] = dns->ip4;
		ctx->user_port = bpf_htons(dns->port4);
		return SK_PASS;
	}
	if (dns && !ip6_is_v4_mapped(addr) && dns->port6) {
		remember(ctx, AF_INET6, addr);
		ctx->user_ip6[0] = dns->ip6[0];
		ctx->user_ip6[1] = dns->ip6[1];
		ctx->user_ip6[2] = dns->ip6[2];
		ctx->user_ip6[3] = dns->ip6[3];
		ctx->user_port = bpf_htons(dns->port6);
		return SK_PASS;
	}
	if (!dns && net6_allowed(cgroup_id, addr, port))
		return SK_PASS;
	report(op, AF_INET6, ctx->type, ctx->protocol, addr, 16, port);
	return SK_REFUSE;
}

/*
 * The address a redirected socket sees as its peer (a datagram's source, getpeername): the one it
 * asked for, in place of the resolver's. Anything else passes as it is. These hooks must return 1.
 */
static __always_inline int restore4(struct bpf_sock_addr *ctx)
{
	__u64 cgroup_id = bpf_get_current_cgroup_id(), cookie;
	struct mcpguard_dns_value *dns = bpf_map_lookup_elem(&mcpguard_dns, &cgroup_id);
	struct mcpguard_dns_orig *orig;

	if (!dns || !dns->port4 || ctx->user_ip4 != dns->ip4 || ctx->user_port != bpf_htons(dns->port4))
		return SK_PASS;
	cookie = bpf_get_socket_cookie(ctx);
	orig = bpf_map_lookup_elem(&mcpguard_dns_orig, &cookie);
	if (orig && orig->family == AF_INET) {
		ctx->user_ip4 = orig->addr[0];
		ctx->user_port = bpf_htons(orig->port);
	}
	return SK_PASS;
}

static __always_inline int restore6(struct bpf_sock_addr *ctx)
{
	__u64 cgroup_id = bpf_get_current_cgroup_id(), cookie;
	struct mcpguard_dns_value *dns = bpf_map_lookup_elem(&mcpguard_dns, &cgroup_id);
	struct mcpguard_dns_orig *orig;
	__u32 addr[4];
	__u16 port = bpf_ntohs(ctx->user_port);
	bool mapped, resolver;

	if (!dns)
		return SK_PASS;
	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
	mapped = ip6_is_v4_mapped(addr);
	resolver = mapped ? dns->port4 && addr[3] == dns->ip4 && port == dns->port4
			  : dns->port6 && port == dns->port6 && addr[0] == dns->ip6[0] && addr[1] == dns->ip6[1] &&
				    addr[2] == dns->ip6[2] && addr[3] == dns->ip6[3];
	if (!resolver)
		return SK_PASS;
	cookie = bpf_get_socket_cookie(ctx);
	orig = bpf_map_lookup_elem(&mcpguard_dns_orig, &cookie);
	if (orig && orig->family == AF_INET6) {
		ctx->user_ip6[0] = orig->addr[0];
		ctx->user_ip6[1] = orig->addr[1];
		ctx->user_ip6[2] = orig->addr[2];
		ctx->user_ip6[3] = orig->addr[3];
		ctx->user_port = bpf_htons(orig->port);
	}
	return SK_PASS;
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

SEC("cgroup/recvmsg4")
int mcpguard_recvmsg4(struct bpf_sock_addr *ctx)
{
	return restore4(ctx);
}

SEC("cgroup/recvmsg6")
int mcpguard_recvmsg6(struct bpf_sock_addr *ctx)
{
	return restore6(ctx);
}

SEC("cgroup/getpeername4")
int mcpguard_getpeername4(struct bpf_sock_addr *ctx)
{
	return restore4(ctx);
}

SEC("cgroup/getpeername6")
int mcpguard_getpeername6(struct bpf_sock_addr *ctx)
{
	return restore6(ctx);
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
