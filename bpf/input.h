/* SPDX-License-Identifier: MIT */
/* Reading the launcher's ruleset and the loader's policy. */
#ifndef MCPGUARD_INPUT_H
#define MCPGUARD_INPUT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
