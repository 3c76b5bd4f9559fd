/**
 * bubblewrap (0.8): a mount view that holds nothing but the grant, in namespaces of its own.
 * Read-only binds for what the policy lets the server read, writable binds for what it may write,
 * the device nodes it needs, the symbolic links on the way to them, and an empty read-only
 * directory where the world's working directory, HOME or TMPDIR would be and the policy grants
 * nothing; then the view's skeleton is made read-only. The network namespace is empty unless the
 * policy names a destination, and then it is the host's, whole.
 */
import {
  commandLine,
  type Exported,
  hiddenDirectories,
  networkSummary,
  sandboxNotes,
  socketsSummary,
  viewEntries,
  withheldNote,
} from "./common.js";
import { type Grant, within } from "./grant.js";

export function bwrapArgs(grant: Grant): string[] {
  const view = viewEntries(grant.paths);
  const args = ["--unshare-all", "--unshare-user", "--disable-userns"];
  if (grant.network.length > 0) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  for (const e of view) {
    args.push(e.mode === "dev" ? "--dev-bind" : e.mode === "rw" ? "--bind" : "--ro-bind", e.path, e.path);
  }
  for (const link of grant.links) {
    if (view.some((e) => within(link.path, e.path))) continue; // the bound tree holds the link itself
    args.push("--symlink", link.target, link.path);
  }
  for (const dir of hiddenDirectories(grant, view)) args.push("--dir", dir);
  // A socket is reached through its file: bound in, where it exists when the sandbox starts.
  for (const socket of grant.sockets) args.push("--bind-try", socket, socket);
  args.push("--remount-ro", "/", "--chdir", grant.cwd);
  for (const name of grant.env.withheld) args.push("--unsetenv", name);
  return args;
}

function bwrapNotes(grant: Grant): string[] {
  const view = viewEntries(grant.paths);
  const hidden = hiddenDirectories(grant, view);
  const writable = view.filter((e) => e.mode === "rw").map((e) => e.path);
  return [
    ...sandboxNotes(grant),
    grant.network.length
      ? `network: all or nothing; the policy names ${networkSummary(grant)}, so the server shares the host's network whole (any address, any port, TCP and UDP)`
      : "network: an empty network namespace (a loopback of its own), as the policy names no destination",
    `exec: no control beyond the view; any file the view holds can be run if its mode allows, files the server writes in ${writable.length ? writable.join(", ") : "its write paths"} included (the policy allows ${grant.programs.length ? grant.programs.join(", ") : "no program"} beyond the interpreter)`,
    "system calls: no seccomp filter (bwrap takes a compiled BPF program on --seccomp FD, which this export does not build); user namespaces inside are refused (--disable-userns)",
    "reads: read and exec are one right in a view: every granted file is readable and mappable",
    "devices: device nodes are bound read-write (bwrap has no read-only device bind)",
    withheldNote(grant, "unsets (--unsetenv)"),
    "limits: none (bwrap has no cgroup or rlimit option; see --format cgroup)",
    ...(hidden.length
      ? [
          `hidden: ${hidden.join(", ")} ${hidden.length > 1 ? "are" : "is an"} empty read-only director${hidden.length > 1 ? "ies" : "y"} in the view (the policy grants nothing there)`,
        ]
      : []),
    "proc: /proc is not mounted (the kernel layer does not grant it either)",
    `unix sockets: a pathname socket is reached through its file, so only those in the view can be; ${socketsSummary(grant)}${grant.sockets.length ? " (bound in with --bind-try, where it exists at start)" : ""}`,
  ];
}

export function exportBwrap(grant: Grant): Exported {
  const notes = bwrapNotes(grant);
  const doc = {
    format: "bwrap",
    server: grant.server,
    usage: `bwrap <args...> -- ${commandLine(grant.command)}`,
    notes,
    command: grant.command,
    args: bwrapArgs(grant),
  };
  return { format: "bwrap", text: `${JSON.stringify(doc, null, 2)}\n`, notes };
}

/** The argv that runs `command` under the exported arguments. */
export function bwrapArgv(bwrap: string, args: readonly string[], command: readonly string[]): string[] {
  return [bwrap, ...args, "--", ...command];
}
