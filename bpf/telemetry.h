/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Syscalls whose EACCES/EPERM/EROFS failures the telemetry reports (x86_64 numbers; the loader
 * names them). They are the calls Landlock refuses for a guarded server: opening, creating, removing,
 * renaming, linking and executing files, and connecting or sending to an address. A rename or
 * link is also reported when it fails with EXDEV, which is how Landlock refuses to move a file to
 * a directory where it would gain rights, or to one without the refer right. A call that changes a
 * file's metadata (mode, owner, times, extended attributes), which Landlock does not mediate, is
 * reported when it fails with EROFS: the server's mounts are read-only outside its write grants.
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

#define MCPGUARD_NR_CHMOD 90
#define MCPGUARD_NR_FCHMOD 91
#define MCPGUARD_NR_CHOWN 92
#define MCPGUARD_NR_FCHOWN 93
#define MCPGUARD_NR_LCHOWN 94
#define MCPGUARD_NR_UTIME 132
#define MCPGUARD_NR_SETXATTR 188
#define MCPGUARD_NR_LSETXATTR 189
#define MCPGUARD_NR_FSETXATTR 190
#define MCPGUARD_NR_REMOVEXATTR 197
#define MCPGUARD_NR_LREMOVEXATTR 198
#define MCPGUARD_NR_FREMOVEXATTR 199
#define MCPGUARD_NR_UTIMES 235
#define MCPGUARD_NR_FCHOWNAT 260
#define MCPGUARD_NR_FUTIMESAT 261
#define MCPGUARD_NR_FCHMODAT 268
#define MCPGUARD_NR_UTIMENSAT 280
#define MCPGUARD_NR_FCHMODAT2 452
#define MCPGUARD_NR_SETXATTRAT 463
#define MCPGUARD_NR_REMOVEXATTRAT 466


/* The calls that name two paths: a source and a destination. */
#define MCPGUARD_NR_TWO_PATHS(nr)                                                                 \
	((nr) == MCPGUARD_NR_RENAME || (nr) == MCPGUARD_NR_RENAMEAT || (nr) == MCPGUARD_NR_RENAMEAT2 || \
	 (nr) == MCPGUARD_NR_LINK || (nr) == MCPGUARD_NR_LINKAT)

#endif
