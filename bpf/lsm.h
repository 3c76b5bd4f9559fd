/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * File rules of the BPF LSM programs. The loader stats each policy path and stores the rights
 * under the inode it found; a hook grants an access when the union of the rights on the file and
 * its ancestor directories covers it.
 */
#ifndef MCPGUARD_LSM_H
#define MCPGUARD_LSM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MCPGUARD_ACCESS_READ 1
#define MCPGUARD_ACCESS_WRITE 2
#define MCPGUARD_ACCESS_EXEC 4

#define MCPGUARD_INODE_RULES 16384

struct mcpguard_inode_key {
	__u64 cgroup_id;
	__u64 ino;
	__u32 dev; /* the kernel's encoding: major << 20 | minor */
	__u32 pad;
};

#endif
