/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Maps and helpers every program object shares. Each object carries its own definition; the
 * loader creates them once (with the net programs) and hands the same map to the other objects,
 * so definitions here must stay identical for all of them.
 */
#ifndef MCPGUARD_COMMON_BPF_H
#define MCPGUARD_COMMON_BPF_H

#include "events.h"

/* UAPI macros that vmlinux.h does not carry. */
#define EPERM 1
#define EACCES 13
#define EXDEV 18
#define EROFS 30
#define AF_UNSPEC 0
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define AF_PACKET 17
#define IPPROTO_ICMPV6 58

#define MCPGUARD_MAX_GUARDED 64

/* Violations and telemetry, to the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} mcpguard_events SEC(".maps");

/* cgroup ids (the inode number of the cgroup2 directory) whose tasks are guarded. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MCPGUARD_MAX_GUARDED);
	__type(key, __u64);
	__type(value, __u8);
} mcpguard_guarded SEC(".maps");

/* The current task's cgroup id when that cgroup is guarded, else 0. */
static __always_inline __u64 guarded_cgroup(void)
{
	__u64 id = bpf_get_current_cgroup_id();

	return bpf_map_lookup_elem(&mcpguard_guarded, &id) ? id : 0;
}

/* A zeroed record of the given type for the current task, or NULL when the buffer is full. */
static __always_inline struct mcpguard_event *event_reserve(__u8 type)
{
	struct mcpguard_event *e = bpf_ringbuf_reserve(&mcpguard_events, sizeof(*e), 0);

	if (!e)
		return NULL;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

#endif
