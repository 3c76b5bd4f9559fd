// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Whether BPF LSM works here (KubeArmor's bpflsmprobe idea): the smallest LSM program. Some
 * kernels refuse to load it although `bpf` is in the LSM list; others load it but never call it
 * because `bpf` is not an active LSM, so the loader also runs an exec and looks for the mark.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 probe_pid;
__u32 seen;

SEC("lsm/bprm_check_security")
int BPF_PROG(mcpguard_probe, struct linux_binprm *bprm, int ret)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == probe_pid)
		seen = 1;
	return ret;
}
