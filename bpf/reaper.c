// SPDX-License-Identifier: MIT
/*
 * mcpguard-reaper: ends a guarded server when the proxy that started it ends, however it ends
 * (exit, crash, SIGKILL, OOM kill).
 *
 *   mcpguard-reaper --proxy PID [--cgroup DIR] [--v1 DIR]...
 *
 * The proxy starts it before the server, outside the server's cgroup and in a session of its
 * own, with a pipe on stdin whose write end only the proxy holds (Node opens its pipes
 * close-on-exec, and the launcher closes stray descriptors). It prints "ready" once armed and
 * then waits. Two things mean the proxy is gone: end of file on stdin, or the proxy's pidfd
 * turning readable (PID must be the reaper's parent); what the proxy wrote on stdin before it
 * went is read either way. Then:
 *   - with --cgroup: write 1 to DIR/cgroup.kill until DIR/cgroup.events says `populated 0`,
 *     remove DIR (and any cgroup nested in it), and do the same for every --v1 DIR (the
 *     cgroup-v1 pids and memory cgroups of the server's limits), killing what is left in them;
 *   - for each line "pgid N" read on stdin (process-group containment, without a cgroup): kill
 *     the process group N, unless the line "released" came after it (the proxy ended the group
 *     itself: its number may belong to someone else by now).
 * A cgroup that does not exist any more (the proxy removed it on a clean exit) needs nothing.
 * Past 5 s with processes still in the cgroup it says so once on stderr and goes on killing.
 *
 * It ignores SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE: a Ctrl-C on a terminal signals the whole
 * foreground process group, and only the proxy's end may start the reaping. As root it sets its
 * own oom_score_adj to -1000, so the OOM killer that takes the proxy does not take the reaper.
 * The proxy watches it and stops the server if it ever exits first (fail closed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_V1 8
#define MAX_GROUPS 64
#define MAX_DEPTH 16
#define QUIET_MS 5000

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("mcpguard-reaper: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

__attribute__((noreturn)) static void usage(void)
{
	say("usage: mcpguard-reaper --proxy PID [--cgroup DIR] [--v1 DIR]...");
	exit(2);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The start of DIR/NAME (at most len - 1 bytes), NUL-terminated: 0, or -errno. */
static int read_small(const char *dir, const char *name, char *buf, size_t len)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Write "1" to DIR/cgroup.kill: 0, or -errno (-ENOENT once the cgroup is gone). */
static int cgroup_kill(const char *dir)
{
	char path[4096];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/* True while DIR or a cgroup beneath it holds a live process. */
static bool populated(const char *dir)
{
	char buf[1024];

	if (read_small(dir, "cgroup.events", buf, sizeof(buf)))
		return false;
	return strstr(buf, "populated 1") != NULL;
}

/* Remove DIR and the cgroups nested in it, deepest first: 0, or -errno (ENOENT counts as done). */
static int remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (depth < MAX_DEPTH && (e = readdir(d))) {
		char sub[4096];

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		remove_tree(sub, depth + 1);
	}
	closedir(d);
	return rmdir(dir) && errno != ENOENT ? -errno : 0;
}

/* True when pid is listed in DIR/cgroup.procs. */
static bool listed(const char *dir, int pid)
{
	char path[4096];
	bool found = false;
	FILE *f;
	int p;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fscanf(f, "%d", &p) == 1)
		found = p == pid;
	fclose(f);
	return found;
}

/*
 * SIGKILL every process listed in DIR/cgroup.procs (a v1 cgroup has no cgroup.kill). Through a
 * pidfd, checked to be in DIR after it was opened: a pid reused meanwhile is never signalled.
 */
static void kill_listed(const char *dir)
{
	char path[4096];
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1) {
		int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;

		if (pidfd < 0)
			continue;
		if (listed(dir, pid))
			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		close(pidfd);
	}
	fclose(f);
}

/*
 * Kill and remove one cgroup: v2 through cgroup.kill and cgroup.events, v1 by signalling its
 * processes. Gives up only on an error other than "still busy"; past QUIET_MS it says so once
 * and keeps trying, more slowly.
 */
static int reap_cgroup(const char *dir, bool v2)
{
	long start = now_ms();
	bool told = false;

	for (int attempt = 0;; attempt++) {
		int err;

		if (v2) {
			err = cgroup_kill(dir);
			if (err == -ENOENT && access(dir, F_OK))
				return 0; /* gone: the proxy removed it */
			if (err)
				kill_listed(dir); /* no cgroup.kill (before Linux 5.14) */
		} else {
			kill_listed(dir);
		}
		if (!v2 || !populated(dir)) {
			err = remove_tree(dir, 0);
			if (!err)
				return 0;
			if (err != -EBUSY) {
				say("cannot remove %s: %s", dir, strerror(-err));
				return -1;
			}
		}
		if (!told && now_ms() - start > QUIET_MS) {
			say("%s still holds processes after %d ms; still killing", dir, QUIET_MS);
			told = true;
		}
		sleep_ms(attempt < 200 ? 1 : told ? 100 : 10);
	}
}

struct target {
	const char *cgroup;
	const char *v1[MAX_V1];
	int n_v1;
	int groups[MAX_GROUPS];
	int n_groups;
};

/* A line from the proxy: "pgid N" names a process group to kill at the end, "released" forgets them. */
static void take_line(struct target *t, const char *line)
{
	char *end;
	long pgid;

	if (!strcmp(line, "released")) {
		t->n_groups = 0;
		return;
	}
	if (strncmp(line, "pgid ", 5)) {
		say("ignoring an unknown instruction \"%.40s\"", line);
		return;
	}
	pgid = strtol(line + 5, &end, 10);
	if (*end || pgid <= 1 || pgid > 0x3fffffff || t->n_groups == MAX_GROUPS) {
		say("ignoring a bad process group \"%.40s\"", line + 5);
		return;
	}
	t->groups[t->n_groups++] = (int)pgid;
}

static bool nonblocking_stdin(void)
{
	int flags = fcntl(STDIN_FILENO, F_GETFL);

	return flags >= 0 && fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK) == 0;
}

/*
 * Read the proxy's instructions until end of file on stdin or the proxy's exit (`gone`: it has
 * exited already). Once the proxy has exited, what it wrote before is read to the end without
 * waiting (a pidfd can turn readable before the pipe's end of file is seen, and a child that
 * inherited the pipe could hold it open): a "pgid N" written just before a SIGKILL still counts.
 */

static void wait_for_proxy(struct target *t, int pidfd, bool gone)
{
	char buf[4096];
	size_t have = 0;

	if (gone && !nonblocking_stdin())
		return;

	for (;;) {
		struct pollfd fds[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		ssize_t n;
		char *nl;

		if (!gone && poll(fds, pidfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (!gone && fds[1].revents) {
			if (!nonblocking_stdin())
				return;
			gone = true;
		}
		if (!gone && !fds[0].revents)
			continue;
		n = read(STDIN_FILENO, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 && !(n < 0 && errno == EAGAIN && !gone))
			return;
		have += n > 0 ? (size_t)n : 0;
		buf[have] = 0;
		while ((nl = strchr(buf, '\n'))) {
			*nl = 0;
			take_line(t, buf);
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* an overlong line: dropped */
	}
}

static void arm(void)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	int fd;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	/* Lowering it needs CAP_SYS_RESOURCE, which some containers withhold: then it stays as it is
	 * (a process of a few hundred KiB is the OOM killer's last choice anyway). */
	if (geteuid() == 0 && (fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "-1000", 5) != 5 && errno != EACCES && errno != EPERM)
			say("cannot protect itself from the OOM killer: %s", strerror(errno));
		close(fd);
	}
	/* Hold no directory of the caller's open. */
	if (chdir("/"))
		say("chdir /: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct target t = { 0 };
	long proxy = 0;
	int pidfd = -1, status = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--proxy") && i + 1 < argc)
			proxy = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc)
			t.cgroup = argv[++i];
		else if (!strcmp(argv[i], "--v1") && i + 1 < argc && t.n_v1 < MAX_V1)
			t.v1[t.n_v1++] = argv[++i];
		else
			usage();
	}
	if (proxy <= 1)
		usage();
	arm();
	/* A pidfd of the proxy, valid only if the proxy is still our parent (no pid reuse). */
	pidfd = (int)syscall(SYS_pidfd_open, (int)proxy, 0);
	if (getppid() == proxy) {
		fputs("ready\n", stdout);
		fflush(stdout);
		if (!freopen("/dev/null", "w", stdout))
			say("cannot let go of stdout: %s", strerror(errno));
		wait_for_proxy(&t, pidfd, false);
	} else {
		/* Gone before we got here: what it wrote is still read. */
		wait_for_proxy(&t, -1, true);
	}

	for (int i = 0; i < t.n_groups; i++)
		kill(-t.groups[i], SIGKILL);
	if (t.cgroup && reap_cgroup(t.cgroup, true))
		status = 1;
	for (int i = 0; i < t.n_v1; i++)
		if (reap_cgroup(t.v1[i], false))
			status = 1;
	return status;
}
