// SPDX-License-Identifier: MIT
/*
 * mcpguard-test-helper: what a malicious server would try, for the proxy's tests. Static, so it
 * can run itself from a memfd with nothing else to load. Each command prints one JSON line.
 *
 *   mcpguard-test-helper memfd-exec        copy this binary into a memfd and exec it from there
 *                                          {"memfd":"ok"|ERRNO,"exec":"ok"|ERRNO}; the exec'd
 *                                          copy prints {"ranFromMemfd":true} instead
 *   mcpguard-test-helper socket FAMILY PROTOCOL   {"socket":"ok"|ERRNO} (SOCK_RAW for netlink
 *                                          and packet, SOCK_STREAM otherwise)
 *   mcpguard-test-helper forks N           fork up to N children that wait, then end them:
 *                                          {"forked":K,"error":ERRNO|null}
 *   mcpguard-test-helper hog MIB           allocate and touch MIB MiB: {"allocated":MIB}
 *   mcpguard-test-helper read PATH         open PATH for reading: {"read":"ok"|ERRNO}
 *
 * ERRNO is the symbolic name (EACCES, ENOSYS, EAFNOSUPPORT, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *errname(int e)
{
	const char *name = strerrorname_np(e);

	return name ? name : "EUNKNOWN";
}

/* The exec'd copy lands here: argv[1] is "from-memfd". */
static int memfd_exec(const char *self)
{
	int src = open(self, O_RDONLY | O_CLOEXEC), fd;
	struct stat st;

	if (src < 0 || fstat(src, &st)) {
		printf("{\"memfd\":\"setup: %s\"}\n", errname(errno));
		return 1;
	}
	fd = (int)syscall(SYS_memfd_create, "payload", MFD_CLOEXEC);
	if (fd < 0) {
		printf("{\"memfd\":\"%s\",\"exec\":null}\n", errname(errno));
		return 0;
	}
	if (sendfile(fd, src, NULL, st.st_size) != st.st_size) {
		printf("{\"memfd\":\"ok\",\"exec\":\"copy: %s\"}\n", errname(errno));
		return 1;
	}
	fflush(stdout);
	{
		char *args[] = { "payload", "from-memfd", NULL }, *env[] = { NULL };

		fexecve(fd, args, env);
	}
	printf("{\"memfd\":\"ok\",\"exec\":\"%s\"}\n", errname(errno));
	return 0;
}

static int try_socket(int family, int protocol)
{
	int type = family == AF_NETLINK || family == AF_PACKET ? SOCK_RAW : SOCK_STREAM;
	int fd = socket(family, type, protocol);

	printf("{\"socket\":\"%s\"}\n", fd >= 0 ? "ok" : errname(errno));
	return 0;
}

static int forks(int n)
{
	pid_t *pids = calloc(n, sizeof(*pids));
	int k = 0, err = 0;

	for (; k < n; k++) {
		pids[k] = fork();
		if (pids[k] == 0) {
			pause();
			_exit(0);
		}
		if (pids[k] < 0) {
			err = errno;
			break;
		}
	}
	for (int i = 0; i < k; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	if (err)
		printf("{\"forked\":%d,\"error\":\"%s\"}\n", k, errname(err));
	else
		printf("{\"forked\":%d,\"error\":null}\n", k);
	return 0;
}

static int hog(long mib)
{
	for (long i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);

		if (!p) {
			printf("{\"allocated\":%ld,\"error\":\"ENOMEM\"}\n", i);
			return 1;
		}
		memset(p, 1, 1 << 20);
	}
	printf("{\"allocated\":%ld}\n", mib);
	return 0;
}

static int try_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	printf("{\"read\":\"%s\"}\n", fd >= 0 ? "ok" : errname(errno));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "from-memfd")) {
		printf("{\"ranFromMemfd\":true}\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "memfd-exec"))
		return memfd_exec(argv[0]);
	if (argc == 4 && !strcmp(argv[1], "socket"))
		return try_socket(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "forks"))
		return forks(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "hog"))
		return hog(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "read"))
		return try_read(argv[2]);
	fprintf(stderr, "usage: mcpguard-test-helper memfd-exec | socket FAMILY PROTOCOL | forks N | hog MIB | read PATH\n");
	return 2;
}
