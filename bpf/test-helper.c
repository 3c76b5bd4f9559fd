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
 *   mcpguard-test-helper shm KEY TEXT      attach the SysV shared memory segment KEY, read its
 *                                          text and write TEXT over it:
 *                                          {"shm":"ok"|ERRNO,"read":S|null}
 *   mcpguard-test-helper msg KEY TEXT      send TEXT on the SysV message queue KEY:
 *                                          {"msg":"ok"|ERRNO}
 *   mcpguard-test-helper userns            unshare(CLONE_NEWUSER), then clone(CLONE_NEWUSER) and
 *                                          clone3: {"unshare":..,"clone":..,"clone3":..}
 *   mcpguard-test-helper keyctl            add_key a user key to the session keyring:
 *                                          {"keyring":"ok"|ERRNO}
 *   mcpguard-test-helper bind-abstract NAME SECONDS   bind and listen on the abstract unix
 *                                          socket NAME, print {"bind":"ok"|ERRNO}, then accept
 *                                          for SECONDS: {"accepted":N}
 *   mcpguard-test-helper connect-abstract NAME   connect to the abstract unix socket NAME:
 *                                          {"connect":"ok"|ERRNO}
 *   mcpguard-test-helper unix PATH         connect a stream socket, then send a datagram, to the
 *                                          pathname unix socket PATH (a name of at most 107
 *                                          bytes): {"connect":"ok"|ERRNO,"sendto":"ok"|ERRNO}
 *   mcpguard-test-helper chroot DIR        chroot(DIR): {"chroot":"ok"|ERRNO}
 *   mcpguard-test-helper fsize PATH BYTES  write BYTES bytes to PATH: {"wrote":N,"error":ERRNO|null}
 *   mcpguard-test-helper meta PATH         change PATH's metadata, each back as it was:
 *                                          {"chmod":..,"chown":..,"utimes":..,"xattr":..}, "ok" or
 *                                          the errno's name of chmod, chown (to its own owner),
 *                                          utimensat and setxattr of a user.* attribute
 *   mcpguard-test-helper replace PATH      write PATH.tmp and rename it over PATH (an atomic save):
 *                                          {"replace":"ok"|ERRNO}
 *   mcpguard-test-helper move FROM TO      rename FROM to TO: {"move":"ok"|ERRNO}
 *   mcpguard-test-helper handle PATH DIR   open PATH by its file handle through a descriptor of
 *                                          DIR (name_to_handle_at, open_by_handle_at):
 *                                          {"handle":"ok"|ERRNO,"open":"ok"|ERRNO|null}
 *   mcpguard-test-helper procfs FILE       what /proc shows and lets through: {"pids":[N,...]|ERRNO,
 *                                          "self":N,"init":COMM|ERRNO,"status":..,"maps":..,
 *                                          "oomScoreAdj":..,"comm":..,"viaRoot":..}: the processes
 *                                          it lists, this process's pid, /proc/1/comm, reads of
 *                                          /proc/self/status and maps, writes to
 *                                          /proc/self/oom_score_adj and comm, and a read of FILE
 *                                          through /proc/self/root ("ok" or the errno's name)
 *
 * ERRNO is the symbolic name (EACCES, ENOSYS, EAFNOSUPPORT, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <dirent.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <sys/un.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
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

static const char *try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return errname(errno);
	close(fd);
	return "ok";
}

static int procfs(const char *file)
{
	char via[4096], comm[64] = "";
	DIR *dir = opendir("/proc");
	struct dirent *entry;
	int fd, first = 1;
	ssize_t n;

	printf("{\"pids\":");
	if (!dir) {
		printf("\"%s\"", errname(errno));
	} else {
		putchar('[');
		while ((entry = readdir(dir)))
			if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9') {
				printf("%s%s", first ? "" : ",", entry->d_name);
				first = 0;
			}
		putchar(']');
		closedir(dir);
	}
	printf(",\"self\":%d", (int)getpid());
	fd = open("/proc/1/comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf(",\"init\":\"%s\"", errname(errno));
	} else {
		n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n : 0] = 0;
		comm[strcspn(comm, "\n\"\\")] = 0;
		printf(",\"init\":\"comm:%s\"", comm);
		close(fd);
	}
	printf(",\"status\":\"%s\"", try_open("/proc/self/status", O_RDONLY));
	printf(",\"maps\":\"%s\"", try_open("/proc/self/maps", O_RDONLY));
	printf(",\"oomScoreAdj\":\"%s\"", try_open("/proc/self/oom_score_adj", O_WRONLY));
	printf(",\"comm\":\"%s\"", try_open("/proc/self/comm", O_WRONLY));
	snprintf(via, sizeof(via), "/proc/self/root%s", file);
	printf(",\"viaRoot\":\"%s\"}\n", try_open(via, O_RDONLY));
	return 0;
}

static socklen_t abstract_address(const char *name, struct sockaddr_un *addr);

/* Attach another process's segment by key: read what it holds, write over it. */
static int try_shm(key_t key, const char *text)
{
	int id = shmget(key, 0, 0);
	char *p;

	if (id < 0) {
		printf("{\"shm\":\"%s\",\"read\":null}\n", errname(errno));
		return 0;
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		printf("{\"shm\":\"%s\",\"read\":null}\n", errname(errno));
		return 0;
	}
	printf("{\"shm\":\"ok\",\"read\":\"%.32s\"}\n", p);
	strcpy(p, text);
	shmdt(p);
	return 0;
}

static int try_msg(key_t key, const char *text)
{
	struct {
		long type;
		char text[64];
	} m = { .type = 1 };
	int id = msgget(key, 0);

	snprintf(m.text, sizeof(m.text), "%s", text);
	if (id < 0 || msgsnd(id, &m, strlen(m.text) + 1, IPC_NOWAIT)) {
		printf("{\"msg\":\"%s\"}\n", errname(errno));
		return 0;
	}
	printf("{\"msg\":\"ok\"}\n");
	return 0;
}

/* The result of a clone: "ok" (the child exits at once), or the errno's name. */
static const char *clone_result(long pid)
{
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errname(errno);
	waitpid((pid_t)pid, NULL, 0);
	return "ok";
}

static int try_userns(void)
{
	struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	const char *un = unshare(CLONE_NEWUSER) ? errname(errno) : "ok";
	const char *cl = clone_result(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0));
	const char *cl3 = clone_result(syscall(SYS_clone3, &args, sizeof(args)));

	printf("{\"unshare\":\"%s\",\"clone\":\"%s\",\"clone3\":\"%s\"}\n", un, cl, cl3);
	return 0;
}

static int try_keyctl(void)
{
	/* add_key("user", "mcpguard-test", "x", 1, KEY_SPEC_SESSION_KEYRING) */
	long id = syscall(SYS_add_key, "user", "mcpguard-test", "x", 1, -3);

	printf("{\"keyring\":\"%s\"}\n", id >= 0 ? "ok" : errname(errno));
	return 0;
}

static int bind_abstract(const char *name, int seconds)
{
	struct sockaddr_un addr;
	socklen_t len = abstract_address(name, &addr);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), accepted = 0;

	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, len) || listen(fd, 8)) {
		printf("{\"bind\":\"%s\"}\n", errname(errno));
		return 0;
	}
	printf("{\"bind\":\"ok\"}\n");
	for (int ms = 0; ms < seconds * 1000; ms += 100) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1) {
			int c = accept(fd, NULL, NULL);

			if (c >= 0) {
				accepted++;
				close(c);
			}
		}
	}
	printf("{\"accepted\":%d}\n", accepted);
	return 0;
}

/* The address of the abstract unix socket NAME, and its length. */
static socklen_t abstract_address(const char *name, struct sockaddr_un *addr)
{
	size_t len = strlen(name);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (len > sizeof(addr->sun_path) - 1)
		len = sizeof(addr->sun_path) - 1;
	memcpy(addr->sun_path + 1, name, len);
	return offsetof(struct sockaddr_un, sun_path) + 1 + len;
}

static int connect_abstract(const char *name)
{
	struct sockaddr_un addr;
	socklen_t len = abstract_address(name, &addr);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, len))
		printf("{\"connect\":\"%s\"}\n", errname(errno));
	else
		printf("{\"connect\":\"ok\"}\n");
	return 0;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int stream = socket(AF_UNIX, SOCK_STREAM, 0), dgram = socket(AF_UNIX, SOCK_DGRAM, 0);
	int connected, sent;

	strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
	connected = stream >= 0 && !connect(stream, (struct sockaddr *)&addr, sizeof(addr)) ? 0 : errno;
	sent = dgram >= 0 && sendto(dgram, "x", 1, 0, (struct sockaddr *)&addr, sizeof(addr)) == 1 ? 0 : errno;
	printf("{\"connect\":\"%s\",\"sendto\":\"%s\"}\n", connected ? errname(connected) : "ok",
	       sent ? errname(sent) : "ok");
	return 0;
}

static int write_bytes(const char *path, long bytes)
{
	static char block[65536];
	long wrote = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err = 0;

	if (fd < 0) {
		printf("{\"wrote\":0,\"error\":\"%s\"}\n", errname(errno));
		return 0;
	}
	while (wrote < bytes) {
		long n = write(fd, block, bytes - wrote < (long)sizeof(block) ? bytes - wrote : (long)sizeof(block));

		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		wrote += n;
	}
	close(fd);
	if (err)
		printf("{\"wrote\":%ld,\"error\":\"%s\"}\n", wrote, errname(err));
	else
		printf("{\"wrote\":%ld,\"error\":null}\n", wrote);
	return 0;
}

static const char *outcome(int failed)
{
	return failed ? errname(errno) : "ok";
}

/* What Landlock does not mediate: a change of mode, owner, times or extended attributes. */
static int meta(const char *path)
{
	struct stat st;
	const char *mode, *owner, *times, *xattr;

	if (stat(path, &st)) {
		printf("{\"stat\":\"%s\"}\n", errname(errno));
		return 0;
	}
	mode = outcome(chmod(path, st.st_mode & 07777));
	owner = outcome(chown(path, st.st_uid, st.st_gid));
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	times = outcome(utimensat(AT_FDCWD, path, ts, 0));
	xattr = outcome(setxattr(path, "user.mcpguard", "1", 1, 0));
	if (!strcmp(xattr, "ok"))
		removexattr(path, "user.mcpguard");
	printf("{\"chmod\":\"%s\",\"chown\":\"%s\",\"utimes\":\"%s\",\"xattr\":\"%s\"}\n", mode, owner,
	       times, xattr);
	return 0;
}

static int replace(const char *path)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "saved\n", 6) != 6 || close(fd) || rename(tmp, path)) {
		printf("{\"replace\":\"%s\"}\n", errname(errno));
		return 0;
	}
	printf("{\"replace\":\"ok\"}\n");
	return 0;
}

static int move(const char *from, const char *to)
{
	printf("{\"move\":\"%s\"}\n", rename(from, to) ? errname(errno) : "ok");
	return 0;
}

static int by_handle(const char *path, const char *dir)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int mount_id, mount_fd, fd;

	if (!h)
		return 1;
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0)) {
		printf("{\"handle\":\"%s\",\"open\":null}\n", errname(errno));
		return 0;
	}
	mount_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = mount_fd < 0 ? -1 : open_by_handle_at(mount_fd, h, O_RDWR | O_CLOEXEC);
	printf("{\"handle\":\"ok\",\"open\":\"%s\"}\n", fd < 0 ? errname(errno) : "ok");
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
	if (argc == 4 && !strcmp(argv[1], "shm"))
		return try_shm((key_t)atoi(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "msg"))
		return try_msg((key_t)atoi(argv[2]), argv[3]);
	if (argc == 2 && !strcmp(argv[1], "userns"))
		return try_userns();
	if (argc == 2 && !strcmp(argv[1], "keyctl"))
		return try_keyctl();
	if (argc == 4 && !strcmp(argv[1], "bind-abstract"))
		return bind_abstract(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "procfs"))
		return procfs(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "connect-abstract"))
		return connect_abstract(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "unix"))
		return connect_unix(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "chroot")) {
		printf("{\"chroot\":\"%s\"}\n", chroot(argv[2]) ? errname(errno) : "ok");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "fsize"))
		return write_bytes(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "meta"))
		return meta(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "replace"))
		return replace(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "move"))
		return move(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "handle"))
		return by_handle(argv[2], argv[3]);
	fprintf(stderr, "usage: mcpguard-test-helper memfd-exec | socket FAMILY PROTOCOL | forks N | hog MIB | read PATH"
			" | shm KEY TEXT | msg KEY TEXT | userns | keyctl | bind-abstract NAME SECONDS | connect-abstract NAME | unix PATH | chroot DIR | fsize PATH BYTES"
			" | meta PATH | replace PATH | move FROM TO | handle PATH DIR\n");
	return 2;
}
