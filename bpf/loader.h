/* SPDX-License-Identifier: MIT */
/* The parts of mcpguard-loader and what they share. */
#ifndef MCPGUARD_LOADER_H
#define MCPGUARD_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_link;
struct bpf_map;
struct bpf_object;
struct net_bpf;
struct telemetry_bpf;
struct lsm_bpf;

/* Print `mcpguard-loader: <message>` on stderr and exit 1. */
__attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...);

/*
 * attach.c: the programs of loaded objects, attached. A cgroup program is attached to the
 * cgroup itself (link NULL, prog_fd and type set) and stays after the loader exits; the others
 * through a BPF link, which detaches when destroyed or when the loader exits.
 */
#define MAX_LINKS 32
struct links {
	struct bpf_link *link[MAX_LINKS];
	int prog_fd[MAX_LINKS];	       /* a cgroup attachment's program, else -1 */
	int type[MAX_LINKS];	       /* its enum bpf_attach_type */
	const char *name[MAX_LINKS];   /* section names, owned by the objects */
	int cgroup_fd;
	int n;
};
/* Attach every loaded program of obj (cgroup programs to cgroup_fd). 0 or -errno, naming the program in *failed. */
int attach_programs(struct bpf_object *obj, int cgroup_fd, struct links *links, const char **failed);
/* Destroy the BPF links; the cgroup attachments stay. */
void detach_links(struct links *links);
/* Detach everything, cgroup attachments included (the probe's scratch cgroup). */
void detach_all(struct links *links);

/*
 * net.c, telemetry.c, lsm.c: open and load one object; 0 or -errno. The telemetry and LSM
 * objects use the maps of an already loaded net object (events, guarded cgroups, allow lists),
 * or maps of their own when net is NULL. With lsm_enforces the telemetry leaves out the EPERM
 * failures of file syscalls, which the LSM programs report themselves. With unix_sockets the telemetry
 * object also carries the pathname unix socket programs (unix.bpf.h, kernel 6.7), which attach to
 * the cgroup; without, they are not loaded.
 */
int net_load(struct net_bpf **skel);
void net_destroy(struct net_bpf *skel);
struct bpf_object *net_object(struct net_bpf *skel);
int telemetry_load(struct telemetry_bpf **skel, struct net_bpf *net, bool lsm_enforces, bool unix_sockets);
void telemetry_destroy(struct telemetry_bpf *skel);
struct bpf_object *telemetry_object(struct telemetry_bpf *skel);
int lsm_load(struct lsm_bpf **skel, struct net_bpf *net);
void lsm_destroy(struct lsm_bpf *skel);
struct bpf_object *lsm_object(struct lsm_bpf *skel);

/*
 * The maps of a loaded set: the policy fills all but events; inodes is NULL without --lsm, and
 * unix_allow without --unix.
 */
struct policy_maps {
	struct bpf_map *guarded, *allow4, *allow6, *dns, *inodes, *unix_allow, *events;
};
void net_maps(struct net_bpf *skel, struct policy_maps *maps);
struct bpf_map *telemetry_unix(struct telemetry_bpf *skel);
struct bpf_map *lsm_inodes(struct lsm_bpf *skel);

/* policy.c */
struct policy;
struct policy *policy_read(const char *file);
void policy_apply(const struct policy *policy, uint64_t cgroup_id, const struct policy_maps *maps);

/* cgroup.c */
int cgroup_open(const char *dir, uint64_t *id);
/* Wait (at most timeout_ms) until the cgroup holds no process or is gone, passing events on. */
struct ring_buffer;
void cgroup_wait_empty(int cgroup_fd, struct ring_buffer *rb, int timeout_ms);
int cgroup2_mount(char *buf, size_t len);

/* probe.c: `--probe`, one JSON line on stdout. */
int probe_run(void);

/* emit.c: JSON lines on stdout, each flushed. */
/*
 * The ready event: the cgroup, the attached programs, and how long the start took in ms since the
 * loader began: `loaded` once its programs were loaded and verified, `policy` once it had read the
 * policy, `attached` once its programs were attached (the proxy's start record shows them).
 */
void emit_ready(uint64_t cgroup_id, const struct links *links, bool lsm, const double ms[3]);
int emit_event(void *ctx, void *data, size_t size);

#endif
