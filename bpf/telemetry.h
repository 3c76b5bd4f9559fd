/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Syscalls whose EACCES/EPERM/EROFS failures the telemetry reports (x86_64 numbers; the loader
 * names them). They are the calls Landlock refuses for a guarded server: opening, creating, removing,
 * renaming, linking and executing files, and connecting or sending to an address. A rename or
 * link is also reported when it fails with EXDEV, which is how Landlock refuses to move a file to
 * a directory where it would gain rights, or to one without the refer right.
 */
#ifndef MCPGUARD_TELEMETRY_H
#define MCPGUARD_TELEMETRY_H

#define MCPGUARD_NR_OPEN 2
#define MCPGUARD_NR_TRUNCATE 76
#define MCPGUARD_NR_RENAME 82
#define MCPGUARD_NR_MKDIR 83
#define MCPGUARD_NR_RMDIR 84
#define MCPGUARD_NR_CREAT 85
#define MCPGUARD_NR_LINK 86
#define MCPGUARD_NR_UNLINK 87
#define MCPGUARD_NR_SYMLINK 88
#define MCPGUARD_NR_CONNECT 42
#define MCPGUARD_NR_SENDTO 44
#define MCPGUARD_NR_SENDMSG 46
#define MCPGUARD_NR_EXECVE 59
#define MCPGUARD_NR_MKDIRAT 258
#define MCPGUARD_NR_UNLINKAT 263
#define MCPGUARD_NR_RENAMEAT 264
#define MCPGUARD_NR_LINKAT 265
#define MCPGUARD_NR_SYMLINKAT 266
#define MCPGUARD_NR_OPENAT 257
#define MCPGUARD_NR_RENAMEAT2 316
#define MCPGUARD_NR_EXECVEAT 322
#define MCPGUARD_NR_OPENAT2 437

/* The calls that name two paths: a source and a destination. */
#define MCPGUARD_NR_TWO_PATHS(nr)                                                                 \
	((nr) == MCPGUARD_NR_RENAME || (nr) == MCPGUARD_NR_RENAMEAT || (nr) == MCPGUARD_NR_RENAMEAT2 || \
	 (nr) == MCPGUARD_NR_LINK || (nr) == MCPGUARD_NR_LINKAT)

#endif
