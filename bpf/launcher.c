// SPDX-License-Identifier: MIT
/*
 * mcpguard-exec: the launcher between the proxy and an untrusted MCP server.
 *
 *   mcpguard-exec [--cgroup DIR] [--join DIR]... [--ruleset FILE] [--isolate ipc|net|pid]...
 *                 [--seccomp] [--fsize BYTES] -- COMMAND [ARGS...]
 *   mcpguard-exec --probe
 *
 * In this order: join the server's cgroup (so the cgroup BPF programs and clean-up see every
 * process from the first instruction on) and the cgroup-v1 cgroups of its limits (--join: pids,
 * memory), move into namespaces of the server's own (--isolate: a new IPC namespace, so no SysV
 * object or POSIX message queue of the host can be reached; a new network namespace with only its
 * loopback up, for a server whose policy grants no network, so the abstract unix socket names it
 * binds are its own and no other program's; new PID and mount namespaces with a /proc of their
 * own, so the server sees no process but its own and its init: see enter_pid_namespace), read the
 * Landlock ruleset (a held launcher waits for it there: see below), in its own mount namespace make
 * every mount read-only but its write grants (readonly_outside_writes), drop the capabilities a
 * server has no business with, set no_new_privs, restrict itself with Landlock,
 * install the seccomp filter of seccomp.h (--seccomp; without --isolate ipc it also refuses SysV
 * IPC), cap the size of every file it writes (--fsize: RLIMIT_FSIZE, with SIGXFSZ ignored so a
 * write past it fails with EFBIG instead of killing the writer), close every descriptor but
 * stdin/stdout/stderr, and exec the server. The restrictions are inherited by every descendant
 * and can never be loosened. Any failure exits 126 before the server runs: the launcher never
 * starts a server with less than it was asked for.
 *
 * The ruleset is a list of records of NUL-terminated fields (see input.h), after the header
 * record "mcpguard-ruleset" "1":
 *   "abi" N                          require at least Landlock ABI N
 *   "fs" ACCESS[,ACCESS...] PATH     allow the access rights beneath PATH (or on the file PATH)
 *   "net" "connect"|"bind" PORT      allow a TCP connect to / bind on PORT
 *   "scope" "signal"                 deny signals to processes outside the domain
 *   "scope" "abstract-unix"          deny connecting to abstract unix sockets outside the domain
 *   "handle" "net"                   deny every TCP connect and bind not allowed by a "net" record
 * Anything else is refused. Every filesystem right the running kernel knows is handled (denied
 * unless allowed). A PATH that does not exist adds no rule, which can only deny more.
 *
 * `--probe` prints {"landlockAbi":N,"seccomp":true|false,"namespaces":true|false,
 * "pidNamespace":true|false} (with "error", "seccompError", "namespacesError" or
 * "pidNamespaceError" when something is missing), having installed the filter in a child and
 * checked that it refuses, moved a child into new IPC and network namespaces, and had the first
 * process of a new PID namespace mount its own /proc.
 *
 * With --isolate pid the launcher does not exec the server itself: it forks the init of the new
 * PID namespace (restricted as the server is), which forks the server, and stays as a waiter
 * that ends as the server ended (enter_pid_namespace).
 *
 * A held launcher (--ruleset on a pipe the proxy writes once the server may start) makes the
 * namespaces while it waits, and otherwise waits as the launcher that made them after the wait
 * did: a failure to make them is said once the ruleset has come (deferred), and with --isolate pid
 * the waiter takes signals with the mask and dispositions it was started with until the init has
 * read the ruleset (enter_pid_namespace), so a signal sent before the release ends it at once, and
 * the init with it, before the server is forked. So a start stopped or refused while held runs
 * nothing of the server, and one that cannot be isolated fails after its release, as the proxy
 * records it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>
#include "input.h"
#include "seccomp.h"

/* Landlock ABI 4-6 constants, absent from older UAPI headers. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define MG_ACCESS_NET_BIND_TCP (1ULL << 0)
#define MG_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define MG_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define MG_SCOPE_SIGNAL (1ULL << 1)
#define MG_RULE_NET_PORT 2

struct mg_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct mg_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

#define EXIT_LAUNCH 126

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("mcpguard-exec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_LAUNCH);
}

/* The first failure while the launcher was held, said once the wait is over (undefer). */
static char deferred[512];

/* A failure kept while held ends the launcher now (EXIT_LAUNCH). */
static void undefer(void)
{
	if (deferred[0])
		die("%s", deferred);
}

/* die(), or while held (`held`) the same words kept for undefer(). */
static void fail(int held, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!deferred[0])
		vsnprintf(deferred, sizeof(deferred), fmt, ap);
	va_end(ap);
	if (!held)
		undefer();
}

static long landlock_abi(void)
{
	return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

/* Filesystem rights the kernel of the given ABI knows. */
static uint64_t fs_rights(long abi)
{
	uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */
	if (abi >= 2)
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return all;
}

/* Rights that only make sense on a directory. */
#define DIR_ONLY                                                                                   \
	(LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |     \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |  \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)

static const struct {
	const char *name;
	uint64_t bit;
} ACCESS_NAMES[] = {
	{ "execute", LANDLOCK_ACCESS_FS_EXECUTE },
	{ "write_file", LANDLOCK_ACCESS_FS_WRITE_FILE },
	{ "read_file", LANDLOCK_ACCESS_FS_READ_FILE },
	{ "read_dir", LANDLOCK_ACCESS_FS_READ_DIR },
	{ "remove_dir", LANDLOCK_ACCESS_FS_REMOVE_DIR },
	{ "remove_file", LANDLOCK_ACCESS_FS_REMOVE_FILE },
	{ "make_char", LANDLOCK_ACCESS_FS_MAKE_CHAR },
	{ "make_dir", LANDLOCK_ACCESS_FS_MAKE_DIR },
	{ "make_reg", LANDLOCK_ACCESS_FS_MAKE_REG },
	{ "make_sock", LANDLOCK_ACCESS_FS_MAKE_SOCK },
	{ "make_fifo", LANDLOCK_ACCESS_FS_MAKE_FIFO },
	{ "make_block", LANDLOCK_ACCESS_FS_MAKE_BLOCK },
	{ "make_sym", LANDLOCK_ACCESS_FS_MAKE_SYM },
	{ "refer", LANDLOCK_ACCESS_FS_REFER },
	{ "truncate", LANDLOCK_ACCESS_FS_TRUNCATE },
	{ "ioctl_dev", LANDLOCK_ACCESS_FS_IOCTL_DEV },
};

static uint64_t parse_access(const char *list, int record)
{
	uint64_t mask = 0;
	char *copy = strdup(list), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(ACCESS_NAMES) / sizeof(ACCESS_NAMES[0]); i++)
			if (!strcmp(tok, ACCESS_NAMES[i].name))
				break;
		if (i == sizeof(ACCESS_NAMES) / sizeof(ACCESS_NAMES[0]))
			die("ruleset record %d: unknown access right \"%s\"", record, printable(tok));
		mask |= ACCESS_NAMES[i].bit;
	}
	free(copy);
	return mask;
}

struct fs_rule {
	uint64_t access;
	const char *path;
};

struct ruleset {
	long abi_required;
	int handle_net;
	uint64_t scoped;
	struct fs_rule *fs;
	size_t nfs, capfs;
	struct mg_net_port_attr *net;
	size_t nnet, capnet;
};

static long parse_number(const char *s, long max, int record, const char *what)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 0 || n > max)
		die("ruleset record %d: bad %s \"%s\"", record, what, printable(s));
	return n;
}

static void add_fs(struct ruleset *rs, const char *access, const char *path, int record)
{
	if (path[0] != '/')
		die("ruleset record %d: the path must be absolute", record);
	if (rs->nfs == rs->capfs) {
		rs->capfs = rs->capfs ? rs->capfs * 2 : 32;
		rs->fs = realloc(rs->fs, rs->capfs * sizeof(*rs->fs));
		if (!rs->fs)
			die("reading the ruleset: %s", strerror(ENOMEM));
	}
	rs->fs[rs->nfs].access = parse_access(access, record);
	rs->fs[rs->nfs].path = path;
	rs->nfs++;
}

static void add_net(struct ruleset *rs, const char *kind, const char *port_s, int record)
{
	uint64_t access = !strcmp(kind, "connect") ? MG_ACCESS_NET_CONNECT_TCP
			  : !strcmp(kind, "bind")    ? MG_ACCESS_NET_BIND_TCP
						     : 0;

	if (!access)
		die("ruleset record %d: expected \"net\" \"connect\"|\"bind\" PORT", record);
	if (rs->nnet == rs->capnet) {
		rs->capnet = rs->capnet ? rs->capnet * 2 : 8;
		rs->net = realloc(rs->net, rs->capnet * sizeof(*rs->net));
		if (!rs->net)
			die("reading the ruleset: %s", strerror(ENOMEM));
	}
	rs->net[rs->nnet].allowed_access = access;
	rs->net[rs->nnet].port = (uint64_t)parse_number(port_s, 65535, record, "port");
	rs->nnet++;
}

/* The ruleset's records (see input.h); the paths point into the buffer, which stays allocated. */
static void read_ruleset(const char *file, struct ruleset *rs)
{
	struct records in;
	const char *f[MG_MAX_FIELDS], *why;
	int n, got, err = records_read(file, &in);

	if (err)
		die("cannot read the ruleset %s: %s", file, strerror(-err));
	if (records_header(&in, "mcpguard-ruleset", "1", &why))
		die("ruleset %s: %s", file, why);
	while ((got = next_record(&in, f, &n, &why)) > 0) {
		if (!strcmp(f[0], "abi") && n == 2)
			rs->abi_required = parse_number(f[1], 1000, in.index, "ABI");
		else if (!strcmp(f[0], "fs") && n == 3)
			add_fs(rs, f[1], f[2], in.index);
		else if (!strcmp(f[0], "net") && n == 3)
			add_net(rs, f[1], f[2], in.index);
		else if (!strcmp(f[0], "scope") && n == 2 && !strcmp(f[1], "signal"))
			rs->scoped |= MG_SCOPE_SIGNAL;
		else if (!strcmp(f[0], "scope") && n == 2 && !strcmp(f[1], "abstract-unix"))
			rs->scoped |= MG_SCOPE_ABSTRACT_UNIX_SOCKET;
		else if (!strcmp(f[0], "handle") && n == 2 && !strcmp(f[1], "net"))
			rs->handle_net = 1;
		else
			die("ruleset record %d: cannot read a \"%s\" record of %d fields", in.index, printable(f[0]), n);
	}
	if (got < 0)
		die("ruleset record %d: %s", in.index, why);
}

/* Move this process into the cgroup DIR (v2 or v1: both have cgroup.procs). */
static void join_cgroup(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot join the cgroup %s: %s", dir, strerror(errno));
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, len) != len)
		die("cannot join the cgroup %s: %s", dir, strerror(errno));
	close(fd);
}

static void restrict_self(const struct ruleset *rs)
{
	long abi = landlock_abi();
	if (abi < 1)
		die("Landlock is not available here (%s)", strerror(errno));
	if (abi < rs->abi_required)
		die("the ruleset needs Landlock ABI %ld, this kernel has %ld", rs->abi_required, abi);
	if ((rs->handle_net || rs->nnet) && abi < 4)
		die("TCP port rules need Landlock ABI 4, this kernel has %ld", abi);
	if (rs->scoped && abi < 6)
		die("scopes need Landlock ABI 6, this kernel has %ld", abi);

	uint64_t handled = fs_rights(abi);
	struct mg_ruleset_attr attr = {
		.handled_access_fs = handled,
		.handled_access_net = rs->handle_net ? (MG_ACCESS_NET_BIND_TCP | MG_ACCESS_NET_CONNECT_TCP) : 0,
		.scoped = rs->scoped,
	};
	size_t size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
	int ruleset_fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset_fd < 0)
		die("landlock_create_ruleset: %s", strerror(errno));

	for (size_t i = 0; i < rs->nfs; i++) {
		int fd = open(rs->fs[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* no rule: only ever denies more */
			die("cannot open %s for a rule: %s", rs->fs[i].path, strerror(errno));
		}
		struct stat st;
		if (fstat(fd, &st))
			die("cannot stat %s: %s", rs->fs[i].path, strerror(errno));
		uint64_t access = rs->fs[i].access & handled;
		if (!S_ISDIR(st.st_mode))
			access &= ~DIR_ONLY;
		if (access) {
			struct landlock_path_beneath_attr beneath = { .allowed_access = access, .parent_fd = fd };
			if (syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0))
				die("landlock_add_rule %s: %s", rs->fs[i].path, strerror(errno));
		}
		close(fd);
	}
	for (size_t i = 0; i < rs->nnet; i++) {
		if (syscall(SYS_landlock_add_rule, ruleset_fd, MG_RULE_NET_PORT, &rs->net[i], 0))
			die("landlock_add_rule port %llu: %s", (unsigned long long)rs->net[i].port, strerror(errno));
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("cannot set no_new_privs: %s", strerror(errno));
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0))
		die("landlock_restrict_self: %s", strerror(errno));
	close(ruleset_fd);
}

/*
 * Capabilities a server never gets back, even as root: with no_new_privs set, an exec cannot
 * raise a capability above the bounding set. Raw and packet sockets (CAP_NET_RAW), network and
 * system administration, module loading, BPF, tracing and raw device access go; what ordinary
 * file work as root needs (ownership, DAC, setuid to drop privileges, kill) stays. Not
 * DAC_READ_SEARCH: DAC_OVERRIDE reads as much, and open_by_handle_at, which needs it, opens any
 * file of a filesystem through a descriptor of one of its folders, beneath no Landlock rule. Not
 * SYS_CHROOT: under a root of its choosing the server would make every name it gives mean another
 * file, and the unix socket programs judge names (bpf/unix.bpf.h).
 */
static const int KEEP_CAPS[] = { 0 /* CHOWN */,	 1 /* DAC_OVERRIDE */, 3 /* FOWNER */,		 4 /* FSETID */,
				 5 /* KILL */,	 6 /* SETGID */,       7 /* SETUID */,		 10 /* NET_BIND_SERVICE */,
				 37 /* AUDIT_READ */ };

static int keep_cap(int cap)
{
	for (size_t i = 0; i < sizeof(KEEP_CAPS) / sizeof(KEEP_CAPS[0]); i++)
		if (KEEP_CAPS[i] == cap)
			return 1;
	return 0;
}

static void drop_capabilities(void)
{
	for (int cap = 0; cap < 64; cap++) {
		if (keep_cap(cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			if (errno == EINVAL)
				break; /* past the last capability this kernel knows */
			if (geteuid() == 0)
				die("cannot drop capability %d: %s", cap, strerror(errno));
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

/* Every descriptor above stderr is closed: an inherited one is not checked by Landlock. */
static void close_stray_fds(void)
{
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
		close((int)fd);
}

/* Close every descriptor from `first` on but `a` and `b`. */
static void close_from(int first, int a, int b)
{
	int keep[2] = { a < b ? a : b, a < b ? b : a };

	for (int i = 0; i < 2; i++) {
		if (keep[i] > first)
			syscall(SYS_close_range, (unsigned)first, (unsigned)keep[i] - 1, 0U);
		if (keep[i] + 1 > first)
			first = keep[i] + 1;
	}
	syscall(SYS_close_range, (unsigned)first, ~0U, 0U);
}

/* Bring the loopback interface of a new network namespace up (it starts down). 0, or -errno. */
static int loopback_up(void)
{
	struct ifreq req = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	strcpy(req.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &req) < 0)
		err = -errno;
	req.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &req) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Namespaces of the server's own (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID with CLONE_NEWNS);
 * needs CAP_SYS_ADMIN. A new mount namespace starts as a copy whose mounts still propagate to and
 * from the host's: every mount is made private first, so the /proc mounted in it stays its own.
 * NULL, or why not.
 */
static const char *isolate(int flags)
{
	int err;

	if (flags && unshare(flags))
		return strerror(errno);
	if ((flags & CLONE_NEWNS) && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return strerror(errno);
	if ((flags & CLONE_NEWNET) && (err = loopback_up()))
		return strerror(-err);
	return NULL;
}

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#define MG_MOUNT_ATTR_RDONLY 0x00000001
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

struct mg_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

/* Every mount of this mount namespace read-only (the namespace is the server's own). 0, or -errno. */
static int mounts_readonly(void)
{
	struct mg_mount_attr attr = { .attr_set = MG_MOUNT_ATTR_RDONLY };

	return syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof(attr)) ? -errno : 0;
}

/* The rights that change what is beneath a path: a rule with one of them is a write grant. */
#define WRITE_RIGHTS                                                                                  \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |  \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |        \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |     \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)

static int shorter_first(const void *a, const void *b)
{
	size_t la = strlen(*(const char *const *)a), lb = strlen(*(const char *const *)b);

	return la < lb ? -1 : la > lb;
}

/* Whether paths[i] is, or lies beneath, one of paths[0..i) (sorted shorter first). */
static int beneath_one(const char *const *paths, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		size_t len = strlen(paths[j]);

		if (!strncmp(paths[i], paths[j], len) && (paths[i][len] == '/' || paths[i][len] == 0))
			return 1;
	}
	return 0;
}

/*
 * The host's files read-only to the server but where its ruleset lets it write. Landlock mediates
 * opening, making and removing files, not a change of mode, owner, times or extended attributes,
 * which a server running as root could otherwise make anywhere: a shell made set-user-ID, the
 * audit key made 0666. In the server's own mount namespace (--isolate pid) each write grant is
 * taken as a writable copy of its mounts (open_tree), every mount is then made read-only, and the
 * copies are put back over their paths, folders before what lies beneath them: such a change
 * outside the write grants fails with EROFS. A move between two write grants is a move between two
 * mounts, EXDEV (mv and shutil.move copy instead), as between two filesystems. NULL, or why not.
 */
static const char *readonly_outside_writes(const struct ruleset *rs)
{
	static char why[512];
	const char **paths = calloc(rs->nfs + 1, sizeof(*paths));
	int *trees = calloc(rs->nfs + 1, sizeof(*trees)), err;
	size_t n = 0;

	if (!paths || !trees)
		return strerror(ENOMEM);
	for (size_t i = 0; i < rs->nfs; i++) {
		if (!(rs->fs[i].access & WRITE_RIGHTS))
			continue;
		/* The whole tree is writable: nothing to make read-only (nor a mount over / to make). */
		if (!strcmp(rs->fs[i].path, "/")) {
			free(paths);
			free(trees);
			return NULL;
		}
		paths[n++] = rs->fs[i].path;
	}
	qsort(paths, n, sizeof(*paths), shorter_first);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		trees[i] = -1;
		/*
		 * Not there: no rule either (restrict_self). A device, pipe or socket is written through on
		 * a read-only mount all the same, and a copy of it would let its mode change (the host's
		 * /dev/null). Beneath a folder taken before: in its copy already, and a mount of its own
		 * would make a rename onto it EBUSY and a move into it EXDEV.
		 */
		if (stat(paths[i], &st) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) || beneath_one(paths, i))
			continue;
		trees[i] = (int)syscall(SYS_open_tree, AT_FDCWD, paths[i], OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE);
		if (trees[i] < 0) {
			snprintf(why, sizeof(why), "open_tree %s: %s", paths[i], strerror(errno));
			return why;
		}
	}
	if ((err = mounts_readonly())) {
		snprintf(why, sizeof(why), "mount_setattr / read-only: %s", strerror(-err));
		return why;
	}
	for (size_t i = 0; i < n; i++) {
		if (trees[i] < 0)
			continue;
		if (syscall(SYS_move_mount, trees[i], "", AT_FDCWD, paths[i], MOVE_MOUNT_F_EMPTY_PATH)) {
			snprintf(why, sizeof(why), "move_mount %s: %s", paths[i], strerror(errno));
			return why;
		}
		close(trees[i]);
	}
	free(paths);
	free(trees);
	return NULL;
}

/*
 * The private /proc, in the first process of the new PID namespace: a procfs of that namespace
 * over the host's, so /proc lists the namespace's processes only (the init, the server and its
 * children). Files on it can neither be run nor be device nodes or set-id programs.
 */
static const char *mount_private_proc(void)
{
	char self[16];
	ssize_t n;

	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return strerror(errno);
	/* This process is the namespace's first: /proc/self must say so, or the mount is not its own. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n < 0)
		return strerror(errno);
	self[n] = 0;
	return strcmp(self, "1") ? "/proc/self is not the namespace's first process" : NULL;
}

/* The signals the launcher passes on to the server, and SIGCHLD: blocked, taken by sigwaitinfo. */
static const int FORWARDED[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static void supervised_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(FORWARDED) / sizeof(FORWARDED[0]); i++)
		sigaddset(set, FORWARDED[i]);
	sigaddset(set, SIGCHLD);
}

/* The signal mask the launcher was started with, which the server gets back. */
static sigset_t started_mask;

/*
 * Until `child` ends: pass every forwarded signal on to it, and reap every other child (the init
 * of a PID namespace is the parent of every orphan in it). Returns the child's wait status.
 */
static int supervise(pid_t child)
{
	sigset_t set;
	siginfo_t info;
	int status;
	pid_t pid;

	supervised_signals(&set);
	for (;;) {
		int sig = sigwaitinfo(&set, &info);

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			die("waiting for the server: %s", strerror(errno));
		}
		if (sig != SIGCHLD) {
			kill(child, sig);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (pid == child)
				return status;
	}
}

/* End as a process that ended with wait status `status` did: the same exit status or signal. */
static void exit_as(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = { 0, 0 };
		sigset_t only;

		setrlimit(RLIMIT_CORE, &none); /* the server's crash is not the launcher's core dump */
		signal(sig, SIG_DFL);
		sigemptyset(&only);
		sigaddset(&only, sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
		raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_LAUNCH);
}

/* The write end of the pipe on which the init tells the outer launcher the server's wait status. */
static int status_fd = -1;

/* The init's end of the socket to a held waiter (enter_pid_namespace), until release_waiter(). */
static int hold_fd = -1;

/*
 * The held waiter: wait, with the signal mask it was started with, until the init says it has
 * its ruleset; then block the supervised signals again and say so back. A signal meanwhile ends
 * it by its disposition then, as it ended the launcher that waited for its ruleset first (the
 * init follows by its parent-death signal). False when the init ended first (a refused start,
 * a failure): its wait status is in `status`. The socket closes either way.
 */
static int waiter_released(int fd, pid_t init, int *status)
{
	sigset_t set;
	char said;
	ssize_t n;

	sigprocmask(SIG_SETMASK, &started_mask, NULL);
	do
		n = read(fd, &said, 1);
	while (n < 0 && errno == EINTR);
	supervised_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die("cannot block signals: %s", strerror(errno));
	if (n == 1 && send(fd, "r", 1, MSG_NOSIGNAL) == 1) {
		close(fd);
		return 1;
	}
	close(fd);
	/* Its SIGCHLD may have come unblocked, and gone: wait for it here. */
	while (waitpid(init, status, 0) < 0)
		if (errno != EINTR)
			die("waiting for the server's PID namespace: %s", strerror(errno));
	return 0;
}

/* In the init of a held launcher, the ruleset read: tell the waiter, and go on once it answers. */
static void release_waiter(void)
{
	char said;
	ssize_t n;

	if (hold_fd < 0)
		return;
	if (send(hold_fd, "r", 1, MSG_NOSIGNAL) != 1)
		_exit(EXIT_LAUNCH); /* the waiter is gone: so are we, by the parent-death signal */
	do
		n = read(hold_fd, &said, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(EXIT_LAUNCH);
	close(hold_fd);
	hold_fd = -1;
}

/*
 * --isolate pid: the launcher forks. Its child is the first process (PID 1) of the new PID
 * namespace; it mounts the private /proc and returns to be restricted, then starts the server
 * and stays as its init (run_init). The launcher itself, the process the proxy started, stays
 * outside as a waiter: it passes the forwarded signals on to the init, and ends as the server
 * ended (its exit status, or its signal), which the init reports on a pipe. The init and every
 * process of the namespace are killed when the waiter dies, however it dies: the init by its
 * parent-death signal, the others by the kernel when their init is gone. The init leads a
 * process group of its own, so a signal the proxy sends to the waiter's group reaches the
 * server once, passed on, not twice. Returns in the init only.
 *
 * `held` (a ruleset still to come on fd 3): until the init has read it, the waiter does not
 * supervise but waits on a socket to the init with the signal mask it was started with, so a
 * signal ends it (and the init with it) as it ended the launcher that waited for its ruleset
 * first (waiter_released, release_waiter). A failure here is kept for then (fail).
 */
static void enter_pid_namespace(int held)
{
	sigset_t set;
	int pipefd[2], hold[2] = { -1, -1 }, outer_fd, status = 0, report;
	pid_t init;
	const char *why;

	supervised_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, &started_mask)) {
		fail(held, "cannot block signals: %s", strerror(errno));
		return;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		fail(held, "cannot make a pipe: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &started_mask, NULL);
		return;
	}
	if (held && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hold)) {
		fail(held, "cannot make a socket pair: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &started_mask, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
		return;
	}
	outer_fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	init = fork();
	if (init < 0) {
		/* Said after the wait (held): no init to wait in, so the signals go back as they were. */
		fail(held, "cannot start the server's PID namespace: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &started_mask, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
		if (held) {
			close(hold[0]);
			close(hold[1]);
		}
		if (outer_fd >= 0)
			close(outer_fd);
		return;
	}
	if (init == 0) {
		struct pollfd outer = { .fd = outer_fd, .events = POLLIN };

		close(pipefd[0]);
		status_fd = pipefd[1];
		if (held) {
			close(hold[0]);
			hold_fd = hold[1];
		}
		/* The waiter's death kills the init, and the kernel every other process of the namespace. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			fail(held, "cannot set the parent-death signal: %s", strerror(errno));
		/* The waiter died before that was set: a pidfd is readable once its process exited. */
		if (outer_fd >= 0 && poll(&outer, 1, 0) > 0)
			_exit(EXIT_LAUNCH);
		if (outer_fd >= 0)
			close(outer_fd);
		if (setpgid(0, 0))
			fail(held, "cannot make a process group: %s", strerror(errno));
		else if ((why = mount_private_proc()))
			fail(held, "cannot mount the server's own /proc: %s", why);
		return;
	}
	if (outer_fd >= 0)
		close(outer_fd);
	close(pipefd[1]);
	/* The waiter reads and writes nothing of the server's: only the server holds its stdin and stdout. */
	close(0);
	close(1);
	if (held) {
		close(hold[1]);
		/* Nor the ruleset: the init reads it (fd 3 by the proxy's convention, or any other). */
		close_from(3, pipefd[0], hold[0]);
		if (!waiter_released(hold[0], init, &status))
			goto ended;
	}
	status = supervise(init);
ended:
	if (read(pipefd[0], &report, sizeof(report)) == (ssize_t)sizeof(report))
		status = report;
	exit_as(status);
}

/*
 * The init of the server's PID namespace, restricted as the server is: fork the server, then
 * supervise it (signals passed on, orphans reaped), report its wait status to the waiter and exit
 * as it did. Everything left in the namespace is killed with the init.
 */
static void run_init(char **command)
{
	int status;
	pid_t server = fork();

	if (server < 0)
		die("cannot start the server: %s", strerror(errno));
	if (server == 0) {
		sigprocmask(SIG_SETMASK, &started_mask, NULL);
		close_stray_fds();
		execvp(command[0], command);
		die("cannot execute %s: %s", command[0], strerror(errno));
	}
	/* The init keeps stderr and the report pipe (as fd 3) only. */
	close(0);
	close(1);
	if (dup2(status_fd, 3) != 3)
		_exit(EXIT_LAUNCH);
	status_fd = 3;
	syscall(SYS_close_range, 4U, ~0U, 0U);
	status = supervise(server);
	if (write(status_fd, &status, sizeof(status)) != (ssize_t)sizeof(status))
		_exit(EXIT_LAUNCH);
	_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_LAUNCH);
}

/* Every file the server writes stays at most `bytes` long; a write past it fails with EFBIG. */
static void cap_file_size(unsigned long long bytes)
{
	struct rlimit limit;

	/* Never above a limit the launcher was given: only a lower one can be set unprivileged. */
	if (getrlimit(RLIMIT_FSIZE, &limit))
		die("cannot read the file size limit: %s", strerror(errno));
	if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max > bytes)
		limit.rlim_max = bytes;
	limit.rlim_cur = limit.rlim_max;
	/* An ignored signal stays ignored across exec: the writer gets EFBIG, not a kill. */
	if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit(RLIMIT_FSIZE, &limit))
		die("cannot limit the size of files to %llu bytes: %s", bytes, strerror(errno));
}

/* Probe exit statuses, each a thing the filter failed to do. */
static const char *const SECCOMP_PROBE_FAILURES[] = {
	[1] = "the filter cannot be installed",
	[2] = "the filter does not refuse memfd exec",
	[3] = "the filter does not refuse other socket families",
	[4] = "the filter refuses NETLINK_ROUTE sockets",
	[5] = "the filter does not refuse user namespaces",
	[6] = "the filter does not refuse clone3",
	[7] = "the filter does not refuse the kernel keyring",
	[8] = "the filter does not refuse SysV IPC",
	[9] = "the filter refuses an ordinary fork",
};

/* In a child: the filter installed with `options`, checked call by call. Exits with a status above. */
static void probe_filter(unsigned int options)
{
	int fd;
	pid_t child;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || mg_seccomp_install(options))
		_exit(1);
	if (syscall(SYS_memfd_create, "probe", 0) >= 0 || errno != ENOSYS)
		_exit(2);
	if (socket(AF_PACKET, SOCK_DGRAM, 0) >= 0 || errno != EAFNOSUPPORT)
		_exit(3);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		_exit(4);
	close(fd);
	if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
		_exit(5);
	if (syscall(__NR_clone3, NULL, 0) >= 0 || errno != ENOSYS)
		_exit(6);
	if (syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0) >= 0 || errno != ENOSYS)
		_exit(7);
	if ((options & MG_SECCOMP_SYSV) && (syscall(SYS_msgget, 0 /* IPC_PRIVATE */, 0600) >= 0 || errno != ENOSYS))
		_exit(8);
	child = fork();
	if (child == 0)
		_exit(0);
	if (child < 0 || waitpid(child, NULL, 0) != child)
		_exit(9);
	_exit(0);
}

/* Run fn(arg) in a child; NULL when it exited 0, else its failure from `names`. */
static const char *in_child(void (*fn)(unsigned int), unsigned int arg, const char *const *names, size_t n)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return strerror(errno);
	if (pid == 0)
		fn(arg);
	if (waitpid(pid, &status, 0) < 0)
		return strerror(errno);
	if (!WIFEXITED(status))
		return "the probe was killed";
	if (WEXITSTATUS(status) == 0)
		return NULL;
	return WEXITSTATUS(status) < n && names[WEXITSTATUS(status)] ? names[WEXITSTATUS(status)] : "the probe failed";
}

/*
 * In children: the filter refuses what it must and lets through what it must, both as it is
 * installed with an IPC namespace (SysV left to the namespace) and without one. NULL when it
 * works, else why not.
 */
static const char *probe_seccomp(void)
{
	const size_t n = sizeof(SECCOMP_PROBE_FAILURES) / sizeof(SECCOMP_PROBE_FAILURES[0]);
	const char *why = in_child(probe_filter, 0, SECCOMP_PROBE_FAILURES, n);

	return why ? why : in_child(probe_filter, MG_SECCOMP_SYSV, SECCOMP_PROBE_FAILURES, n);
}

static void probe_isolate(unsigned int flags)
{
	_exit(isolate((int)flags) ? 1 : 0);
}

static const char *const ISOLATE_FAILURES[] = { [1] = "unshare(CLONE_NEWIPC|CLONE_NEWNET) failed (needs CAP_SYS_ADMIN)" };

/* In a child: new PID and mount namespaces, and a grandchild that mounts its own /proc there. */
static void probe_pid_namespace(unsigned int unused)
{
	int status;
	pid_t pid;

	(void)unused;
	if (isolate(CLONE_NEWPID | CLONE_NEWNS))
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(2);
	if (pid == 0)
		_exit(mount_private_proc() ? 3 : mounts_readonly() ? 4 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		_exit(2);
	_exit(WEXITSTATUS(status));
}

static const char *const PID_NAMESPACE_FAILURES[] = {
	[1] = "unshare(CLONE_NEWPID|CLONE_NEWNS) failed (needs CAP_SYS_ADMIN)",
	[2] = "the first process of a new PID namespace could not be started",
	[3] = "a new PID namespace cannot mount its own /proc",
	[4] = "a new mount namespace cannot be made read-only (mount_setattr, Linux 5.12)",
};

static int probe(void)
{
	long abi = landlock_abi();
	const char *landlock_error = abi < 0 ? strerror(errno) : NULL;
	const char *seccomp_error = probe_seccomp();
	const char *ns_error = in_child(probe_isolate, CLONE_NEWIPC | CLONE_NEWNET, ISOLATE_FAILURES, 2);
	const char *pid_error = in_child(probe_pid_namespace, 0, PID_NAMESPACE_FAILURES, 5);

	printf("{\"landlockAbi\":%ld", abi < 0 ? 0 : abi);
	if (landlock_error)
		printf(",\"error\":\"%s\"", landlock_error);
	printf(",\"seccomp\":%s", seccomp_error ? "false" : "true");
	if (seccomp_error)
		printf(",\"seccompError\":\"%s\"", seccomp_error);
	printf(",\"namespaces\":%s", ns_error ? "false" : "true");
	if (ns_error)
		printf(",\"namespacesError\":\"%s\"", ns_error);
	printf(",\"pidNamespace\":%s", pid_error ? "false" : "true");
	if (pid_error)
		printf(",\"pidNamespaceError\":\"%s\"", pid_error);
	printf("}\n");
	return 0;
}

#define USAGE                                                                                \
	"usage: mcpguard-exec [--cgroup DIR] [--join DIR]... [--ruleset FILE] [--isolate ipc|net|pid]... " \
	"[--seccomp] [--fsize BYTES] -- COMMAND [ARGS...] | --probe"
#define MAX_JOIN 8

int main(int argc, char **argv)
{
	const char *cgroup = NULL, *ruleset_file = NULL, *join[MAX_JOIN], *why;
	int i = 1, n_join = 0, seccomp = 0, namespaces = 0;
	unsigned long long fsize = 0;
	struct ruleset rs = { 0 };

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--probe")) {
			return probe();
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			cgroup = argv[++i];
		} else if (!strcmp(argv[i], "--join") && i + 1 < argc && n_join < MAX_JOIN) {
			join[n_join++] = argv[++i];
		} else if (!strcmp(argv[i], "--ruleset") && i + 1 < argc) {
			ruleset_file = argv[++i];
		} else if (!strcmp(argv[i], "--seccomp")) {
			seccomp = 1;
		} else if (!strcmp(argv[i], "--isolate") && i + 1 < argc && !strcmp(argv[i + 1], "ipc")) {
			namespaces |= CLONE_NEWIPC;
			i++;
		} else if (!strcmp(argv[i], "--isolate") && i + 1 < argc && !strcmp(argv[i + 1], "net")) {
			namespaces |= CLONE_NEWNET;
			i++;
		} else if (!strcmp(argv[i], "--isolate") && i + 1 < argc && !strcmp(argv[i + 1], "pid")) {
			namespaces |= CLONE_NEWPID | CLONE_NEWNS;
			i++;
		} else if (!strcmp(argv[i], "--fsize") && i + 1 < argc) {
			char *end;

			errno = 0;
			fsize = strtoull(argv[++i], &end, 10);
			if (errno || end == argv[i] || *end || fsize == 0)
				die("--fsize takes a number of bytes above 0, not \"%s\"", printable(argv[i]));
		} else {
			die(USAGE);
		}
	}
	if (i >= argc)
		die("no command given");

	if (cgroup)
		join_cgroup(cgroup);
	for (int j = 0; j < n_join; j++)
		join_cgroup(join[j]);
	/*
	 * The namespaces, then the ruleset: a held launcher (fd 3) makes them while the proxy still
	 * compiles what it sends, and says why they could not be made only after that (see the top).
	 */
	if ((why = isolate(namespaces)))
		fail(ruleset_file != NULL, "cannot give the server namespaces of its own: %s", why);
	/* From here on in the init of the new PID namespace, over its own /proc. */
	else if (namespaces & CLONE_NEWPID)
		enter_pid_namespace(ruleset_file != NULL);
	if (ruleset_file)
		read_ruleset(ruleset_file, &rs);
	/* Released: the waiter first (a signal before it ends both), then a failure kept meanwhile. */
	release_waiter();
	undefer();
	/* Before Landlock, which refuses a restricted process any change of its mounts. */
	if (ruleset_file && (namespaces & CLONE_NEWNS) && (why = readonly_outside_writes(&rs)))
		die("cannot make the host's files read-only to the server: %s", why);
	drop_capabilities();
	if (ruleset_file)
		restrict_self(&rs);
	else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("cannot set no_new_privs: %s", strerror(errno));
	if (seccomp) {
		/* Without an IPC namespace of its own, SysV IPC would reach the host's objects. */
		int err = mg_seccomp_install((namespaces & CLONE_NEWIPC) ? 0 : MG_SECCOMP_SYSV);
		if (err)
			die("cannot install the seccomp filter: %s", strerror(-err));
	}
	if (fsize)
		cap_file_size(fsize);
	if (namespaces & CLONE_NEWPID)
		run_init(&argv[i]);
	close_stray_fds();
	execvp(argv[i], &argv[i]);
	die("cannot execute %s: %s", argv[i], strerror(errno));
}
