// SPDX-License-Identifier: MIT
/*
 * mcpguard-loader: MCPGuard's BPF programs for one guarded cgroup, and what they report.
 *
 *   mcpguard-loader --probe
 *   mcpguard-loader --cgroup DIR --policy FILE [--lsm] [--unix] [--no-telemetry]
 *
 * Loads the cgroup socket programs (always), the tracepoint telemetry (unless --no-telemetry)
 * with the pathname unix socket programs (with --unix, where the probe found kernel 6.7's unix
 * hooks) and the BPF LSM programs (with --lsm), fills their maps for DIR's cgroup from FILE (see
 * policy.c), attaches them, prints {"type":"ready",...} and then one JSON event a line (see
 * emit.c). Any failure before that is one line `mcpguard-loader: <what>: <reason>` on stderr and
 * exit status 1, so the proxy refuses to start the server.
 *
 * The cgroup socket programs are attached to the cgroup itself (see attach.c): they hold until
 * the cgroup is removed, which the kernel allows only once no process is left in it, whether the
 * loader exits, is killed or crashes. The telemetry and BPF LSM programs are attached through
 * links and end with the loader. So at EOF on stdin (the proxy ended or died), SIGTERM or SIGINT
 * the loader waits until the cgroup holds no process (or is gone; at most 10 s), passing events
 * on, then detaches its links and exits 0, leaving the socket programs to the cgroup. A loader
 * killed outright loses its links at once: its caller stops the server when that happens.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "loader.h"

/* At the end, how long to wait for the cgroup to empty before the links go. */
#define STOP_WAIT_MS 10000

#define USAGE "usage: mcpguard-loader --probe | --cgroup DIR --policy FILE [--lsm] [--unix] [--no-telemetry]"

/*
 * The cgroup it attached to before any policy was read: a loader that ends then (the proxy gone
 * before it sent one, or a failure of its own) removes it if it is still empty, as the proxy made
 * it ahead and no reaper may yet know of it. Once the policy is read it is the proxy's to remove.
 */
static const char *unclaimed_cgroup;

void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("mcpguard-loader: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (unclaimed_cgroup)
		rmdir(unclaimed_cgroup);
	exit(1);
}

/* libbpf's own messages (verifier logs included), only when MCPGUARD_BPF_DEBUG is set. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

/* Milliseconds since `since` on the monotonic clock. */
static double ms_since(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1e3 + (now.tv_nsec - since->tv_nsec) / 1e6;
}

enum { SOURCE_EVENTS, SOURCE_SIGNAL, SOURCE_STDIN };

static void watch(int epfd, int fd, int source)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = source };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		fail("waiting for events: %s", strerror(errno));
}

/* True once stdin is at its end (or unreadable). Its content is ignored. */
static bool stdin_ended(void)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

/* Pass events on until stdin ends or a stop signal arrives. */
static void run(struct ring_buffer *rb, const sigset_t *stop_signals)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	int sigfd = signalfd(-1, stop_signals, SFD_CLOEXEC);
	struct epoll_event stdin_ev = { .events = EPOLLIN, .data.u32 = SOURCE_STDIN };

	if (epfd < 0 || sigfd < 0)
		fail("waiting for events: %s", strerror(errno));
	watch(epfd, ring_buffer__epoll_fd(rb), SOURCE_EVENTS);
	watch(epfd, sigfd, SOURCE_SIGNAL);
	/*
	 * A regular file or /dev/null cannot be polled (EPERM): it is read to its end at once. A
	 * closed stdin (EBADF) has ended too.
	 */
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, STDIN_FILENO, &stdin_ev)) {
		if (errno == EPERM)
			while (!stdin_ended())
				;
		return;
	}
	for (;;) {
		struct epoll_event evs[3];
		int n = epoll_wait(epfd, evs, 3, -1);

		if (n < 0 && errno != EINTR)
			fail("waiting for events: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == SOURCE_EVENTS)
				ring_buffer__consume(rb);
			else if (evs[i].data.u32 == SOURCE_SIGNAL || stdin_ended())
				return;
		}
	}
}

/* Attach every loaded program: the cgroup ones (net, unix) to the cgroup, the others where they trace. */
static void attach_all(struct net_bpf *net, struct telemetry_bpf *tel, struct lsm_bpf *lsm_skel, int cgroup_fd,
		       struct links *links)
{
	const char *failed;
	int err;

	if ((err = attach_programs(net_object(net), cgroup_fd, links, &failed)) ||
	    (tel && (err = attach_programs(telemetry_object(tel), cgroup_fd, links, &failed))) ||
	    (lsm_skel && (err = attach_programs(lsm_object(lsm_skel), -1, links, &failed))))
		fail("attaching %s: %s", failed, strerror(-err));
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *policy_file = NULL;
	bool probe = false, lsm = false, unix_sockets = false, telemetry = true;
	struct net_bpf *net = NULL;
	struct telemetry_bpf *tel = NULL;
	struct lsm_bpf *lsm_skel = NULL;
	struct policy_maps maps = { 0 };
	struct links links = { 0 };
	struct ring_buffer *rb;
	struct policy *policy;
	sigset_t stop_signals;
	uint64_t cgroup_id;
	int cgroup_fd, err;
	struct timespec began;
	double ms[3]; /* loaded, policy read, attached: see emit_ready() */
	bool early; /* attached before the policy was read */

	clock_gettime(CLOCK_MONOTONIC, &began);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--probe")) {
			probe = true;
		} else if (!strcmp(argv[i], "--help")) {
			puts(USAGE);
			return 0;
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
			policy_file = argv[++i];
		} else if (!strcmp(argv[i], "--lsm")) {
			lsm = true;
		} else if (!strcmp(argv[i], "--unix")) {
			unix_sockets = true;
		} else if (!strcmp(argv[i], "--no-telemetry")) {
			telemetry = false;
		} else {
			fail(USAGE);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	libbpf_set_print(getenv("MCPGUARD_BPF_DEBUG") ? print_libbpf : NULL);
	if (probe)
		return probe_run();
	if (!dir || !policy_file || (unix_sockets && !telemetry))
		fail(USAGE);

	/* Blocked from here on, the stop signals are read from a signalfd. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);

	/*
	 * Load (and so verify) the programs before reading the policy, which only fills their maps:
	 * the proxy starts the loader first and compiles the policy while the kernel verifies. The
	 * loader may start before the cgroup exists: the proxy makes it once its probe has settled that
	 * this loader is the one that runs (so a loader it kills has attached nothing), usually while
	 * the programs verify. Where it exists once they are loaded, they are attached at once, while
	 * the proxy still compiles the policy: until the policy fills the maps, the cgroup guards
	 * nothing, so the net programs refuse every socket in it (it holds nothing but the held
	 * launcher, which opens none before it is released) and the telemetry reports nothing. Where
	 * it does not exist yet, it is opened, and the programs attached, once the policy is read.
	 */
	err = net_load(&net);
	if (err)
		fail("loading the net programs: %s", strerror(-err));
	if (telemetry && (err = telemetry_load(&tel, net, lsm, unix_sockets)))
		fail("loading the telemetry programs: %s", strerror(-err));
	if (lsm && (err = lsm_load(&lsm_skel, net)))
		fail("loading the BPF LSM programs: %s", strerror(-err));

	ms[0] = ms_since(&began);
	cgroup_fd = cgroup_open(dir, &cgroup_id);
	early = cgroup_fd >= 0;
	if (early) {
		unclaimed_cgroup = dir;
		attach_all(net, tel, lsm_skel, cgroup_fd, &links);
		ms[2] = ms_since(&began);
	}
	policy = policy_read(policy_file);
	unclaimed_cgroup = NULL;
	ms[1] = ms_since(&began);
	if (!early) {
		cgroup_fd = cgroup_open(dir, &cgroup_id);
		if (cgroup_fd < 0)
			fail("cgroup %s: %s", dir,
			     cgroup_fd == -ENOTDIR ? "not a cgroup2 directory" : strerror(-cgroup_fd));
	}
	net_maps(net, &maps);
	maps.inodes = lsm ? lsm_inodes(lsm_skel) : NULL;
	maps.unix_allow = unix_sockets ? telemetry_unix(tel) : NULL;
	policy_apply(policy, cgroup_id, &maps);
	if (!early) {
		attach_all(net, tel, lsm_skel, cgroup_fd, &links);
		ms[2] = ms_since(&began);
	}

	rb = ring_buffer__new(bpf_map__fd(maps.events), emit_event, NULL, NULL);
	if (!rb)
		fail("reading the ring buffer: %s", strerror(errno));
	emit_ready(cgroup_id, &links, lsm, ms);

	run(rb, &stop_signals);

	ring_buffer__consume(rb);
	cgroup_wait_empty(cgroup_fd, rb, STOP_WAIT_MS);
	detach_links(&links);
	ring_buffer__free(rb);
	lsm_destroy(lsm_skel);
	telemetry_destroy(tel);
	net_destroy(net);
	close(cgroup_fd);
	return 0;
}
