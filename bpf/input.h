/* SPDX-License-Identifier: MIT */
/*
 * Reading the launcher's ruleset and the loader's policy. Both are records of NUL-terminated
 * fields, and an empty field ends a record; the first record is the header, a magic word and a
 * version:
 *
 *   "mcpguard-ruleset\0" "1\0" "\0"
 *   "fs\0" "read_file,read_dir\0" "/srv/C#proj/ws\0" "\0"
 *
 * A field may hold any byte but NUL, so a path is taken exactly as written: `#`, a newline,
 * spaces and non-ASCII bytes are part of it, never a comment or a separator. No field of a valid
 * record is empty (paths are absolute, words and numbers are never empty), so a record boundary
 * cannot be mistaken. Input that does not end on a record boundary, has an unknown header, or is
 * larger than MG_INPUT_MAX is refused whole: the caller reports it and exits.
 */
#ifndef MCPGUARD_INPUT_H
#define MCPGUARD_INPUT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MG_INPUT_MAX (16 << 20)
#define MG_MAX_FIELDS 8

/*
 * `/dev/fd/N` is read from descriptor N itself: a parent such as Node hands over a socket, which
 * cannot be reopened through /proc.
 */
static inline FILE *open_input(const char *file)
{
	if (!strncmp(file, "/dev/fd/", 8)) {
		char *end;
		long fd = strtol(file + 8, &end, 10);
		if (!*end && fd >= 0)
			return fdopen((int)fd, "r");
	}
	return fopen(file, "re");
}

struct records {
	char *buf;
	size_t len, pos;
	int index; /* of the record last returned, 1-based; the header is record 1 */
};

/*
 * Read all of file into r: 0, or -errno (-EFBIG past MG_INPUT_MAX). The buffer gets one NUL
 * more than was read, so a last field without its terminator is still a C string; next_record
 * refuses it all the same.
 */
static inline int records_read(const char *file, struct records *r)
{
	FILE *f = open_input(file);
	size_t cap = 4096;

	memset(r, 0, sizeof(*r));
	if (!f)
		return -errno;
	r->buf = malloc(cap + 1);
	while (r->buf) {
		size_t n = fread(r->buf + r->len, 1, cap - r->len, f);

		r->len += n;
		if (r->len < cap) {
			int err = ferror(f) ? -EIO : 0;

			fclose(f);
			r->buf[r->len] = 0;
			return err;
		}
		if (cap >= MG_INPUT_MAX) {
			fclose(f);
			return -EFBIG;
		}
		cap *= 2;
		r->buf = realloc(r->buf, cap + 1);
	}
	fclose(f);
	return -ENOMEM;
}

/*
 * The next record's fields into fields[0..*n): 1, 0 at the clean end of the input, or -1 when
 * the input is malformed, with *why saying how.
 */
static inline int next_record(struct records *r, const char **fields, int *n, const char **why)
{
	*n = 0;
	if (r->pos == r->len)
		return 0;
	r->index++;
	for (;;) {
		char *field = r->buf + r->pos;
		size_t flen = strnlen(field, r->len - r->pos);

		if (r->pos + flen == r->len) {
			*why = "the input ends inside a record";
			return -1;
		}
		r->pos += flen + 1;
		if (flen == 0)
			break;
		if (*n == MG_MAX_FIELDS) {
			*why = "too many fields";
			return -1;
		}
		fields[(*n)++] = field;
	}
	if (*n == 0) {
		*why = "an empty record";
		return -1;
	}
	return 1;
}

/*
 * A field as it may appear in a one-line message: at most 40 bytes, control characters (a newline
 * among them) shown as '?'. Returns one of two static buffers, so two fields fit in one message.
 */
static inline const char *printable(const char *field)
{
	static char bufs[2][44];
	static int which;
	char *out = bufs[which++ & 1];
	size_t i = 0;

	for (; field[i] && i < 40; i++)
		out[i] = (unsigned char)field[i] < 0x20 || field[i] == 0x7f ? '?' : field[i];
	strcpy(out + i, field[i] ? "..." : "");
	return out;
}

/* Read the header record: 0 when it is MAGIC and VERSION, else -1 with *why. */
static inline int records_header(struct records *r, const char *magic, const char *version, const char **why)
{
	const char *f[MG_MAX_FIELDS];
	int n, got = next_record(r, f, &n, why);

	if (got == 0) {
		*why = "the input is empty";
		return -1;
	}
	if (got < 0 || n != 2 || strcmp(f[0], magic) || strcmp(f[1], version)) {
		*why = "not a known format (it does not start with the expected magic and version record)";
		return -1;
	}
	return 0;
}

#endif
