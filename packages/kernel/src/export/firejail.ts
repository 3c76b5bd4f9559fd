/**
 * firejail (0.9.72): a profile of whitelists. Whitelisting a path mounts an empty tmpfs on its top
 * directory (a directory in / or in /usr) and binds the path back, so a top directory that holds a
 * granted path shows that path and nothing else; a top directory the policy grants whole stays as
 * it is; one that holds nothing granted is blacklisted. Read-only grants are remounted read-only and
 * writable ones noexec, so nothing the server writes can be run. `net none` unless the policy names
 * a destination, capabilities dropped, no_new_privs, firejail's default seccomp filter and a socket
 * family filter.
 */
import { globMatcher } from "@mcpguard/readers";
import {
  commandLine,
  type Exported,
  hiddenDirectories,
  networkSummary,
  sandboxNotes,
  socketsSummary,
  type ViewEntry,
  viewEntries,
  withheldNote,
} from "./common.js";
import { ExportError, type Grant, hasControl, within } from "./grant.js";

/** Never blacklisted: firejail needs /proc and /run, and /dev and /usr are handled entry by entry. */
const KEEP = new Set(["/proc", "/run", "/dev", "/usr"]);

/** The directory firejail mounts its tmpfs on when `path` is whitelisted. */
function whitelistTop(path: string): string {
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "usr" && parts.length >= 2) return `/usr/${parts[1]}`;
  return `/${parts[0] ?? ""}`;
}

/** A path firejail would read as something else: a glob, a macro, a line break, a quote. */
function expressible(path: string): boolean {
  // A lone `[` (the program /usr/bin/[) is literal to firejail's glob; `[...]` would be a class.
  return !hasControl(path) && !/[*?$"\\]|\[.*\]/.test(path) && path === path.trim();
}

function checkPath(path: string): string {
  if (!expressible(path))
    throw new ExportError(
      `cannot express ${JSON.stringify(path)} in a firejail profile (globs, macros, quotes and control characters have a meaning there)`,
    );
  return path;
}

/**
 * A top-level host entry to hide whose name firejail would misread (a junk file named `/$\q` or
 * `/*`): blacklisted through a pattern with `?` for each such character, which hides it and what
 * else the pattern matches, unless the pattern also matches an entry the view keeps.
 */
function blacklistPattern(entry: string, kept: readonly string[]): string {
  const name = entry.slice(1);
  const pattern = `/${[...name].map((c, i) => (/[*?$"\\[\]]/.test(c) || hasControl(c) || (/\s/.test(c) && (i === 0 || i === name.length - 1)) ? "?" : c)).join("")}`;
  // The pattern's only wildcard is `?`, which firejail, like a policy, reads as one character of a name.
  const matches = globMatcher(pattern, "path");
  // A pattern that cannot be read could match anything the view keeps: refused.
  const clash = matches === undefined ? "(a pattern that cannot be read)" : kept.find((k) => matches(k));
  if (clash)
    throw new ExportError(
      `cannot hide ${JSON.stringify(entry)} in a firejail profile: the pattern ${pattern} would also match ${clash}, which the policy keeps`,
    );
  return pattern;
}

function pathLines(grant: Grant, view: readonly ViewEntry[]): string[] {
  const whole = view.filter((e) => e.path === whitelistTop(e.path) || e.path === "/usr" || e.path === "/");
  const lines: string[] = [];
  for (const e of view) {
    const isWhole = whole.includes(e);
    const insideWhole = !isWhole && whole.some((w) => within(e.path, w.path));
    if (!isWhole && !insideWhole) lines.push(`whitelist ${checkPath(e.path)}`);
    if (e.mode === "ro") lines.push(`read-only ${checkPath(e.path)}`);
    if (e.mode === "rw") {
      // firejail's read-only is recursive: a writable path inside a read-only one is made writable again.
      const insideReadOnly = view.some((o) => o.mode === "ro" && o.path !== e.path && within(e.path, o.path));
      if (insideWhole || insideReadOnly) lines.push(`read-write ${checkPath(e.path)}`);
      lines.push(`noexec ${checkPath(e.path)}`);
    }
  }
  for (const link of grant.links) {
    const parent = link.path.slice(0, link.path.lastIndexOf("/")) || "/";
    if (parent === "/" || parent === "/usr") continue; // a top-level link stays as it is
    if (view.some((e) => within(link.path, e.path))) continue; // its tree brings it
    lines.push(`whitelist ${checkPath(link.path)}`);
  }
  const keeps = (entry: string) =>
    KEEP.has(entry) || view.some((e) => within(e.path, entry) || within(entry, e.path));
  const kept = grant.hostEntries.filter(keeps);
  for (const entry of grant.hostEntries) {
    if (keeps(entry)) continue;
    lines.push(`blacklist ${expressible(entry) ? entry : blacklistPattern(entry, kept)}`);
  }
  return lines;
}

function firejailNotes(grant: Grant): string[] {
  const view = viewEntries(grant.paths);
  const hidden = hiddenDirectories(grant, view);
  return [
    ...sandboxNotes(grant),
    grant.network.length
      ? `network: all or nothing; the policy names ${networkSummary(grant)}, so the server shares the host's network whole (per destination needs --net=<interface> with --netfilter, a bridge or macvlan of a real interface)`
      : "network: net none (a namespace with a loopback of its own), as the policy names no destination",
    `exec: no per-program control; the view holds only the granted programs (${grant.programs.length ? grant.programs.join(", ") : "none"} beyond the interpreter), and the writable paths are noexec, but any other granted file with an execute bit can be run`,
    "system calls: firejail's default seccomp blacklist and a socket family filter (unix, inet, inet6, netlink; MCPGuard allows netlink route only)",
    "visible whatever the policy says: /proc (the sandbox's own pid namespace) and /run (firejail needs both); top-level symbolic links (/bin, /lib) stay",
    withheldNote(grant, "removes (rmenv)"),
    "limits: none here (rlimit-nproc does not bind root, rlimit-as caps address space rather than memory; see --format cgroup)",
    ...(hidden.length
      ? [
          `hidden: ${hidden.join(", ")} do${hidden.length > 1 ? "" : "es"} not exist in the sandbox (the policy grants nothing there)`,
        ]
      : []),
    'run: never with "--" (firejail then runs the command through /bin/bash), and the program as an absolute path',
    `unix sockets: firejail has no rule for them; every socket under /run (kept whole) or in the view can be reached, any other cannot; ${socketsSummary(grant)}`,
  ];
}

export function firejailProfile(grant: Grant): string {
  const view = viewEntries(grant.paths);
  const lines = [
    `# MCPGuard policy "${grant.server}" exported for firejail 0.9.72 (mcpguard policy export --format firejail)`,
    `# usage: firejail --profile=<this file> ${commandLine(grant.command)}`,
    ...firejailNotes(grant).map((n) => `# ${n.replace(/\n/g, " ")}`),
    "quiet",
    "caps.drop all",
    "nonewprivs",
    "nogroups",
    "noroot",
    "seccomp",
    "protocol unix,inet,inet6,netlink",
    ...(grant.network.length ? [] : ["net none"]),
    ...pathLines(grant, view),
    ...grant.env.withheld.map((name) => `rmenv ${name}`),
  ];
  return `${lines.join("\n")}\n`;
}

export function exportFirejail(grant: Grant): Exported {
  return { format: "firejail", text: firejailProfile(grant), notes: firejailNotes(grant) };
}

/** The argv that runs `command` under a profile file: no "--", the program as an absolute path. */
export function firejailArgv(firejail: string, profile: string, command: readonly string[]): string[] {
  if (!command[0]?.startsWith("/"))
    throw new ExportError("firejail needs the server's program as an absolute path");
  return [firejail, `--profile=${profile}`, ...command];
}
