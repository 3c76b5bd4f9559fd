// SPDX-License-Identifier: MIT
/*
 * The guest side of the BPF LSM test (run by vm/init with the loader running --lsm):
 *
 *   vmtest listen PORT...                  TCP listeners on 127.0.0.1, until killed
 *   vmtest inside CGROUP ALLOWED DENIED    join CGROUP, check that the policy is enforced
 *   vmtest outside DENIED                  check that a task outside the cgroup is untouched
 *   vmtest mark FILE                       create FILE (the side effect of the test programs)
 *
 * The tree vm/init sets up and the policy it loads:
 *   /srv/allowed (rwx), with a tmpfs mounted on /srv/allowed/mnt; /srv/denied (nothing)
 *   /opt/bin/allowed-prog (rx) and /opt/bin/denied-prog (nothing): copies of this binary
 *   TCP and UDP to 127.0.0.1:ALLOWED
 * Each check prints one line; the exit status is the number of failed checks.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/if_ether.h>

#define VICTIM "/srv/denied/victim.txt"
#define VICTIM_SIZE 12 /* "victim data\n" */

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("vmtest: %s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

/* ret is the result of a call that must fail with EPERM. */
static void refused(long ret, const char *what)
{
	int err = errno;

	check(ret < 0 && err == EPERM, "%s is refused with EPERM (%s)", what, ret < 0 ? strerror(err) : "it succeeded");
}

static void succeeded(long ret, const char *what)
{
	int err = errno;

	check(ret >= 0, "%s works (%s)", what, ret < 0 ? strerror(err) : "ok");
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/* Read a whole small file; the open's result (-1 with errno on failure). */
static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return 0;
}

static int open_close(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* Run program with `mark marker`; its wait status, or 256 + errno when the exec failed. */
static int run_marker(const char *program, const char *marker)
{
	int pipefd[2], status, err = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		execl(program, program, "mark", marker, (char *)NULL);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &err, sizeof(err)) != sizeof(err))
		err = 0;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return err ? 256 + err : status;
}

static int tcp_connect(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ret;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ret = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (ret == 0)
		ret = fd;
	else
		close(fd);
	return ret;
}

static int tcp_connect_ok(int port)
{
	int fd = tcp_connect(port);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* family AF_UNSPEC: an IPv4 UDP socket still sends to the address. */
static int udp_send(int port, int family)
{
	struct sockaddr_in sin = { .sin_family = family, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ret = sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin));
	close(fd);
	return ret;
}

static int join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	int fd, len, ret;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(pid, sizeof(pid), "%d\n", getpid());
	ret = write(fd, pid, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

static void files_inside(void)
{
	char buf[64];

	succeeded(read_file("/srv/allowed/ok.txt", buf, sizeof(buf)), "reading /srv/allowed/ok.txt");
	check(!strcmp(buf, "ok\n"), "/srv/allowed/ok.txt reads \"ok\"");
	succeeded(read_file("/srv/allowed/mnt/inner.txt", buf, sizeof(buf)),
		  "reading /srv/allowed/mnt/inner.txt (across a mount)");
	refused(read_file("/srv/denied/secret.txt", buf, sizeof(buf)), "reading /srv/denied/secret.txt");

	refused(open_close("/srv/denied/new.txt", O_WRONLY | O_CREAT), "O_CREAT of /srv/denied/new.txt");
	check(!exists("/srv/denied/new.txt"), "/srv/denied/new.txt was not created");
	succeeded(open_close("/srv/allowed/new.txt", O_WRONLY | O_CREAT), "O_CREAT of /srv/allowed/new.txt");
	succeeded(unlink("/srv/allowed/new.txt"), "unlinking /srv/allowed/new.txt");

	refused(truncate(VICTIM, 0), "truncate(" VICTIM ")");
	refused(open_close(VICTIM, O_WRONLY | O_TRUNC), "O_TRUNC of " VICTIM);
	check(size_of(VICTIM) == VICTIM_SIZE, VICTIM " keeps its %d bytes", VICTIM_SIZE);

	refused(unlink(VICTIM), "unlinking " VICTIM);
	refused(rename(VICTIM, "/srv/denied/moved.txt"), "renaming " VICTIM " within /srv/denied");
	refused(rename(VICTIM, "/srv/allowed/stolen.txt"), "renaming " VICTIM " into /srv/allowed");
	refused(rename("/srv/allowed/ok.txt", "/srv/denied/planted.txt"), "renaming /srv/allowed/ok.txt into /srv/denied");
	check(exists(VICTIM) && !exists("/srv/denied/moved.txt") && !exists("/srv/allowed/stolen.txt"),
	      VICTIM " is still in place");
	check(exists("/srv/allowed/ok.txt") && !exists("/srv/denied/planted.txt"), "/srv/allowed/ok.txt is still in place");

	refused(mkdir("/srv/denied/dir", 0755), "mkdir in /srv/denied");
	refused(symlink("/srv/allowed/ok.txt", "/srv/denied/link"), "symlink in /srv/denied");
	refused(link("/srv/denied/secret.txt", "/srv/allowed/secret-link"), "hard link of /srv/denied/secret.txt into /srv/allowed");
	check(!exists("/srv/denied/dir") && !exists("/srv/denied/link") && !exists("/srv/allowed/secret-link"),
	      "no entry was made");
}

/* A copy of the allowed program in a memfd, to be run through /proc/self/fd. */
static int memfd_copy(const char *program, char *path, size_t len)
{
	int src = open(program, O_RDONLY), fd = memfd_create("copy", 0);
	struct stat st;

	if (src < 0 || fd < 0 || fstat(src, &st) || sendfile(fd, src, NULL, st.st_size) != st.st_size)
		return -1;
	close(src);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void exec_inside(void)
{
	int status = run_marker("/opt/bin/denied-prog", "/srv/allowed/ran-denied");
	char memfd_path[64];
	int fd;

	check(status == 256 + EPERM, "exec of /opt/bin/denied-prog is refused with EPERM (status %d)", status);
	check(!exists("/srv/allowed/ran-denied"), "/opt/bin/denied-prog never ran");
	status = run_marker("/opt/bin/allowed-prog", "/srv/allowed/ran-allowed");
	check(status == 0 && exists("/srv/allowed/ran-allowed"), "/opt/bin/allowed-prog ran (status %d)", status);

	fd = memfd_copy("/opt/bin/allowed-prog", memfd_path, sizeof(memfd_path));
	succeeded(fd, "copying /opt/bin/allowed-prog into a memfd");
	status = run_marker(memfd_path, "/srv/allowed/ran-memfd");
	check(status == 256 + EPERM, "exec of that memfd is refused with EPERM (status %d)", status);
	check(!exists("/srv/allowed/ran-memfd"), "the memfd copy never ran");
	close(fd);
}

/* A pipe reopened by path (what /dev/stdin does) has no place in the tree: it passes. */
static void pipe_inside(void)
{
	char path[64], buf[8] = "";
	int p[2], fd;

	if (pipe(p)) {
		check(0, "pipe: %s", strerror(errno));
		return;
	}
	if (write(p[1], "pipe", 4) != 4)
		check(0, "writing to a pipe: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	fd = open(path, O_RDONLY);
	succeeded(fd, "reopening a pipe through /proc/self/fd");
	check(fd >= 0 && read(fd, buf, 4) == 4 && !strcmp(buf, "pipe"), "the reopened pipe reads");
	close(fd);
	close(p[0]);
	close(p[1]);
}

static void net_inside(int allowed, int denied)
{
	char what[64];

	snprintf(what, sizeof(what), "TCP connect to 127.0.0.1:%d", allowed);
	succeeded(tcp_connect_ok(allowed), what);
	snprintf(what, sizeof(what), "TCP connect to 127.0.0.1:%d", denied);
	refused(tcp_connect_ok(denied), what);
	snprintf(what, sizeof(what), "UDP sendto 127.0.0.1:%d", allowed);
	succeeded(udp_send(allowed, AF_INET), what);
	snprintf(what, sizeof(what), "UDP sendto 127.0.0.1:%d", denied);
	refused(udp_send(denied, AF_INET), what);
	snprintf(what, sizeof(what), "UDP sendto 127.0.0.1:%d given as AF_UNSPEC", denied);
	refused(udp_send(denied, AF_UNSPEC), what);
	refused(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), "a raw socket");
	refused(socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), "a packet socket");
}

/* A child inherits the cgroup, and with it the policy. */
static void child_inside(void)
{
	char buf[64];
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(read_file("/srv/denied/secret.txt", buf, sizeof(buf)) < 0 && errno == EPERM ? 0 : 1);
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child is refused /srv/denied/secret.txt too");
}

static int inside(const char *cgroup, int allowed, int denied)
{
	if (join_cgroup(cgroup)) {
		check(0, "joining %s: %s", cgroup, strerror(errno));
		return failures;
	}
	files_inside();
	pipe_inside();
	exec_inside();
	net_inside(allowed, denied);
	child_inside();
	return failures;
}

static int outside(int denied)
{
	char buf[64], what[64];
	int status;

	succeeded(read_file("/srv/denied/secret.txt", buf, sizeof(buf)), "outside: reading /srv/denied/secret.txt");
	succeeded(open_close("/srv/denied/outside.txt", O_WRONLY | O_CREAT), "outside: O_CREAT in /srv/denied");
	succeeded(unlink("/srv/denied/outside.txt"), "outside: unlinking in /srv/denied");
	status = run_marker("/opt/bin/denied-prog", "/srv/denied/ran-outside");
	check(status == 0 && exists("/srv/denied/ran-outside"), "outside: /opt/bin/denied-prog runs (status %d)", status);
	unlink("/srv/denied/ran-outside");
	snprintf(what, sizeof(what), "outside: TCP connect to 127.0.0.1:%d", denied);
	succeeded(tcp_connect_ok(denied), what);
	return failures;
}

static int listen_on(int argc, char **argv)
{
	struct pollfd fds[8];
	int n = 0;

	for (int i = 0; i < argc && n < 8; i++) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[i])) };
		int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

		inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 16)) {
			perror("vmtest listen");
			return 1;
		}
		fds[n].fd = fd;
		fds[n++].events = POLLIN;
	}
	for (;;) {
		if (poll(fds, n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (fds[i].revents & POLLIN) {
				int c = accept(fds[i].fd, NULL, NULL);

				if (c >= 0)
					close(c);
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "mark"))
		return open_close(argv[2], O_WRONLY | O_CREAT) < 0;
	if (argc >= 3 && !strcmp(argv[1], "listen"))
		return listen_on(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "inside"))
		return inside(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "outside"))
		return outside(atoi(argv[2]));
	fprintf(stderr, "usage: vmtest listen PORT... | inside CGROUP ALLOWED DENIED | outside DENIED | mark FILE\n");
	return 2;
}
