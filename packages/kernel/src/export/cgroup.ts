/**
 * The limits of the server's cgroup as cgroup v2 files: `pids.max` and `memory.max` from the
 * policy's `limits` (else the proxy's defaults), and `memory.swap.max` 0, as `mcpguard run` writes
 * them. Any sandbox can run inside such a cgroup; none of the three peers sets one itself.
 */
import { type Exported, sandboxNotes } from "./common.js";
import type { Grant } from "./grant.js";

function cgroupFiles(grant: Grant): Record<string, string> {
  return {
    "pids.max": String(grant.limits.pids),
    "memory.max": String(grant.limits.memoryBytes),
    "memory.swap.max": "0",
  };
}

export function exportCgroup(grant: Grant): Exported {
  const notes = [
    ...sandboxNotes(grant).filter((n) => !n.startsWith("plan:")),
    `source: ${grant.limits.from}`,
    "cgroup v1 hosts: pids.max in the pids hierarchy, memory.limit_in_bytes and memory.memsw.limit_in_bytes in the memory hierarchy",
    "files, programs, network and environment are not limits: see the other formats",
  ];
  const doc = { format: "cgroup", server: grant.server, notes, files: cgroupFiles(grant) };
  return { format: "cgroup", text: `${JSON.stringify(doc, null, 2)}\n`, notes };
}
