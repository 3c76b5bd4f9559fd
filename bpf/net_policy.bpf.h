/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The network allow maps and their lookup, shared by the cgroup hooks (net.bpf.c) and the LSM
 * socket hooks (lsm.bpf.c). An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as the IPv4
 * address it carries, so a v6 socket cannot reach a v4 destination the v4 rules refuse.
 */
#ifndef MCPGUARD_NET_POLICY_BPF_H
#define MCPGUARD_NET_POLICY_BPF_H

#include "net.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCPGUARD_NET_RULES);
	__type(key, struct mcpguard_net4_key);
	__type(value, __u8);
} mcpguard_allow4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCPGUARD_NET_RULES);
	__type(key, struct mcpguard_net6_key);
	__type(value, __u8);
} mcpguard_allow6 SEC(".maps");

/* The resolver each guarded cgroup's port-53 traffic goes to (net.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCPGUARD_MAX_GUARDED);
	__type(key, __u64);
	__type(value, struct mcpguard_dns_value);
} mcpguard_dns SEC(".maps");

/* Where a cgroup's traffic to `port` is redirected: its resolver for port 53, else NULL. */
static __always_inline struct mcpguard_dns_value *dns_redirect(__u64 cgroup_id, __u16 port)
{
	return port == 53 ? bpf_map_lookup_elem(&mcpguard_dns, &cgroup_id) : NULL;
}

/* addr in network byte order, port in host byte order. */
static __always_inline bool net4_allowed(__u64 cgroup_id, __u32 addr, __u16 port)
{
	struct mcpguard_net4_key key = { .cgroup_id = cgroup_id, .addr = addr, .port = port };

	if (bpf_map_lookup_elem(&mcpguard_allow4, &key))
		return true;
	key.port = 0;
	return bpf_map_lookup_elem(&mcpguard_allow4, &key) != NULL;
}

static __always_inline bool ip6_is_v4_mapped(const __u32 addr[4])
{
	return addr[0] == 0 && addr[1] == 0 && addr[2] == bpf_htonl(0xffff);
}

/* addr as four network-order words, port in host byte order. */
static __always_inline bool net6_allowed(__u64 cgroup_id, const __u32 addr[4], __u16 port)
{
	struct mcpguard_net6_key key = { .cgroup_id = cgroup_id, .port = port };

	if (ip6_is_v4_mapped(addr))
		return net4_allowed(cgroup_id, addr[3], port);
	__builtin_memcpy(key.addr, addr, sizeof(key.addr));
	if (bpf_map_lookup_elem(&mcpguard_allow6, &key))
		return true;
	key.port = 0;
	return bpf_map_lookup_elem(&mcpguard_allow6, &key) != NULL;
}

/*
 * Sockets a guarded task may not create: raw and packet sockets bypass the address hooks
 * entirely, and so do the sends of ICMP datagram ("ping") sockets.
 */
static __always_inline bool socket_refused(__u32 family, __u32 type, __u32 protocol)
{
	return type == SOCK_RAW || family == AF_PACKET || (family == AF_INET && protocol == IPPROTO_ICMP) ||
	       (family == AF_INET6 && protocol == IPPROTO_ICMPV6);
}

#endif
