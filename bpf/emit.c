// SPDX-License-Identifier: MIT
/*
 * Events from the ring buffer as JSON lines on stdout, each flushed at once:
 *   {"type":"deny","backend":"cgroup-bpf"|"bpf-lsm","op":HOOK,"pid":N,"comm":S, then for a
 *     socket "family":4|6,"addr":S,"port":N (or "af":N for another family) and "proto":S (and for
 *     a pathname unix socket "path":S), for a
 *     file "access":"rwx" (what was needed) and "path":S}
 *   {"type":"denied","backend":"landlock"|"read-only-mounts" (errno 30),"syscall":S,"errno":N,
 *     "pid":N,"comm":S, then "path":S
 *     (and "to":S, the destination of a rename or link) or "family","addr","port" when known,
 *     and for a file "access":"rwx" (what the call asked for: an open's flags)}
 *   {"type":"exec","pid":N,"ppid":N,"filename":S}
 *   {"type":"fork","pid":N,"child":N}
 *   {"type":"exit","pid":N,"code":N} (with "signal":N when a signal ended it)
 * Strings are JSON-escaped; bytes that are not UTF-8 become U+FFFD.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include "loader.h"
#include "events.h"
#include "lsm.h"
#include "telemetry.h"

static const char *const op_names[] = {
	[MCPGUARD_OP_CONNECT4] = "connect4",
	[MCPGUARD_OP_CONNECT6] = "connect6",
	[MCPGUARD_OP_SENDMSG4] = "sendmsg4",
	[MCPGUARD_OP_SENDMSG6] = "sendmsg6",
	[MCPGUARD_OP_SOCK_CREATE] = "sock_create",
	[MCPGUARD_OP_FILE_OPEN] = "file_open",
	[MCPGUARD_OP_INODE_CREATE] = "inode_create",
	[MCPGUARD_OP_PATH_TRUNCATE] = "path_truncate",
	[MCPGUARD_OP_PATH_UNLINK] = "path_unlink",
	[MCPGUARD_OP_PATH_RENAME] = "path_rename",
	[MCPGUARD_OP_PATH_MKDIR] = "path_mkdir",
	[MCPGUARD_OP_PATH_RMDIR] = "path_rmdir",
	[MCPGUARD_OP_PATH_MKNOD] = "path_mknod",
	[MCPGUARD_OP_PATH_SYMLINK] = "path_symlink",
	[MCPGUARD_OP_PATH_LINK] = "path_link",
	[MCPGUARD_OP_BPRM_CHECK_SECURITY] = "bprm_check_security",
	[MCPGUARD_OP_SOCKET_CONNECT] = "socket_connect",
	[MCPGUARD_OP_SOCKET_SENDMSG] = "socket_sendmsg",
	[MCPGUARD_OP_SOCKET_CREATE] = "socket_create",
	[MCPGUARD_OP_CONNECT_UNIX] = "connect_unix",
	[MCPGUARD_OP_SENDMSG_UNIX] = "sendmsg_unix",
};

static const char *op_name(unsigned int op)
{
	return op < sizeof(op_names) / sizeof(op_names[0]) && op_names[op] ? op_names[op] : "unknown";
}

static const char *syscall_name(unsigned int nr)
{
	switch (nr) {
	case MCPGUARD_NR_OPEN:
		return "open";
	case MCPGUARD_NR_CREAT:
		return "creat";
	case MCPGUARD_NR_TRUNCATE:
		return "truncate";
	case MCPGUARD_NR_MKDIR:
		return "mkdir";
	case MCPGUARD_NR_MKDIRAT:
		return "mkdirat";
	case MCPGUARD_NR_RMDIR:
		return "rmdir";
	case MCPGUARD_NR_UNLINK:
		return "unlink";
	case MCPGUARD_NR_UNLINKAT:
		return "unlinkat";
	case MCPGUARD_NR_RENAME:
		return "rename";
	case MCPGUARD_NR_RENAMEAT:
		return "renameat";
	case MCPGUARD_NR_RENAMEAT2:
		return "renameat2";
	case MCPGUARD_NR_LINK:
		return "link";
	case MCPGUARD_NR_LINKAT:
		return "linkat";
	case MCPGUARD_NR_SYMLINK:
		return "symlink";
	case MCPGUARD_NR_SYMLINKAT:
		return "symlinkat";
	case MCPGUARD_NR_OPENAT:
		return "openat";
	case MCPGUARD_NR_OPENAT2:
		return "openat2";
	case MCPGUARD_NR_EXECVE:
		return "execve";
	case MCPGUARD_NR_EXECVEAT:
		return "execveat";
	case MCPGUARD_NR_CONNECT:
		return "connect";
	case MCPGUARD_NR_SENDTO:
		return "sendto";
	case MCPGUARD_NR_SENDMSG:
		return "sendmsg";
	case MCPGUARD_NR_CHMOD:
		return "chmod";
	case MCPGUARD_NR_FCHMOD:
		return "fchmod";
	case MCPGUARD_NR_FCHMODAT:
		return "fchmodat";
	case MCPGUARD_NR_FCHMODAT2:
		return "fchmodat2";
	case MCPGUARD_NR_CHOWN:
		return "chown";
	case MCPGUARD_NR_FCHOWN:
		return "fchown";
	case MCPGUARD_NR_LCHOWN:
		return "lchown";
	case MCPGUARD_NR_FCHOWNAT:
		return "fchownat";
	case MCPGUARD_NR_UTIME:
		return "utime";
	case MCPGUARD_NR_UTIMES:
		return "utimes";
	case MCPGUARD_NR_FUTIMESAT:
		return "futimesat";
	case MCPGUARD_NR_UTIMENSAT:
		return "utimensat";
	case MCPGUARD_NR_SETXATTR:
		return "setxattr";
	case MCPGUARD_NR_LSETXATTR:
		return "lsetxattr";
	case MCPGUARD_NR_FSETXATTR:
		return "fsetxattr";
	case MCPGUARD_NR_SETXATTRAT:
		return "setxattrat";
	case MCPGUARD_NR_REMOVEXATTR:
		return "removexattr";
	case MCPGUARD_NR_LREMOVEXATTR:
		return "lremovexattr";
	case MCPGUARD_NR_FREMOVEXATTR:
		return "fremovexattr";
	case MCPGUARD_NR_REMOVEXATTRAT:
		return "removexattrat";
	default:
		return "unknown";
	}
}

static bool socket_op(unsigned int op)
{
	return op <= MCPGUARD_OP_SOCK_CREATE || op >= MCPGUARD_OP_SOCKET_CONNECT;
}

static bool create_op(unsigned int op)
{
	return op == MCPGUARD_OP_SOCK_CREATE || op == MCPGUARD_OP_SOCKET_CREATE;
}

static const char *proto_name(const struct mcpguard_event *e)
{
	if (e->family == AF_PACKET)
		return "packet";
	if (e->sock_type == SOCK_RAW)
		return "raw";
	switch (e->protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_MPTCP:
		return "mptcp";
	}
	return e->sock_type == SOCK_STREAM ? "stream" : e->sock_type == SOCK_DGRAM ? "dgram" : "other";
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if there is none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* A JSON string of the first max bytes of s (up to a NUL); bytes that are not UTF-8 become U+FFFD. */
static void put_str(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);

	putchar('"');
	while (n) {
		size_t len = utf8_seq(p, n);

		if (len == 0) {
			fputs("\\ufffd", stdout);
			len = 1;
		} else if (*p == '"' || *p == '\\') {
			printf("\\%c", *p);
		} else if (*p == '\n') {
			fputs("\\n", stdout);
		} else if (*p == '\t') {
			fputs("\\t", stdout);
		} else if (*p < 0x20) {
			printf("\\u%04x", *p);
		} else {
			fwrite(p, 1, len, stdout);
		}
		p += len;
		n -= len;
	}
	putchar('"');
}

static void put_common(const char *type, const struct mcpguard_event *e)
{
	printf("{\"type\":\"%s\",", type);
	if (e->type == MCPGUARD_EV_DENY)
		printf("\"backend\":\"%s\",\"op\":\"%s\",",
		       e->backend == MCPGUARD_BACKEND_BPF_LSM ? "bpf-lsm" : "cgroup-bpf", op_name(e->op));
	else
		/* EROFS: a write outside the write grants, refused by the mounts the launcher made read-only. */
		printf("\"backend\":\"%s\",\"syscall\":\"%s\",\"errno\":%u,",
		       e->errno_ == EROFS ? "read-only-mounts" : "landlock", syscall_name(e->op), e->errno_);
	printf("\"pid\":%u,\"comm\":", e->pid);
	put_str(e->comm, sizeof(e->comm));
}

/*
 * "family" 4 or 6 with "addr" and "port" (unless with_addr is false: a socket being created has
 * none); another address family as "af".
 */
static void put_address(const struct mcpguard_event *e, bool with_addr)
{
	char text[INET6_ADDRSTRLEN];

	if ((e->family == AF_INET || e->family == AF_INET6) && !with_addr) {
		printf(",\"family\":%d", e->family == AF_INET ? 4 : 6);
	} else if (e->family == AF_INET || e->family == AF_INET6) {
		inet_ntop(e->family, e->addr, text, sizeof(text));
		printf(",\"family\":%d,\"addr\":\"%s\",\"port\":%u", e->family == AF_INET ? 4 : 6, text, e->port);
	} else if (e->family) {
		printf(",\"af\":%u", e->family);
	}
}

static void put_access(unsigned int access)
{
	printf(",\"access\":\"%s%s%s\"", access & MCPGUARD_ACCESS_READ ? "r" : "", access & MCPGUARD_ACCESS_WRITE ? "w" : "",
	       access & MCPGUARD_ACCESS_EXEC ? "x" : "");
}

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

/*
 * The root of the server's own mount namespace, kept open from the first event of a process in
 * one (the server's start): paths of later events are judged there, also once the process that
 * made them, or every process of the server, has ended (the loader may read its events late).
 * -1 until then; the host's root serves where the server has no mount namespace of its own.
 */
static int server_root = -1;

static ino_t mount_namespace(unsigned int pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void note_process(unsigned int pid)
{
	static ino_t ours;
	char root[64];
	ino_t theirs;

	if (server_root >= 0 || !pid)
		return;
	if (!ours)
		ours = mount_namespace(0);
	if (!(theirs = mount_namespace(pid)) || theirs == ours)
		return;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	server_root = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The directory holding a path, as the process that named it sees it. */
struct parent {
	bool known;
	dev_t dev;
	uint64_t mount; /* its mount's id, 0 where the kernel does not say */
	bool read_only;
};

/*
 * The directory holding `path`, as the process `pid` names it: an absolute one beneath the
 * server's root (its own mount namespace, where it has one), a relative one beneath its working
 * directory; unknown when it cannot be known (the process is gone, a path relative to another
 * directory descriptor).
 */
static struct parent parent_of(unsigned int pid, const char *path, size_t max)
{
	char full[PATH_MAX + 64], *slash;
	struct parent p = { 0 };
	struct statx stx;
	struct statvfs vfs;
	size_t n = strnlen(path, max);
	int dir = AT_FDCWD, fd;

	if (n == 0)
		return p;
	if (path[0] == '/' && server_root >= 0) {
		dir = server_root;
		snprintf(full, sizeof(full), ".%.*s", (int)n, path);
	} else if (path[0] == '/') {
		snprintf(full, sizeof(full), "%.*s", (int)n, path);
	} else {
		snprintf(full, sizeof(full), "/proc/%u/cwd/%.*s", pid, (int)n, path);
	}
	slash = strrchr(full, '/');
	if (slash)
		*slash = '\0';
	if (statx(dir, full, 0, STATX_MNT_ID, &stx))
		return p;
	p.known = true;
	p.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	p.mount = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0;
	fd = openat(dir, full, O_PATH | O_DIRECTORY | O_CLOEXEC);
	p.read_only = fd >= 0 && fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
	if (fd >= 0)
		close(fd);
	return p;
}

/*
 * A rename or link that failed with EXDEV was refused by no one when it crossed filesystems, or
 * mounts into a writable one (two write grants of a server whose mounts are read-only but its
 * write grants: mv copies instead); only Landlock refuses one within a mount with EXDEV, and a
 * move onto a read-only mount is the launcher's refusal.
 */
static bool crossed_filesystems(const struct mcpguard_event *e)
{
	struct parent from, to;

	if (e->type != MCPGUARD_EV_DENIED || e->errno_ != EXDEV || !e->has_path || !e->has_path2)
		return false;
	from = parent_of(e->pid, e->path, sizeof(e->path));
	to = parent_of(e->pid, e->path2, sizeof(e->path2));
	if (!from.known || !to.known)
		return false;
	return from.dev != to.dev || (from.mount && to.mount && from.mount != to.mount && !to.read_only);
}

int emit_event(void *ctx, void *data, size_t size)
{
	const struct mcpguard_event *e = data;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;
	note_process(e->pid);
	if (crossed_filesystems(e))
		return 0;
	switch (e->type) {
	case MCPGUARD_EV_DENY:
		put_common("deny", e);
		put_address(e, !create_op(e->op));
		if (socket_op(e->op))
			printf(",\"proto\":\"%s\"", proto_name(e));
		if (e->access)
			put_access(e->access);
		break;
	case MCPGUARD_EV_DENIED:
		put_common("denied", e);
		put_address(e, true);
		if (e->access)
			put_access(e->access);
		break;
	case MCPGUARD_EV_EXEC:
		printf("{\"type\":\"exec\",\"pid\":%u,\"ppid\":%u,\"filename\":", e->pid, e->other);
		put_str(e->path, sizeof(e->path));
		break;
	case MCPGUARD_EV_FORK:
		printf("{\"type\":\"fork\",\"pid\":%u,\"child\":%u", e->pid, e->other);
		break;
	case MCPGUARD_EV_EXIT:
		/* A wait status: exit code in bits 8-15, or the killing signal in bits 0-6. */
		printf("{\"type\":\"exit\",\"pid\":%u,\"code\":%u", e->pid, (e->other >> 8) & 0xff);
		if (e->other & 0x7f)
			printf(",\"signal\":%u", e->other & 0x7f);
		break;
	default:
		return 0;
	}
	if (e->has_path && e->type != MCPGUARD_EV_EXEC) {
		fputs(",\"path\":", stdout);
		put_str(e->path, sizeof(e->path));
	}
	if (e->has_path2 && e->type == MCPGUARD_EV_DENIED) {
		fputs(",\"to\":", stdout);
		put_str(e->path2, sizeof(e->path2));
	}
	puts("}");
	fflush(stdout);
	return 0;
}

void emit_ready(uint64_t cgroup_id, const struct links *links, bool lsm, const double ms[3])
{
	printf("{\"type\":\"ready\",\"cgroupId\":%llu,\"programs\":[", (unsigned long long)cgroup_id);
	for (int i = 0; i < links->n; i++) {
		if (i)
			putchar(',');
		put_str(links->name[i], 256);
	}
	printf("],\"lsm\":%s,\"loadedMs\":%.1f,\"policyMs\":%.1f,\"attachedMs\":%.1f}\n", lsm ? "true" : "false", ms[0], ms[1], ms[2]);
	fflush(stdout);
}
