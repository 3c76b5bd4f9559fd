/**
 * A macOS `sandbox-exec` profile (SBPL): deny by default, then the grant. It cannot run here, so
 * it is checked against golden files only; its paths are this host's, so export it on the Mac
 * that will run the server.
 */
import { type Exported, sandboxNotes, socketsSummary } from "./common.js";
import { ExportError, type Grant, hasControl } from "./grant.js";

/** An SBPL string literal. */
function str(value: string): string {
  if (hasControl(value))
    throw new ExportError(`cannot express ${JSON.stringify(value)} in an SBPL string (control characters)`);
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const filter = (p: { path: string; directory: boolean }) =>
  p.directory ? `(subpath ${str(p.path)})` : `(literal ${str(p.path)})`;

function sbplNotes(grant: Grant): string[] {
  return [
    ...sandboxNotes(grant),
    grant.network.length
      ? "network: SBPL names a remote host only as * or localhost, so each destination becomes its port on any host (outbound TCP)"
      : "network: none",
    "exec: process-exec only of the interpreter and the programs the policy names (literal paths of this host)",
    grant.env.withheld.length
      ? `environment: sandbox-exec passes the environment through whole, so what the policy withholds (${grant.env.withheld.join(", ")}) reaches the server unless it is started with env -i`
      : "environment: sandbox-exec passes the environment through whole",
    "limits: none (use launchd or ulimit)",
    "paths: those of the host that exported it (Linux paths here); export on the Mac that runs the server",
    ...(grant.sockets.length
      ? [`unix sockets: network-outbound to each socket's path; ${socketsSummary(grant)}`]
      : []),
  ];
}

function sbplProfile(grant: Grant): string {
  const reads = grant.paths.filter((p) => p.read && !p.exec);
  const writes = grant.paths.filter((p) => p.write);
  const execs = grant.paths.filter((p) => p.exec);
  const ports = [...new Set(grant.network.map((d) => d.port))].sort((a, b) => a - b);
  const lines = [
    `;; MCPGuard policy "${grant.server}" exported for macOS sandbox-exec (mcpguard policy export --format sbpl)`,
    ...sbplNotes(grant).map((n) => `;; ${n}`),
    "(version 1)",
    "(deny default)",
    "(allow process-fork)",
    "(allow signal (target self))",
    "(allow sysctl-read)",
    "(allow file-read-metadata)",
  ];
  const block = (head: string, items: string[]) =>
    items.length ? [`(allow ${head}`, ...items.map((i) => `  ${i}`), ")"] : [];
  lines.push(...block("file-read*", [...reads, ...execs].map(filter)));
  lines.push(...block("file-write*", writes.map(filter)));
  lines.push(...block("process-exec", execs.map(filter)));
  if (grant.links.length)
    lines.push(
      ...block(
        "file-read*",
        grant.links.map((l) => `(literal ${str(l.path)})`),
      ),
    );
  if (ports.length) {
    lines.push(
      ...block(
        "network-outbound",
        ports.map((port) => `(remote tcp ${str(`*:${port > 0 ? port : "*"}`)})`),
      ),
    );
    lines.push('(allow network-outbound (literal "/private/var/run/mDNSResponder"))');
  }
  for (const socket of grant.sockets) lines.push(`(allow network-outbound (literal ${str(socket)}))`);
  return `${lines.join("\n")}\n`;
}

export function exportSbpl(grant: Grant): Exported {
  return { format: "sbpl", text: sbplProfile(grant), notes: sbplNotes(grant) };
}
