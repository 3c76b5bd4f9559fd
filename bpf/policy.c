// SPDX-License-Identifier: MIT
/*
 * The loader's policy: records of NUL-terminated fields (see input.h) after the header record
 * "mcpguard-policy" "1":
 *   "net" "allow4" A.B.C.D PORT   allow connects and sends to the IPv4 address (PORT 0: any port)
 *   "net" "allow6" V6ADDR PORT    the same for IPv6; an IPv4-mapped address is an IPv4 rule
 *   "fs" LETTERS PATH             r, w, x on the file or directory tree PATH (BPF LSM only)
 *   "dns" A.B.C.D PORT V6ADDR PORT  send the cgroup's port-53 traffic to this resolver (net.h);
 *                                 "-" and "0" for a family it does not serve
 *   "unix" PATH                   allow connects and sends to the pathname unix socket PATH,
 *                                 absolute, byte for byte (unix.bpf.h; only with --unix)
 * Anything else is an error. A PATH is taken byte for byte (any byte but NUL); one that does not
 * exist adds nothing: it can only deny more.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "lsm.h"
#include "net.h"
#include "input.h"
#include "unix.h"

struct fs_rule {
	__u8 access;
	const char *path;
};

struct policy {
	struct mcpguard_net4_key *net4;
	struct mcpguard_net6_key *net6;
	struct fs_rule *fs;
	const char **unix_paths;
	size_t n_net4, n_net6, n_fs, n_unix;
	bool has_dns;
	struct mcpguard_dns_value dns;
};

#define APPEND(array, count)                                                        \
	({                                                                          \
		(array) = realloc((array), ((count) + 1) * sizeof(*(array)));       \
		if (!(array))                                                       \
			fail("reading the policy: %s", strerror(ENOMEM));           \
		memset(&(array)[(count)], 0, sizeof(*(array)));                     \
		&(array)[(count)++];                                                \
	})

static long parse_port(const char *s)
{
	char *end;
	long port;

	errno = 0;
	port = strtol(s, &end, 10);
	if (errno || end == s || *end || port < 0 || port > 65535)
		return -1;
	return port;
}

static int parse_access(const char *s)
{
	int access = 0;

	for (; *s; s++) {
		if (*s == 'r')
			access |= MCPGUARD_ACCESS_READ;
		else if (*s == 'w')
			access |= MCPGUARD_ACCESS_WRITE;
		else if (*s == 'x')
			access |= MCPGUARD_ACCESS_EXEC;
		else
			return -1;
	}
	return access ? access : -1;
}

static void add_net(struct policy *p, const char *file, int record, const char *kind, const char *addr,
		    const char *port_s)
{
	long port = parse_port(port_s);
	unsigned char bytes[16];

	if (port < 0)
		fail("policy %s record %d: bad port \"%s\"", file, record, printable(port_s));
	if (!strcmp(kind, "allow4")) {
		struct mcpguard_net4_key *k;

		if (inet_pton(AF_INET, addr, bytes) != 1)
			fail("policy %s record %d: bad IPv4 address \"%s\"", file, record, printable(addr));
		k = APPEND(p->net4, p->n_net4);
		memcpy(&k->addr, bytes, 4);
		k->port = port;
	} else if (!strcmp(kind, "allow6")) {
		if (inet_pton(AF_INET6, addr, bytes) != 1)
			fail("policy %s record %d: bad IPv6 address \"%s\"", file, record, printable(addr));
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)bytes)) {
			struct mcpguard_net4_key *k = APPEND(p->net4, p->n_net4);

			memcpy(&k->addr, bytes + 12, 4);
			k->port = port;
		} else {
			struct mcpguard_net6_key *k = APPEND(p->net6, p->n_net6);

			memcpy(k->addr, bytes, 16);
			k->port = port;
		}
	} else {
		fail("policy %s record %d: expected \"net\" \"allow4\"|\"allow6\" ADDRESS PORT", file, record);
	}
}

static void add_fs(struct policy *p, const char *file, int record, const char *letters, const char *path)
{
	int access = parse_access(letters);
	struct fs_rule *r;

	if (access < 0)
		fail("policy %s record %d: bad access \"%s\" (letters from rwx)", file, record, printable(letters));
	if (path[0] != '/')
		fail("policy %s record %d: the path must be absolute", file, record);
	r = APPEND(p->fs, p->n_fs);
	r->access = access;
	r->path = path;
}

static void add_unix(struct policy *p, const char *file, int record, const char *path)
{
	if (path[0] != '/')
		fail("policy %s record %d: the unix socket path must be absolute", file, record);
	if (strlen(path) > MCPGUARD_UNIX_PATH_LEN)
		fail("policy %s record %d: a unix socket path has at most %d bytes", file, record,
		     MCPGUARD_UNIX_PATH_LEN);
	*APPEND(p->unix_paths, p->n_unix) = path;
}

static void set_dns(struct policy *p, const char *file, int record, const char *const f[5])
{
	long port4 = parse_port(f[2]), port6 = parse_port(f[4]);

	if (p->has_dns)
		fail("policy %s record %d: a second \"dns\" record", file, record);
	if (port4 < 0 || port6 < 0)
		fail("policy %s record %d: bad dns port", file, record);
	if (port4 && inet_pton(AF_INET, f[1], &p->dns.ip4) != 1)
		fail("policy %s record %d: bad IPv4 address \"%s\"", file, record, printable(f[1]));
	if (port6 && inet_pton(AF_INET6, f[3], p->dns.ip6) != 1)
		fail("policy %s record %d: bad IPv6 address \"%s\"", file, record, printable(f[3]));
	if (!port4 && !port6)
		fail("policy %s record %d: a dns record without a resolver", file, record);
	p->dns.port4 = port4;
	p->dns.port6 = port6;
	p->has_dns = true;
}

/* The policy's records; the paths point into the input buffer, which stays allocated. */
struct policy *policy_read(const char *file)
{
	struct policy *p = calloc(1, sizeof(*p));
	const char *f[MG_MAX_FIELDS], *why;
	struct records in;
	int n, got, err;

	if (!p)
		fail("reading the policy: %s", strerror(ENOMEM));
	err = records_read(file, &in);
	if (err)
		fail("cannot read the policy %s: %s", file, strerror(-err));
	if (records_header(&in, "mcpguard-policy", "1", &why))
		fail("policy %s: %s", file, why);
	while ((got = next_record(&in, f, &n, &why)) > 0) {
		if (!strcmp(f[0], "net") && n == 4)
			add_net(p, file, in.index, f[1], f[2], f[3]);
		else if (!strcmp(f[0], "fs") && n == 3)
			add_fs(p, file, in.index, f[1], f[2]);
		else if (!strcmp(f[0], "dns") && n == 5)
			set_dns(p, file, in.index, f);
		else if (!strcmp(f[0], "unix") && n == 2)
			add_unix(p, file, in.index, f[1]);
		else
			fail("policy %s record %d: cannot read a \"%s\" record of %d fields", file, in.index,
			     printable(f[0]), n);
	}
	if (got < 0)
		fail("policy %s record %d: %s", file, in.index, why);
	return p;
}

static void update(struct bpf_map *map, const void *key, size_t key_size, __u8 value, const char *what)
{
	int err = bpf_map__update_elem(map, key, key_size, &value, sizeof(value), BPF_ANY);

	if (err)
		fail("filling %s: %s", what, strerror(-err));
}

void policy_apply(const struct policy *p, uint64_t cgroup_id, const struct policy_maps *maps)
{
	update(maps->guarded, &cgroup_id, sizeof(cgroup_id), 1, "the guarded cgroups");
	for (size_t i = 0; i < p->n_net4; i++) {
		struct mcpguard_net4_key key = p->net4[i];

		key.cgroup_id = cgroup_id;
		update(maps->allow4, &key, sizeof(key), 1, "the IPv4 allow list");
	}
	for (size_t i = 0; i < p->n_net6; i++) {
		struct mcpguard_net6_key key = p->net6[i];

		key.cgroup_id = cgroup_id;
		update(maps->allow6, &key, sizeof(key), 1, "the IPv6 allow list");
	}
	if (p->has_dns) {
		int err = bpf_map__update_elem(maps->dns, &cgroup_id, sizeof(cgroup_id), &p->dns, sizeof(p->dns),
					       BPF_ANY);

		if (err)
			fail("filling the resolver of the cgroup: %s", strerror(-err));
	}
	for (size_t i = 0; maps->unix_allow && i < p->n_unix; i++) {
		struct mcpguard_unix_key key;

		memset(&key, 0, sizeof(key));
		key.cgroup_id = cgroup_id;
		memcpy(key.path, p->unix_paths[i], strlen(p->unix_paths[i]));
		update(maps->unix_allow, &key, sizeof(key), 1, "the unix socket allow list");
	}
	if (!maps->inodes)
		return;
	for (size_t i = 0; i < p->n_fs; i++) {
		struct mcpguard_inode_key key = { .cgroup_id = cgroup_id };
		__u8 rights = p->fs[i].access;
		struct stat st;

		if (stat(p->fs[i].path, &st)) {
			if (errno == ENOENT)
				continue;
			fail("policy path %s: %s", p->fs[i].path, strerror(errno));
		}
		key.dev = major(st.st_dev) << 20 | minor(st.st_dev);
		key.ino = st.st_ino;
		/* Two paths to one inode (hard links, bind mounts) add up. */
		if (!bpf_map__lookup_elem(maps->inodes, &key, sizeof(key), &rights, sizeof(rights), 0))
			rights |= p->fs[i].access;
		update(maps->inodes, &key, sizeof(key), rights, "the inode rules");
	}
}
