// SPDX-License-Identifier: MIT
/* Loading the cgroup socket programs (net.bpf.c); their object owns the shared maps. */
#include <errno.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "net.skel.h"

int net_load(struct net_bpf **skel)
{
	int err;

	*skel = net_bpf__open();
	if (!*skel)
		return -errno;
	err = net_bpf__load(*skel);
	if (err) {
		net_bpf__destroy(*skel);
		*skel = NULL;
	}
	return err;
}

void net_destroy(struct net_bpf *skel)
{
	net_bpf__destroy(skel);
}

struct bpf_object *net_object(struct net_bpf *skel)
{
	return skel->obj;
}

void net_maps(struct net_bpf *skel, struct policy_maps *maps)
{
	maps->guarded = skel->maps.mcpguard_guarded;
	maps->allow4 = skel->maps.mcpguard_allow4;
	maps->allow6 = skel->maps.mcpguard_allow6;
	maps->dns = skel->maps.mcpguard_dns;
	maps->events = skel->maps.mcpguard_events;
}
