/**
 * `mcpguard policy learn`: the grants a session's refusals needed, proposed for review.
 *
 * A server runs under its draft (C-full, or any config with L1) while it is used normally; its
 * audit log then holds each refusal in order: an L1 refusal on the call's decision record, with the
 * grant it lacked (`need`: a file, a program, a destination, a SQL class), and each kernel refusal
 * after the decision of the call that was running (kernelEvents.ts writes them before each
 * decision). Learning walks each session of the server in `seq` order and gives every refusal to
 * the tool of the last call that went through, or to the start (no call yet), then proposes, per
 * tool, the narrowest grant that generalises beyond the one file:
 *
 * - a file the server writes, or reads in its working folder ({{cwd}}), is data: the folder it lies
 *   in (`{{cwd}}/notes/**`), or the file and its siblings (`{{cwd}}/store.json*`) where that folder
 *   is the working folder, HOME or `/` itself;
 * - a file it reads elsewhere (a setting, a system file) is that file;
 * - a program is its name when PATH finds the same file, else its path; a destination is the host
 *   (from a refused DNS name) or `address:port`; a pathname unix socket its path, as the server
 *   named it; a SQL refusal its statement class;
 * - paths are written back with the policy's variables ({{cwd}}, {{home}}, {{tmp}}) from the start
 *   record's `world`, so a policy learnt in one folder holds in another.
 *
 * Never proposed, and listed with why: a secret location (the validator's list: ~/.ssh, ~/.aws,
 * keys, /etc/shadow, /proc, ..., plus browser profiles and keyrings), a place that runs code at
 * login or commit (for writes), the guard's own files (policy, audit log, key, mcpguard's state
 * folder), the socket of a daemon or agent that acts for its client outside the sandbox (a
 * container engine's, a D-Bus bus, systemd's: {@link ROOT_SOCKETS}), a grant that would cover `/`,
 * `/home`, `/root` or HOME whole, an L1 refusal that is no missing grant (an option injection, a
 * dynamic command, an undeclared argument) and every L2 or AgentBound refusal (an override turns
 * an L2 rule off, by hand). Refusals at start are listed; a server that went on to answer calls
 * did without them, so they are proposed only on request.
 *
 * Attribution is by order: a refusal during a call made in parallel with another may be given to
 * the other. Learning from calls made one at a time (what a person does) is exact.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { socketRefusal } from "@mcpguard/kernel/sockets";
import type { AuditRecord } from "./auditRecords.js";

type Capability = "read" | "write" | "exec" | "network" | "sockets" | "sql";

/** What {{cwd}}, {{home}} and {{tmp}} stood for in a session. */
export interface World {
  cwd: string;
  home?: string;
  tmp?: string;
}

/** One refusal of a session, and the call it happened in. */
export interface Refusal {
  session: string;
  seq: number;
  /** The tool of the call it happened in; null before the session's first call. */
  tool: string | null;
  /** The layer that refused: L1, L2, AB, or the kernel (its backend). */
  by: string;
  /** The refusal in a few words (a kernel refusal as `mcpguard audit` shows it, a decision's reason). */
  what: string;
  /** The grant it lacked, absolute, when a grant could answer it (`made`: a folder it created). */
  need?: { capability: Capability; value: string; made?: boolean };
  world: World;
}

export interface Proposal {
  tool: string;
  capability: Capability;
  /** As the policy will hold it: a path pattern with variables, a program, a destination, a class. */
  value: string;
  because: Refusal[];
}

interface NotProposed {
  refusal: Refusal;
  why: string;
}

export interface LearnOptions {
  /** The server's name in the log (the policy's `server`, or run's --server-name). */
  server: string;
  /**
   * The tools the policy declares (a refusal of another tool is listed, never proposed): whether
   * each takes a path argument, and whether it may read any file already.
   */
  tools: ReadonlyMap<string, { takesPath: boolean; reads: boolean }>;
  /** Is `path` a secret location, or (for writes) one that runs code? The reason, if so. */
  sensitive: (path: string, write: boolean, world: World) => string | undefined;
  /** The guard's own files and folders (policy, audit log, key, state folder). */
  guardPaths: readonly string[];
  /** Propose what every runtime probes at start and does without (/proc, /sys, locales) too. */
  includeStart?: boolean;
  /** Where a program name is looked up (default: this process's PATH). */
  path?: string;
}

export interface LearnResult {
  sessions: number;
  calls: number;
  refusals: number;
  proposals: Proposal[];
  notProposed: NotProposed[];
  /** Refusals before the first call of what runtimes probe and do without, when not proposed. */
  atStart: Refusal[];
}

/**
 * Secret locations in a home, as folders: the validator's (a rule of L2 judges arguments against
 * them) and the browser profiles and key stores, which no argument rule needs. A learnt folder
 * grant never covers one: the folder that holds one (HOME, ~/.config) is narrowed to the file.
 */
const SECRET_IN_HOME = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".kube",
  ".docker",
  ".azure",
  ".config/gcloud",
  ".config/gh",
  ".netrc",
  ".git-credentials",
  ".pgpass",
  ".npmrc",
  ".pypirc",
  ".vault-token",
  ".mozilla",
  ".thunderbird",
  ".config/google-chrome",
  ".config/chromium",
  ".config/BraveSoftware",
  ".config/microsoft-edge",
  ".config/vivaldi",
  ".config/opera",
  "snap/firefox",
  "snap/chromium",
  ".local/share/keyrings",
  ".password-store",
];
const SECRET_ON_HOST = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root", "/proc", "/sys"];

function secretFolders(world: World): string[] {
  const home = world.home?.replace(/\/$/, "");
  return [...SECRET_ON_HOST, ...(home ? SECRET_IN_HOME.map((p) => `${home}/${p}`) : [])];
}

const within = (path: string, dir: string) =>
  path === dir || path.startsWith(dir === "/" ? "/" : `${dir.replace(/\/$/, "")}/`);

/** The working folders a world's paths are written against, most specific first. */
function variables(world: World): [string, string][] {
  const vars: [string, string][] = [["{{cwd}}", world.cwd]];
  if (world.home) vars.push(["{{home}}", world.home]);
  if (world.tmp) vars.push(["{{tmp}}", world.tmp]);
  return vars.filter(([, dir]) => dir !== "/").sort((a, b) => b[1].length - a[1].length);
}

/** `path` written with the policy's variables where it lies in one of the world's folders. */
export function withVariables(path: string, world: World): string {
  for (const [name, dir] of variables(world)) {
    const d = dir.replace(/\/$/, "");
    if (path === d) return name;
    if (path.startsWith(`${d}/`)) return `${name}${path.slice(d.length)}`;
  }
  return path;
}

function kind(path: string): "dir" | "file" | undefined {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    // Missing: neither a file nor a folder yet.
    return undefined;
  }
}

/** Folders no learnt grant may cover whole: the root, the homes, HOME, and the working folder itself. */
function tooBroad(dir: string, world: World): boolean {
  return ["/", "/home", "/root", "/tmp", ...(world.home ? [world.home] : [])].includes(dir);
}

/**
 * The pattern for a file a refusal needed: its folder for data (a write, or a read in the working
 * folder), else the file. A folder that is a broad one, the working folder itself, or holds a
 * secret location or a guard file below it gives the file and its siblings instead.
 */
function filePattern(
  path: string,
  capability: "read" | "write",
  made: boolean,
  world: World,
  covers: (dir: string) => boolean,
): string {
  const data = capability === "write" || within(path, world.cwd);
  if (!data) return path;
  // A folder made (mkdir) is the data folder itself; a file lies in one.
  const dir = made || kind(path) === "dir" ? path : dirname(path);
  if (dir !== world.cwd && !tooBroad(dir, world) && !covers(dir)) return `${dir}/**`;
  if (path === dir) return `${dir}/**`;
  return `${path}*`;
}

/** A program's name where PATH finds that very file, else its path. */
function programOf(value: string, world: World, searchPath: string): string {
  if (!value.includes("/")) return value;
  const path = isAbsolute(value) ? value : resolve(world.cwd, value);
  const name = basename(path);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    // Missing: the path as the log has it.
    return path;
  }
  for (const dir of searchPath.split(delimiter).filter((d) => isAbsolute(d))) {
    try {
      if (realpathSync(join(dir, name)) === real) return name;
    } catch {
      // Not in this folder of PATH.
    }
  }
  return path;
}

const EXEC_CALLS = new Set(["execve", "execveat"]);
const OPEN_CALLS = new Set(["open", "openat", "openat2"]);
const NET_CALLS = new Set(["connect", "sendto", "sendmsg"]);

/**
 * Sockets of daemons that run what a client sends them with their own rights, root's or the user's
 * (start a privileged container, a unit, a VM, a shell in a terminal multiplexer), or, on a D-Bus
 * bus, what a client running as root or as the user asks (systemd's StartTransientUnit): a grant of
 * one is a grant of the host or of the user's session outside the sandbox, never learnt. By file
 * name, wherever the daemon keeps it, and by the name of what a symlink leads to. Agents that use
 * a key (ssh-agent, gpg-agent) are secret locations: `sensitive` judges them.
 */
const ROOT_SOCKETS = new Set([
  "docker.sock",
  "cri-dockerd.sock",
  "containerd.sock",
  "containerd.sock.ttrpc",
  "podman.sock",
  "crio.sock",
  "buildkitd.sock",
  "libvirt-sock",
  "virtqemud-sock",
  "virtproxyd-sock",
  "virtnetworkd-sock",
  "virtstoraged-sock",
  "snapd.socket",
  "system_bus_socket",
  "control", // udev's, /run/udev/control
]);
const rootSocket = (path: string) =>
  [path, resolvedOrSelf(path)].some(
    (p) =>
      ROOT_SOCKETS.has(basename(p)) ||
      /^\/run\/(?:user\/\d+\/)?systemd\/(?:private$|io\.systemd\.|userdb\/)/.test(p) ||
      /^\/run\/user\/\d+\/bus$/.test(p) ||
      /\/(?:lxd|incus)\/unix\.socket$/.test(p) ||
      /\/(?:tmux-\d+\/[^/]+|screen\/S-[^/]+\/[^/]+|\.screen\/[^/]+)$/.test(p) ||
      /\/S\.gpg-agent(?:\.[a-z]+)?$|\/ssh-[^/]+\/agent\.\d+$|ssh-agent[^/]*\.sock(?:et)?$/.test(p),
  );

/** The path with its symlinks resolved, where it exists. */
function resolvedOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** What a kernel refusal lacked: from its access (an open's flags, a BPF LSM hook's), else its call. */
function kernelNeed(k: Record<string, unknown>, world: World): NonNullable<Refusal["need"]>[] {
  const path = typeof k.path === "string" && k.path !== "" ? resolve(world.cwd, k.path) : undefined;
  const address =
    typeof k.addr === "string" && typeof k.port === "number" ? `${k.addr}:${k.port}` : undefined;
  if (k.event === "dns-refused") {
    const name = typeof k.name === "string" ? k.name : undefined;
    if (!name) return [];
    // The log keeps a refused name's last two labels only (kernel dns.ts): `…(3 labels).example.com`.
    const cut = /^\u2026\(\d+ labels?\)\.(.+)$/.exec(name);
    return [{ capability: "network", value: cut ? `*.${cut[1]}` : name.replace(/\.$/, "") }];
  }
  const call = String(k.syscall ?? k.op ?? "");
  // The kernel layer compares a socket's name as the server gave it (bpf/unix.bpf.h): no resolving.
  if (/_unix$/.test(call))
    return typeof k.path === "string" ? [{ capability: "sockets", value: k.path }] : [];
  if (address && (NET_CALLS.has(call) || /^(connect|sendmsg|socket_connect|socket_sendmsg)/.test(call)))
    return [
      {
        capability: "network",
        value: address.includes(":") && k.family === 6 ? `[${k.addr}]:${k.port}` : address,
      },
    ];
  if (!path) return [];
  const access = typeof k.access === "string" ? k.access : undefined;
  const needs: NonNullable<Refusal["need"]>[] = [];
  if (access?.includes("x") || EXEC_CALLS.has(call) || call === "bprm_check_security")
    needs.push({ capability: "exec", value: path });
  else if (access) {
    if (access.includes("w"))
      needs.push({ capability: "write", value: path, ...(/mkdir/.test(call) ? { made: true } : {}) });
    else if (access.includes("r")) needs.push({ capability: "read", value: path });
  } else if (OPEN_CALLS.has(call) || call === "file_open") needs.push({ capability: "read", value: path });
  else needs.push({ capability: "write", value: path, ...(/mkdir/.test(call) ? { made: true } : {}) });
  if (typeof k.to === "string" && k.to !== "")
    needs.push({ capability: "write", value: resolve(world.cwd, k.to) });
  return needs;
}

/** `mcpguard audit`'s words for a kernel refusal, given by the caller (startupDenials.ts). */
export type Describe = (record: Record<string, unknown>) => string | undefined;

interface Session {
  id: string;
  world: World;
  records: AuditRecord[];
}

/** The sessions of `server` in the log, each with the world of its start record, records by seq. */
function sessionsOf(records: readonly AuditRecord[], server: string): Session[] {
  const byId = new Map<string, Session>();
  for (const record of records) {
    const { session } = record as { session?: unknown };
    if (typeof session !== "string") continue;
    if (record.type === "lifecycle" && record.event === "start") {
      if (record.server !== server) continue;
      const world = (record as { world?: World }).world;
      if (world) byId.set(session, { id: session, world, records: [] });
    }
  }
  for (const record of records) {
    const { session } = record as { session?: unknown };
    if (typeof session === "string") byId.get(session)?.records.push(record);
  }
  for (const s of byId.values()) s.records.sort((a, b) => seqOf(a) - seqOf(b));
  return [...byId.values()];
}

const seqOf = (r: AuditRecord) => Number((r as { seq?: unknown }).seq ?? 0);

/** Each refusal of the sessions, given to the call it happened in. */
function refusalsOf(
  records: readonly AuditRecord[],
  options: Pick<LearnOptions, "server" | "tools">,
  describe: Describe,
): { sessions: number; calls: number; refusals: Refusal[] } {
  const sessions = sessionsOf(records, options.server);
  const refusals: Refusal[] = [];
  let calls = 0;
  for (const { id, world, records: list } of sessions) {
    let current: string | null = null;
    for (const record of list) {
      const seq = seqOf(record);
      if (record.type === "decision") {
        // Decisions on listings and server messages name no declared tool: not calls.
        if (!options.tools.has(record.tool) && record.layer !== "L1") continue;
        calls++;
        if (record.decision !== "deny") {
          current = record.tool;
          continue;
        }
        const what = `${record.rule ? `${record.rule}: ` : ""}${record.reason}`;
        const base = { session: id, seq, tool: record.tool, by: record.layer, what, world };
        const needs = record.needs ?? [];
        if (needs.length === 0) refusals.push(base);
        needs.forEach((need, i) => {
          const also = i ? { what: `the same call also lacked ${need.capability} ${need.value}` } : {};
          refusals.push({ ...base, need, ...also });
        });
        continue;
      }
      if (record.type !== "kernel" || record.decision !== "deny") continue;
      const k = record as Record<string, unknown>;
      const what =
        describe({ ...k, type: record.event }) ?? `${record.event} ${String(k.op ?? k.syscall ?? "")}`;
      const needs = kernelNeed(k, world);
      const by = `kernel (${String(record.backend ?? "L3")})`;
      if (needs.length === 0) refusals.push({ session: id, seq, tool: current, by, what, world });
      for (const need of needs) refusals.push({ session: id, seq, tool: current, by, what, need, world });
    }
  }
  return { sessions: sessions.length, calls, refusals };
}

/** Locale data, character sets, /proc and /sys: what every runtime reads at start and does without. */
const RUNTIME_PROBE =
  /^\/(?:proc|sys)(?:\/|$)|^\/usr\/(?:share|lib)\/(?:locale|i18n)(?:\/|$)|^\/usr\/lib\/[^/]+\/gconv\//;

function runtimeProbe(refusal: Refusal): boolean {
  const { need } = refusal;
  return (
    need !== undefined &&
    (need.capability === "read" || need.capability === "write") &&
    RUNTIME_PROBE.test(need.value)
  );
}

/** The proposal for one refusal, or why there is none. */
function propose(
  refusal: Refusal,
  options: LearnOptions,
): { tool: string; capability: Capability; value: string } | { why: string } {
  const { need, world } = refusal;
  if (refusal.by === "L2" || refusal.by === "AB")
    return {
      why: `${refusal.by} refused what the call carried, not a missing grant; if it was wrong, an override's disableRules turns the rule off for the tool (by hand)`,
    };
  if (!need) return { why: "no grant allows this (it is what the layer refuses whatever the policy)" };
  const tool = refusal.tool as string;
  if (!options.tools.has(tool)) return { why: `the policy does not declare the tool "${tool}"` };
  const { capability, value } = need;
  if (capability === "network" || capability === "sql") return { tool, capability, value };
  if (capability === "sockets") {
    if (rootSocket(value))
      return {
        why: `${value} is the socket of a daemon or agent that acts for its client outside the sandbox`,
      };
    const secret = options.sensitive(value, false, world);
    if (secret) return { why: `${value} is ${secret}` };
    // What the kernel layer would refuse to start with, whatever the policy (procfs on its way, ...).
    const why = socketRefusal(value, []);
    if (why) return { why };
    return { tool, capability, value: withVariables(value, world) };
  }
  if (capability === "exec") {
    const path = value.includes("/") ? resolve(world.cwd, value) : undefined;
    if (path) {
      const secret = options.sensitive(path, false, world);
      if (secret) return { why: `${path} is ${secret}` };
      if (options.guardPaths.some((g) => within(path, g)))
        return { why: `${path} is one of the guard's own files` };
    }
    return { tool, capability, value: programOf(value, world, options.path ?? process.env.PATH ?? "") };
  }
  const path = resolve(world.cwd, value);
  const write = capability === "write";
  const secret = options.sensitive(path, write, world);
  if (secret) return { why: `${path} is ${secret}` };
  if (options.guardPaths.some((g) => within(path, g) || within(g, path)))
    return { why: `${path} is the guard's own (its policy, audit log, key or state folder)` };
  if (tooBroad(path, world)) return { why: `${path} is a folder no learnt grant covers whole` };
  const secrets = secretFolders(world);
  if (secrets.some((secret) => within(path, secret))) return { why: `${path} is a secret location` };
  // A folder that holds a secret location or a guard file below it is never granted whole.
  const covers = (dir: string) => [...secrets, ...options.guardPaths].some((p) => within(p, dir));
  const pattern = filePattern(path, capability, need.made === true, world, covers);
  return { tool, capability, value: withVariables(pattern, world) };
}

/** The refusals of `records` as grants per tool, for review. */
export function learn(
  records: readonly AuditRecord[],
  options: LearnOptions,
  describe: Describe,
): LearnResult {
  const { sessions, calls, refusals } = refusalsOf(records, options, describe);
  const proposals = new Map<string, Proposal>();
  const notProposed: NotProposed[] = [];
  const atStart: Refusal[] = [];
  const add = (tool: string, capability: Capability, value: string, refusal: Refusal) => {
    const key = JSON.stringify([tool, capability, value]);
    const found = proposals.get(key);
    if (found) found.because.push(refusal);
    else proposals.set(key, { tool, capability, value, because: [refusal] });
  };
  // What the server needs at start (its store, read before any call) goes to the tools that take no
  // path, as derive gives them the server's data; to every tool when all take one. A process has
  // one kernel ruleset: any tool's grant lets the server start.
  const dataTools = [...options.tools].filter(([, t]) => !t.takesPath).map(([name]) => name);
  const startTargets = dataTools.length ? dataTools : [...options.tools.keys()];
  for (const refusal of refusals) {
    if (refusal.tool === null && !options.includeStart && runtimeProbe(refusal)) {
      atStart.push(refusal);
      continue;
    }
    const targets = refusal.tool === null ? startTargets : [refusal.tool];
    for (const tool of targets) {
      const result = propose({ ...refusal, tool }, options);
      if ("why" in result) {
        if (tool === targets[0]) notProposed.push({ refusal, why: result.why });
        continue;
      }
      add(result.tool, result.capability, result.value, refusal);
    }
  }
  // A program the server runs works in its working folder (git in the repository it is started
  // in): a tool the policy gave a program and no file gets that folder to read, since a pass that
  // stopped at the exec never saw the program's first file.
  for (const p of [...proposals.values()]) {
    if (p.capability !== "exec" || options.tools.get(p.tool)?.reads !== false) continue;
    const refusal = p.because.find((r) => r.by.startsWith("kernel") && !tooBroad(r.world.cwd, r.world));
    if (refusal)
      add(p.tool, "read", "{{cwd}}/**", {
        ...refusal,
        what: `${refusal.what}, a program that works in the server's folder`,
      });
  }
  // A write grant lets the tool read too: a read of the same pattern is not proposed twice.
  for (const [key, p] of proposals) {
    if (p.capability !== "read") continue;
    const write = proposals.get(JSON.stringify([p.tool, "write", p.value]));
    if (write) {
      write.because.push(...p.because);
      proposals.delete(key);
    }
  }
  return {
    sessions,
    calls,
    refusals: refusals.length,
    proposals: [...proposals.values()],
    notProposed,
    atStart,
  };
}

/** Tool policies as a policy file holds them (only the fields learning adds to). */
interface ToolFields {
  read?: string[];
  write?: string[];
  network?: string[];
  sockets?: string[];
  exec?: string[];
  sql?: string[];
}

/**
 * The policy with the proposals added, as JSON (its other fields, and their order, as they were).
 * A proposal the tool holds already is left out of `added`.
 */
export function applyProposals(
  policy: { tools: Record<string, ToolFields> },
  proposals: readonly Proposal[],
): { policy: unknown; added: Proposal[] } {
  const copy = structuredClone(policy) as { tools: Record<string, ToolFields> };
  const added: Proposal[] = [];
  for (const p of proposals) {
    const tool = copy.tools[p.tool];
    if (!tool) continue;
    const list = tool[p.capability] ?? (p.capability === "sql" ? ["read"] : []);
    if (list.includes(p.value)) continue;
    tool[p.capability] = [...list, p.value];
    added.push(p);
  }
  return { policy: copy, added };
}
