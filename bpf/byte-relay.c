// SPDX-License-Identifier: MIT
/*
 * byte-relay: the `pipe-c` path of `mcpguard bench latency`, the floor of any stdio proxy.
 *
 *   byte-relay COMMAND [ARGS...]
 *
 * Starts COMMAND with its stdin and stdout on pipes and copies bytes both ways with poll(2), read(2)
 * and write(2): no framing, no parsing, no checks. What it adds over a direct connection is the cost
 * of a second process on the path on this machine; a proxy's own work comes on top of it. When
 * stdin ends, the command's stdin is closed; when the command's stdout ends, the relay waits for it
 * and exits with its status (128 + signal number when it was killed). Not a defense: it is only a
 * measuring stick.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Copy what one read returns; false when the source ended or the destination is gone. */
static int copy_once(int from, int to)
{
	char buf[65536];
	ssize_t n;

	do
		n = read(from, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		off += w;
	}
	return 1;
}

int main(int argc, char **argv)
{
	int to_child[2], from_child[2];

	if (argc < 2) {
		fprintf(stderr, "usage: byte-relay COMMAND [ARGS...]\n");
		return 2;
	}
	if (pipe2(to_child, O_CLOEXEC) || pipe2(from_child, O_CLOEXEC)) {
		perror("byte-relay: pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("byte-relay: fork");
		return 1;
	}
	if (pid == 0) {
		if (dup2(to_child[0], 0) < 0 || dup2(from_child[1], 1) < 0)
			_exit(126);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "byte-relay: cannot start %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	signal(SIGPIPE, SIG_IGN);

	struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = from_child[0], .events = POLLIN } };
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("byte-relay: poll");
			break;
		}
		if (fds[0].revents && !copy_once(0, to_child[1])) {
			close(to_child[1]);
			fds[0].fd = -1;
		}
		if (fds[1].revents && !copy_once(from_child[0], 1))
			break;
	}

	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
