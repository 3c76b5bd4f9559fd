// SPDX-License-Identifier: MIT
/*
 * Attaching loaded programs. Cgroup programs are attached the legacy way (BPF_PROG_ATTACH with
 * BPF_F_ALLOW_MULTI, beside whatever else is attached to the cgroup): the attachment belongs to
 * the cgroup, not to a descriptor of the loader, so it holds after the loader exits, killed or
 * not, until it is detached or the cgroup is removed, and the kernel removes a cgroup only once
 * no process is left in it. Other programs (tracepoint telemetry, BPF LSM) are attached through
 * BPF links, which detach when the loader exits.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h"

static int attach_cgroup(struct bpf_program *prog, int cgroup_fd, struct links *links)
{
	enum bpf_attach_type type = bpf_program__expected_attach_type(prog);
	int fd = bpf_program__fd(prog);

	if (bpf_prog_attach(fd, cgroup_fd, type, BPF_F_ALLOW_MULTI))
		return -errno;
	links->link[links->n] = NULL;
	links->prog_fd[links->n] = fd;
	links->type[links->n] = type;
	links->cgroup_fd = cgroup_fd;
	return 0;
}

int attach_programs(struct bpf_object *obj, int cgroup_fd, struct links *links, const char **failed)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		enum bpf_prog_type type = bpf_program__type(prog);

		if (!bpf_program__autoload(prog))
			continue;
		*failed = bpf_program__section_name(prog);
		if (links->n == MAX_LINKS)
			return -E2BIG;
		if (type == BPF_PROG_TYPE_CGROUP_SOCK_ADDR || type == BPF_PROG_TYPE_CGROUP_SOCK) {
			int err = attach_cgroup(prog, cgroup_fd, links);

			if (err)
				return err;
		} else {
			links->prog_fd[links->n] = -1;
			links->link[links->n] = bpf_program__attach(prog);
			if (!links->link[links->n])
				return -errno;
		}
		links->name[links->n++] = bpf_program__section_name(prog);
	}
	return 0;
}

void detach_links(struct links *links)
{
	for (int i = 0; i < links->n; i++) {
		bpf_link__destroy(links->link[i]);
		links->link[i] = NULL;
	}
}

void detach_all(struct links *links)
{
	detach_links(links);
	while (links->n > 0) {
		int i = --links->n;

		if (!links->link[i] && links->prog_fd[i] >= 0)
			bpf_prog_detach2(links->prog_fd[i], links->cgroup_fd, links->type[i]);
	}
}
