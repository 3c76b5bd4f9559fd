// SPDX-License-Identifier: MIT
/*
 * `mcpguard-loader --probe`: which BPF backends work here, found by really loading (and
 * attaching) programs, never by reading /sys/kernel/security/lsm. Prints one JSON line:
 *   {"cgroupBpf":bool,"tpBtf":bool,"unixBpf":bool,"lsm":bool,"ringbuf":bool,"errors":{"<what>":"<strerror>"}}
 * cgroupBpf: the real net programs load and attach to a scratch cgroup (created and removed
 * under the cgroup2 mount). tpBtf: the real telemetry programs load and attach. unixBpf: the
 * telemetry object with the pathname unix socket programs (kernel 6.7) loads, and these attach to
 * the scratch cgroup. lsm: the probe
 * program loads, attaches, and runs on an exec. ringbuf: a ring buffer map can be created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "probe.skel.h"

static const char *probe_ringbuf(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mcpguard_probe", 0, 0, 4096, NULL);

	if (fd < 0)
		return strerror(errno);
	close(fd);
	return NULL;
}

/* The net programs, loaded and attached to the cgroup fd: NULL, or why not. */
static const char *net_attaches(int fd)
{
	struct links links = { 0 };
	struct net_bpf *skel;
	const char *failed;
	int err = net_load(&skel);

	if (!err) {
		err = attach_programs(net_object(skel), fd, &links, &failed);
		detach_all(&links);
		net_destroy(skel);
	}
	return err ? strerror(-err) : NULL;
}

/* The telemetry object with the unix socket programs, loaded and attached: NULL, or why not. */
static const char *unix_attaches(int fd)
{
	static char why[160];
	struct links links = { 0 };
	struct telemetry_bpf *skel;
	const char *failed;
	int err = telemetry_load(&skel, NULL, false, true);

	if (!err) {
		err = attach_programs(telemetry_object(skel), fd, &links, &failed);
		detach_all(&links);
		telemetry_destroy(skel);
	}
	if (!err)
		return NULL;
	snprintf(why, sizeof(why), "%s (the cgroup unix socket hooks came with kernel 6.7)", strerror(-err));
	return why;
}

/* What attaches returns for a scratch cgroup made (and removed) under the cgroup2 mount. */
static const char *in_scratch_cgroup(const char *(*attaches)(int fd))
{
	char dir[4096], mount[4000];
	const char *error;
	uint64_t id;
	int err, fd;

	err = cgroup2_mount(mount, sizeof(mount));
	if (err)
		return err == -ENOENT ? "cgroup2 is not mounted" : strerror(-err);
	snprintf(dir, sizeof(dir), "%s/mcpguard-probe-%d", mount, getpid());
	if (mkdir(dir, 0700))
		return strerror(errno);
	fd = cgroup_open(dir, &id);
	if (fd < 0) {
		error = strerror(-fd);
	} else {
		error = attaches(fd);
		close(fd);
	}
	rmdir(dir);
	return error;
}

static const char *probe_tp_btf(void)
{
	struct links links = { 0 };
	struct telemetry_bpf *skel;
	const char *failed;
	int err = telemetry_load(&skel, NULL, false, false);

	if (err)
		return strerror(-err);
	err = attach_programs(telemetry_object(skel), -1, &links, &failed);
	detach_all(&links);
	telemetry_destroy(skel);
	return err ? strerror(-err) : NULL;
}

/*
 * A child waits on a pipe, the probe program is loaded for its pid and attached, then the child
 * execs this binary's `--help`: the program marks that it ran.
 */
static const char *probe_lsm(void)
{
	struct probe_bpf *skel;
	struct bpf_link *link = NULL;
	const char *error = NULL;
	int pipefd[2], status, err;
	pid_t child;

	if (pipe2(pipefd, O_CLOEXEC))
		return strerror(errno);
	child = fork();
	if (child < 0)
		return strerror(errno);
	if (child == 0) {
		char go;
		int null = open("/dev/null", O_WRONLY);

		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(0);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl("/proc/self/exe", "mcpguard-loader", "--help", (char *)NULL);
		_exit(127);
	}
	close(pipefd[0]);
	skel = probe_bpf__open();
	if (!skel) {
		error = strerror(errno);
	} else {
		skel->rodata->probe_pid = child;
		err = probe_bpf__load(skel);
		if (err)
			error = strerror(-err);
		else if (!(link = bpf_program__attach(skel->progs.mcpguard_probe)))
			error = strerror(errno);
	}
	if (!error && write(pipefd[1], "x", 1) != 1)
		error = strerror(errno);
	close(pipefd[1]);
	waitpid(child, &status, 0);
	if (!error && !skel->bss->seen)
		error = "bprm_check_security did not run: bpf is not an active LSM";
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
	return error;
}

int probe_run(void)
{
	const char *what[] = { "cgroupBpf", "tpBtf", "unixBpf", "lsm", "ringbuf" };
	const int n = sizeof(what) / sizeof(what[0]);
	const char *error[sizeof(what) / sizeof(what[0])];
	bool first = true;

	error[0] = in_scratch_cgroup(net_attaches);
	error[1] = probe_tp_btf();
	error[2] = in_scratch_cgroup(unix_attaches);
	error[3] = probe_lsm();
	error[4] = probe_ringbuf();
	putchar('{');
	for (int i = 0; i < n; i++)
		printf("\"%s\":%s,", what[i], error[i] ? "false" : "true");
	fputs("\"errors\":{", stdout);
	for (int i = 0; i < n; i++) {
		if (!error[i])
			continue;
		printf("%s\"%s\":\"%s\"", first ? "" : ",", what[i], error[i]);
		first = false;
	}
	puts("}}");
	fflush(stdout);
	return 0;
}
