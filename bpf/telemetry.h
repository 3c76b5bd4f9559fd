/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Syscalls whose EACCES/EPERM failures the telemetry reports (x86_64 numbers; the loader names
 * them). They are the calls Landlock refuses for a guarded server: opening and executing files,
 * and connecting or sending to an address.
 */
#ifndef MCPGUARD_TELEMETRY_H
#define MCPGUARD_TELEMETRY_H

#define MCPGUARD_NR_CONNECT 42
#define MCPGUARD_NR_SENDTO 44
#define MCPGUARD_NR_SENDMSG 46
#define MCPGUARD_NR_EXECVE 59
#define MCPGUARD_NR_OPENAT 257
#define MCPGUARD_NR_EXECVEAT 322
#define MCPGUARD_NR_OPENAT2 437

#endif
