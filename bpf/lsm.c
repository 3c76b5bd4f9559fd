// SPDX-License-Identifier: MIT
/* Loading the BPF LSM programs (lsm.bpf.c), with the network allow lists of the net object. */
#include <errno.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "lsm.skel.h"
#include "net.skel.h"

static int reuse(struct bpf_map *map, const struct bpf_map *owner)
{
	return bpf_map__reuse_fd(map, bpf_map__fd(owner));
}

int lsm_load(struct lsm_bpf **skel, struct net_bpf *net)
{
	int err = 0;

	*skel = lsm_bpf__open();
	if (!*skel)
		return -errno;
	if (net) {
		err = reuse((*skel)->maps.mcpguard_events, net->maps.mcpguard_events) ?:
		      reuse((*skel)->maps.mcpguard_guarded, net->maps.mcpguard_guarded) ?:
		      reuse((*skel)->maps.mcpguard_allow4, net->maps.mcpguard_allow4) ?:
		      reuse((*skel)->maps.mcpguard_allow6, net->maps.mcpguard_allow6) ?:
		      reuse((*skel)->maps.mcpguard_dns, net->maps.mcpguard_dns);
	}
	if (!err)
		err = lsm_bpf__load(*skel);
	if (err) {
		lsm_bpf__destroy(*skel);
		*skel = NULL;
	}
	return err;
}

void lsm_destroy(struct lsm_bpf *skel)
{
	lsm_bpf__destroy(skel);
}

struct bpf_object *lsm_object(struct lsm_bpf *skel)
{
	return skel->obj;
}

struct bpf_map *lsm_inodes(struct lsm_bpf *skel)
{
	return skel->maps.mcpguard_inodes;
}
