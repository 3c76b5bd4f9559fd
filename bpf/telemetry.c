// SPDX-License-Identifier: MIT
/* Loading the tracepoint telemetry (telemetry.bpf.c). */
#include <errno.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "telemetry.skel.h"
#include "net.skel.h"

static int reuse(struct bpf_map *map, const struct bpf_map *owner)
{
	return bpf_map__reuse_fd(map, bpf_map__fd(owner));
}

int telemetry_load(struct telemetry_bpf **skel, struct net_bpf *net, bool lsm_enforces)
{
	int err = 0;

	*skel = telemetry_bpf__open();
	if (!*skel)
		return -errno;
	(*skel)->rodata->lsm_enforces = lsm_enforces;
	if (net) {
		err = reuse((*skel)->maps.mcpguard_events, net->maps.mcpguard_events) ?:
		      reuse((*skel)->maps.mcpguard_guarded, net->maps.mcpguard_guarded);
	}
	if (!err)
		err = telemetry_bpf__load(*skel);
	if (err) {
		telemetry_bpf__destroy(*skel);
		*skel = NULL;
	}
	return err;
}

void telemetry_destroy(struct telemetry_bpf *skel)
{
	telemetry_bpf__destroy(skel);
}

struct bpf_object *telemetry_object(struct telemetry_bpf *skel)
{
	return skel->obj;
}
