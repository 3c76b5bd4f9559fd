// SPDX-License-Identifier: MIT
/*
 * Attaching loaded programs through BPF links. A cgroup link attaches in BPF_F_ALLOW_MULTI
 * mode, beside whatever else is attached to the cgroup, and closing the link detaches the
 * program: nothing outlives the loader.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include "loader.h"

int attach_programs(struct bpf_object *obj, int cgroup_fd, struct links *links, const char **failed)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		enum bpf_prog_type type = bpf_program__type(prog);
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		*failed = bpf_program__section_name(prog);
		if (links->n == MAX_LINKS)
			return -E2BIG;
		if (type == BPF_PROG_TYPE_CGROUP_SOCK_ADDR || type == BPF_PROG_TYPE_CGROUP_SOCK)
			link = bpf_program__attach_cgroup(prog, cgroup_fd);
		else
			link = bpf_program__attach(prog);
		if (!link)
			return -errno;
		links->link[links->n] = link;
		links->name[links->n++] = bpf_program__section_name(prog);
	}
	return 0;
}

void detach_all(struct links *links)
{
	while (links->n > 0)
		bpf_link__destroy(links->link[--links->n]);
}
