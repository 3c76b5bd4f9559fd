// SPDX-License-Identifier: MIT
/* The guarded cgroup and the cgroup2 mount. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include "loader.h"

/*
 * A descriptor of the cgroup2 directory dir and its cgroup id, which is the directory's inode
 * number (what bpf_get_current_cgroup_id() returns for its tasks); -errno when dir is not one.
 */
int cgroup_open(const char *dir, uint64_t *id)
{
	struct statfs sfs;
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) || fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return -ENOTDIR;
	}
	*id = st.st_ino;
	return fd;
}

/* True while the cgroup of cgroup_fd (or one beneath it) holds a live process. */
static bool populated(int cgroup_fd)
{
	char buf[512];
	int fd = openat(cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false; /* removed */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return strstr(buf, "populated 1") != NULL;
}

void cgroup_wait_empty(int cgroup_fd, struct ring_buffer *rb, int timeout_ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (populated(cgroup_fd)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > timeout_ms)
			return;
		ring_buffer__poll(rb, 10);
	}
}

/* Where cgroup2 is mounted, into buf; 0 or -ENOENT. */
int cgroup2_mount(char *buf, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2") && strlen(m->mnt_dir) < len) {
			strcpy(buf, m->mnt_dir);
			err = 0;
			break;
		}
	}
	endmntent(f);
	return err;
}
