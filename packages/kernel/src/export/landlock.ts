/**
 * The Landlock ruleset MCPGuard's kernel layer applies to the server, described in JSON: the same
 * plan, read by a person or by another Landlock launcher. It is what `mcpguard run` under C-ebpf,
 * C-full or C-AB+ebpf enforces for files, exec and TCP ports; the cgroup BPF programs and the
 * seccomp filter that sit beside it are described in the notes.
 */
import { LANDLOCK_MIN_ABI } from "../probe.js";
import { type Exported, networkSummary, sandboxNotes, socketsSummary } from "./common.js";
import type { Grant } from "./grant.js";

/** Every filesystem right of ABI 6, as the launcher names them; all are handled (denied unless granted). */
const LANDLOCK_FS_RIGHTS = [
  "execute",
  "write_file",
  "read_file",
  "read_dir",
  "remove_dir",
  "remove_file",
  "make_char",
  "make_dir",
  "make_reg",
  "make_sock",
  "make_fifo",
  "make_block",
  "make_sym",
  "refer",
  "truncate",
  "ioctl_dev",
];

/** TCP ports to allow connects to, or null when a destination has no port (ports left open). */
function landlockPorts(grant: Grant): number[] | null {
  if (!grant.network.every((d) => d.port > 0)) return null;
  return [...new Set(grant.network.map((d) => d.port))].sort((a, b) => a - b);
}

function landlockNotes(grant: Grant): string[] {
  const ports = landlockPorts(grant);
  return [
    ...sandboxNotes(grant),
    ports === null
      ? "network: a destination without a port, so TCP ports are not handled here; addresses are checked by the cgroup BPF programs"
      : `network: TCP connect and bind only to ports ${ports.length ? ports.join(", ") : "(none)"}; Landlock sees ports, not addresses: ${networkSummary(grant)} by address, UDP, IPv6 and raw sockets are the cgroup BPF programs' (not in this file)`,
    "exec: execute is granted on the interpreter, its ELF loader and the programs the policy names; a child of the interpreter itself (python3 -c, node -e) is allowed by the rule that starts the server",
    `not covered by Landlock: pathname unix sockets (the cgroup BPF connect_unix and sendmsg_unix programs', not in this file: ${socketsSummary(grant)}), hard links that already sit in a granted tree, stat metadata; memfd exec, execveat and foreign socket families are the seccomp filter's`,
    "scopes: signals and abstract unix sockets outside the sandbox are refused",
    `environment: filtered by the proxy at spawn (kept beyond the world's: ${grant.env.kept.length ? grant.env.kept.join(", ") : "none"}), not by Landlock`,
  ];
}

function landlockRuleset(grant: Grant): Record<string, unknown> {
  const ports = landlockPorts(grant);
  return {
    abi: LANDLOCK_MIN_ABI,
    handledAccessFs: LANDLOCK_FS_RIGHTS,
    handledAccessNet: ports === null ? [] : ["bind_tcp", "connect_tcp"],
    scoped: ["signal", "abstract_unix_socket"],
    rules: grant.paths.map((p) => ({ path: p.path, allowedAccess: p.rights })),
    netRules: (ports ?? []).map((port) => ({ port, allowedAccess: ["connect_tcp"] })),
  };
}

export function exportLandlock(grant: Grant): Exported {
  const notes = landlockNotes(grant);
  const doc = {
    format: "landlock",
    server: grant.server,
    command: grant.command,
    notes,
    ...landlockRuleset(grant),
  };
  return { format: "landlock", text: `${JSON.stringify(doc, null, 2)}\n`, notes };
}
