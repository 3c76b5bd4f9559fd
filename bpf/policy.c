// SPDX-License-Identifier: MIT
/*
 * The loader's policy file, one rule a line (`#` starts a comment):
 *   net allow4 A.B.C.D PORT     allow connects and sends to the IPv4 address (PORT 0: any port)
 *   net allow6 V6ADDR PORT      the same for IPv6; an IPv4-mapped address is an IPv4 rule
 *   fs LETTERS PATH             r, w, x on the file or directory tree PATH (BPF LSM only)
 * Anything else is an error. A PATH that does not exist adds nothing: it can only deny more.
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

struct fs_rule {
	__u8 access;
	char *path;
};

struct policy {
	struct mcpguard_net4_key *net4;
	struct mcpguard_net6_key *net6;
	struct fs_rule *fs;
	size_t n_net4, n_net6, n_fs;
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

static void add_net(struct policy *p, const char *file, int lineno, const char *kind, const char *addr,
		    const char *port_s)
{
	long port = parse_port(port_s);
	unsigned char bytes[16];

	if (port < 0)
		fail("policy %s line %d: bad port \"%s\"", file, lineno, port_s);
	if (!strcmp(kind, "allow4")) {
		struct mcpguard_net4_key *k;

		if (inet_pton(AF_INET, addr, bytes) != 1)
			fail("policy %s line %d: bad IPv4 address \"%s\"", file, lineno, addr);
		k = APPEND(p->net4, p->n_net4);
		memcpy(&k->addr, bytes, 4);
		k->port = port;
	} else if (!strcmp(kind, "allow6")) {
		if (inet_pton(AF_INET6, addr, bytes) != 1)
			fail("policy %s line %d: bad IPv6 address \"%s\"", file, lineno, addr);
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
		fail("policy %s line %d: expected \"net allow4|allow6 ADDRESS PORT\"", file, lineno);
	}
}

struct policy *policy_read(const char *file)
{
	struct policy *p = calloc(1, sizeof(*p));
	FILE *f = open_input(file);
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;

	if (!p)
		fail("reading the policy: %s", strerror(ENOMEM));
	if (!f)
		fail("cannot read the policy %s: %s", file, strerror(errno));
	while (getline(&line, &cap, f) >= 0) {
		char kind[16], a[64], b[4096];
		int n;

		lineno++;
		line[strcspn(line, "#\r\n")] = 0;
		n = sscanf(line, "%15s %63s %4095[^\n]", kind, a, b);
		if (n <= 0)
			continue;
		if (!strcmp(kind, "net") && n == 3) {
			char addr[64], port[16], rest[2];

			if (sscanf(b, "%63s %15s %1s", addr, port, rest) != 2)
				fail("policy %s line %d: expected \"net %s ADDRESS PORT\"", file, lineno, a);
			add_net(p, file, lineno, a, addr, port);
		} else if (!strcmp(kind, "fs") && n == 3) {
			int access = parse_access(a);
			size_t len = strlen(b);
			struct fs_rule *r;

			if (access < 0)
				fail("policy %s line %d: bad access \"%s\" (letters from rwx)", file, lineno, a);
			while (len && (b[len - 1] == ' ' || b[len - 1] == '\t'))
				b[--len] = 0;
			if (b[0] != '/')
				fail("policy %s line %d: the path must be absolute", file, lineno);
			r = APPEND(p->fs, p->n_fs);
			r->access = access;
			r->path = strdup(b);
		} else {
			fail("policy %s line %d: cannot read \"%s\"", file, lineno, line);
		}
	}
	free(line);
	fclose(f);
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
