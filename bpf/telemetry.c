// SPDX-License-Identifier: MIT
/* Loading the tracepoint telemetry (telemetry.bpf.c). */
#include <errno.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "telemetry.skel.h"
#include "net.skel.h"
#include "unix.h"

static int reuse(struct bpf_map *map, const struct bpf_map *owner)
{
	return bpf_map__reuse_fd(map, bpf_map__fd(owner));
}

/* libbpf 1.1 does not know the unix hooks' section names: their type and attach point are set here. */
static int unix_programs(struct telemetry_bpf *skel, bool load)
{
	struct bpf_program *progs[] = { skel->progs.mcpguard_connect_unix, skel->progs.mcpguard_sendmsg_unix };
	const int types[] = { MCPGUARD_ATTACH_UNIX_CONNECT, MCPGUARD_ATTACH_UNIX_SENDMSG };

	for (int i = 0; i < 2; i++) {
		int err = load ? bpf_program__set_type(progs[i], BPF_PROG_TYPE_CGROUP_SOCK_ADDR) ?:
				 bpf_program__set_expected_attach_type(progs[i], types[i]) :
				 bpf_program__set_autoload(progs[i], false);

		if (err)
			return err;
	}
	return 0;
}

int telemetry_load(struct telemetry_bpf **skel, struct net_bpf *net, bool lsm_enforces, bool unix_sockets)
{
	int err;

	*skel = telemetry_bpf__open();
	if (!*skel)
		return -errno;
	(*skel)->rodata->lsm_enforces = lsm_enforces;
	err = unix_programs(*skel, unix_sockets);
	if (!err && net) {
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

struct bpf_map *telemetry_unix(struct telemetry_bpf *skel)
{
	return skel->maps.mcpguard_unix_allow;
}
