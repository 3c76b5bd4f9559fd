/**
 * sandbox-runtime (`srt`, 0.0.83): a settings file. srt reads deny-then-allow, so the grant is
 * `denyRead: ["/"]` with `allowRead` for every granted path (and the links on the way to them);
 * writes are allow-only, so `allowWrite` is the grant's writable paths. The network goes through
 * srt's HTTP and SOCKS proxies, allowed per destination by name and port; the server has no
 * network namespace of its own otherwise. Variables the policy withholds are denied by name.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type Exported,
  networkSummary,
  sandboxNotes,
  shellQuote,
  socketsSummary,
  withheldNote,
} from "./common.js";
import { destinationText, type Grant, within } from "./grant.js";

export { shellQuote } from "./common.js";

export interface SrtOptions {
  /**
   * What srt itself must read inside the sandbox once `/` is denied: its `apply-seccomp` helper,
   * the shell it runs the command with, socat for its proxy bridges. Unknown, the notes say so.
   */
  runtime?: readonly string[];
  /** Where the runtime was found (`srt on PATH: <shim> runs <cli.js>`), for the notes. */
  found?: string;
  /** How to list a directory (tests); default: the filesystem at export time. */
  listDirectory?: (dir: string) => string[] | undefined;
}

type Entry = string | { path: string; literal: true };

/** A path srt would take for a pattern is marked literal. */
const entry = (path: string): Entry => (/[*?[\]]/.test(path) ? { path, literal: true } : path);

/**
 * srt 0.0.83 binds the `allowRead` paths after the `allowWrite` ones, so a writable path inside a
 * read-only one ends up read-only (measured). Such a read-only directory is granted entry by entry
 * instead, around its writable paths, as the entries are when the profile is exported.
 */
function readEntries(
  path: string,
  writable: readonly string[],
  list: (dir: string) => string[] | undefined,
  notes: string[],
): string[] {
  const inside = writable.filter((w) => w !== path && within(w, path));
  if (inside.length === 0) return [path];
  const children = list(path);
  if (!children) {
    notes.push(
      `${path} holds writable ${inside.join(", ")}, which srt would make read-only; it could not be listed`,
    );
    return [path];
  }
  notes.push(
    `${path} is granted entry by entry around the writable ${inside.join(", ")} (srt makes a writable path inside an allowRead path read-only); entries added later are not readable`,
  );
  return children
    .map((name) => join(path, name))
    .filter((child) => !writable.includes(child))
    .flatMap((child) => readEntries(child, writable, list, notes));
}

/** Where a link leads, following the grant's links (one name at a time, prefixes included). */
function resolveLink(grant: Grant, path: string): string {
  let current = path;
  for (let hops = 0; hops < 16; hops++) {
    const link = grant.links.find((l) => within(current, l.path));
    if (!link) return current;
    const base = link.target.startsWith("/") ? link.target : join(dirname(link.path), link.target);
    current = base + current.slice(link.path.length);
  }
  return current;
}

/**
 * srt 0.0.83 does not restore a symbolic link whose target lies outside the link's own denied
 * directory (measured: /usr/bin/sh -> dash, /etc/localtime -> /usr/share/zoneinfo/...). A link to
 * a program the server may run (sh, for a tool that runs shell commands) is kept by allowing the
 * link's directory whole; the other links are left out, and the notes say so. Top-level links
 * (/bin -> usr/bin) stay links under `denyRead: ["/"]`.
 */
function linkDirectories(grant: Grant, notes: string[]): string[] {
  const dirs: string[] = [];
  const missing: string[] = [];
  for (const link of grant.links) {
    if (link.path.lastIndexOf("/") === 0) continue;
    if (grant.paths.some((p) => within(link.path, p.path))) continue;
    const target = resolveLink(grant, link.path);
    if (grant.paths.some((p) => p.exec && p.path === target)) dirs.push(dirname(link.path));
    else missing.push(link.path);
  }
  for (const dir of [...new Set(dirs)])
    notes.push(
      `${dir} is readable whole: srt does not restore a symbolic link that leads out of a denied directory, and ${grant.links
        .filter((l) => dirname(l.path) === dir)
        .map((l) => `${l.path} -> ${l.target}`)
        .join(
          ", ",
        )} names a program the policy lets the server run; with no exec rule, every program there can run`,
    );
  if (missing.length)
    notes.push(
      `missing inside: ${missing.join(", ")} (srt does not restore a symbolic link that leads out of a denied directory)`,
    );
  return [...new Set(dirs)];
}

function listDirectory(dir: string): string[] | undefined {
  try {
    return readdirSync(dir).sort();
  } catch {
    // Unreadable directory: the caller says it cannot list it.
    return undefined;
  }
}

export function srtSettings(
  grant: Grant,
  options: SrtOptions = {},
  notes: string[] = [],
): Record<string, unknown> {
  const files = grant.paths.filter((p) => !p.device);
  // A writable file inside a writable directory is left to the directory: srt binds each entry, and
  // a file bind is a mount point, which an atomic replace (rename over it) fails on with EBUSY.
  const writable = files
    .filter((p) => p.write)
    .map((p) => p.path)
    .filter((path, _, all) => !all.some((w) => w !== path && within(path, w)));
  const list = options.listDirectory ?? listDirectory;
  const read = [
    ...files.filter((p) => !p.write).flatMap((p) => readEntries(p.path, writable, list, notes)),
    ...writable,
    ...linkDirectories(grant, notes),
    ...(options.runtime ?? []),
  ].filter((path) => writable.includes(path) || !writable.some((w) => within(path, w)));
  return {
    network: {
      allowedDomains: grant.network.map(destinationText),
      deniedDomains: [],
      strictAllowlist: true,
      allowLocalBinding: false,
      ...(grant.sockets.length ? { allowUnixSockets: [...grant.sockets] } : {}),
    },
    filesystem: {
      denyRead: ["/"],
      allowRead: [...new Set(read)].sort().map(entry),
      allowWrite: writable.map(entry),
      denyWrite: [],
    },
    ...(grant.env.withheld.length
      ? { credentials: { envVars: grant.env.withheld.map((name) => ({ name, mode: "deny" })) } }
      : {}),
  };
}

function srtNotes(grant: Grant, options: SrtOptions = {}): string[] {
  const underDev = grant.paths.filter((p) => !p.device && within(p.path, "/dev")).map((p) => p.path);
  return [
    ...sandboxNotes(grant),
    `exec: none; srt has no rule for which programs run, so any file readable inside with an execute bit runs (denyRead / hides the rest; the policy allows ${grant.programs.length ? grant.programs.join(", ") : "no program"} beyond the interpreter)`,
    grant.network.length
      ? `network: ${networkSummary(grant)} by name and port, through srt's HTTP and SOCKS proxies, for programs that use the proxy variables; nothing else leaves (no UDP, no direct connection)`
      : "network: none (srt removes the network namespace; with no allowed domain its proxies refuse every request)",
    "reads: deny-then-allow (denyRead / with allowRead of the grant); srt keeps its own /dev (null, zero, random, urandom, tty, pts, shm), a fresh /proc and the host's /sys readable",
    "writes: besides the grant, srt always lets the command write its stdio and /tmp/claude; and it refuses writes to shell rc files, .gitconfig, .git/hooks and .git/config even in a granted tree (srt's mandatory denies, stricter than the policy)",
    "devices: srt's own /dev replaces the host's; the grant's device nodes are there, nothing else under /dev is",
    ...(underDev.length
      ? [
          `cannot express: ${underDev.join(", ")} (under /dev, which srt replaces whole); run the server outside /dev`,
        ]
      : []),
    withheldNote(grant, "denies (credentials.envVars)"),
    "environment: srt adds its own variables (proxy settings, TMPDIR=/tmp/claude); the run command sets TMPDIR back",
    `unix sockets: srt refuses socket(AF_UNIX) on Linux with seccomp, whatever the path; ${socketsSummary(grant)}${grant.sockets.length ? " (in allowUnixSockets, which srt honours on macOS only; allowAllUnixSockets would open every socket in its view)" : ""}`,
    "limits: none (srt has no cgroup or rlimit option; see --format cgroup)",
    ...(options.runtime
      ? [
          `srt's own files, readable inside: ${options.runtime.join(", ")}${options.found ? ` (${options.found})` : ""}`,
        ]
      : [
          "srt's own files: add its vendor/seccomp/<arch> directory, the shell and socat to allowRead (not found when this was exported)",
        ]),
  ];
}

export function exportSrt(grant: Grant, options: SrtOptions = {}): Exported {
  const expanded: string[] = [];
  const body = srtSettings(grant, options, expanded);
  const notes = [...srtNotes(grant, options), ...expanded];
  const settings = {
    mcpguard: {
      server: grant.server,
      usage: `srt --settings <this file> -c ${grant.command.length ? shellQuote(srtCommand(grant, grant.command)) : "'<command>'"}`,
      notes,
    },
    ...body,
  };
  return { format: "srt", text: `${JSON.stringify(settings, null, 2)}\n`, notes };
}

/**
 * The command string for `srt -c`: srt joins a positional command without quoting, so every
 * argument is quoted here. It enters the server's directory and sets TMPDIR back, which srt
 * replaces with /tmp/claude.
 */
export function srtCommand(grant: Grant, command: readonly string[]): string {
  // A working directory the policy does not grant is hidden: the server then starts where srt put it.
  const steps = [`cd ${shellQuote(grant.cwd)} 2>/dev/null`];
  if (grant.tmp) steps.push(`export TMPDIR=${shellQuote(grant.tmp)}`);
  steps.push(`exec ${command.map(shellQuote).join(" ")}`);
  return steps.join("; ");
}

/** The argv that runs `command` under a settings file; `srt` is how to start srt (e.g. node + cli.js). */
export function srtArgv(
  srt: readonly string[],
  settings: string,
  grant: Grant,
  command: readonly string[],
): string[] {
  return [...srt, "--settings", settings, "-c", srtCommand(grant, command)];
}
