/**
 * `mcpguard wrap` and `mcpguard unwrap`: put `mcpguard run` in front of every local server of an
 * MCP client's config file, and take it away again, byte for byte.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { defineCommand, intOption, UsageError } from "../args.js";
import { auditFiles } from "../audit.js";
import { ConfigError, resolveConfig } from "../configs.js";
import { signalGroup } from "../containment.js";
import { canonical, within } from "../guardFiles.js";
import { hold } from "../helperExit.js";
import { ownBin } from "../self.js";
import { stateHome } from "../stateHome.js";
import {
  type ClientConfig,
  ClientConfigError,
  expand,
  formatClientConfig,
  parseClientConfig,
  parseEnvFile,
  replaceLaunch,
  type StdioEntry,
  shapeOf,
} from "../wrap/clients.js";
import { type Finding, SEVERITIES, scanLaunch, secretArgs } from "../wrap/scan.js";

const WRAP = defineCommand({
  name: "mcpguard wrap",
  description: [
    "Put mcpguard run in front of each local (stdio) server of an MCP client's config file: Claude " +
      "Desktop's claude_desktop_config.json, Cursor's mcp.json, VS Code's mcp.json (\"servers\", with " +
      'its "inputs" kept), or any file with "mcpServers". Remote servers (url, sse, http) and entries ' +
      "already wrapped are left as they are.",
    "First a review of each server's launch (inline code, unpinned packages, curl | sh, docker with the " +
      "host's powers, secrets in env, programs found through PATH or writable by others), printed before " +
      "anything runs. A high finding stops wrap (exit 1) unless --yes. Then, for each server: a draft " +
      "policy from its tools/list (mcpguard policy derive, started with the entry's env, envFile and " +
      "cwd; an existing policy file is kept), its tool definitions pinned (mcpguard pin), and the " +
      "entry's command replaced by mcpguard run with absolute paths (below); env, cwd and every other " +
      "field kept. The file is backed up to <file>.mcpguard-backup first (never over an existing " +
      "backup) and written atomically.",
    "Roots: the folders the server's command line names; else the entry's cwd, or the project folder " +
      "of a project file (.vscode/mcp.json, .cursor/mcp.json, .mcp.json); else nothing (a desktop " +
      "client's server starts in no folder of yours: add grants to the draft). Each --root adds one.",
    "The policies, the pin file and the audit logs go to wrap's own folder for the config, outside " +
      "every project: /var/lib/mcpguard/clients/<key>/ for root, else $XDG_STATE_HOME/mcpguard/clients/" +
      "<key>/ or ~/.local/state/mcpguard/clients/<key>/ (<key>: the config's path and a hash of it). " +
      "mcpguard run refuses files the server could write; a folder given below is refused when it lies " +
      "in the project folder, an entry's cwd or a --root. --relocate moves the files an older wrap kept " +
      "beside the config there, and points the entries at them.",
  ].join("\n\n"),
  args: [["[client-config-file]", "the client's MCP configuration"]],
  options: {
    config: {
      type: "string",
      default: "C-full",
      value: "name",
      help: "the config the wrapped servers run: C-full (default) or C-app",
    },
    policies: {
      type: "string",
      value: "dir",
      help: "where the policies go (default: wrap's own folder for this config, below)",
    },
    pins: { type: "string", value: "file", help: "the shared pin file (default: <policies>/pins.json)" },
    "audit-dir": {
      type: "string",
      value: "dir",
      help: "one audit log per server, <name>.ndjson (default: <policies>/audit)",
    },
    server: { type: "string", multiple: true, value: "name", help: "wrap only this server (repeatable)" },
    root: {
      type: "string",
      multiple: true,
      value: "dir",
      help: "a folder every wrapped server's draft may use (repeatable)",
    },
    workspace: {
      type: "string",
      value: "dir",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's variable, as written in its mcp.json
      help: "the folder ${workspaceFolder} stands for (default: a project file's folder)",
    },
    "timeout-ms": {
      type: "string",
      value: "n",
      help: "how long each server may take to list its tools (default 15000)",
    },
    relocate: {
      type: "boolean",
      help: "move the files of entries wrapped before into wrap's own folder, and point the entries there",
    },
    learn: {
      type: "boolean",
      help:
        "for each wrapped server, propose the grants its audit log's refusals needed (mcpguard policy " +
        "learn), print them, and add them to its policy (the old one kept as <policy>.before-learn); " +
        "with --dry-run, print only",
    },
    "dry-run": { type: "boolean", help: "print the review and the plan; write and start nothing" },
    yes: { type: "boolean", short: "y", help: "wrap despite high findings (they are still printed)" },
  },
  more: `a wrapped entry runs
  <node> <mcpguard> run --config C --policy P --pins F --audit-log L --server-name NAME -- <command> <args>

exit status: 0 wrapped (or nothing to wrap), 1 a high finding without --yes or a server that
could not be derived (the file is then left as it was), 2 a usage error.`,
});

const UNWRAP = defineCommand({
  name: "mcpguard unwrap",
  description:
    "Restore the file mcpguard wrap backed up, byte for byte, and remove the backup. Refused when the " +
    "file changed since wrap wrote it (those edits would be lost) or the backup changed since, unless " +
    "--force. Then the policies and the pin file wrap wrote in its own folder are removed (and the " +
    "folder, once empty); the audit logs are kept.",
  args: [["[client-config-file]", "the client's MCP configuration, as wrap was given it"]],
  options: {
    force: { type: "boolean", help: "restore even over edits made since wrap" },
    "keep-policies": { type: "boolean", help: "keep the policies and the pin file too" },
  },
});

/** What wrap records beside the backup, for unwrap (and --relocate). Records of older wraps lack `stateDir`. */
const WrapState = z.strictObject({
  version: z.literal(1),
  file: z.string(),
  backup: z.string(),
  backupSha256: z.string(),
  wrappedSha256: z.string(),
  wrappedAt: z.string(),
  /** wrap's own folder for the config when it wrote the record; unwrap only trusts the one it computes. */
  stateDir: z.optional(z.string()),
  pins: z.string(),
  servers: z.record(z.string(), z.strictObject({ policy: z.string(), auditLog: z.string() })),
});
type WrapState = z.infer<typeof WrapState>;

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
export const backupPath = (file: string) => `${file}.mcpguard-backup`;
export const statePath = (file: string) => `${file}.mcpguard-wrap.json`;

/**
 * wrap's own folder for a client config, outside every project: `<state>/clients/<key>` (stateHome:
 * /var/lib/mcpguard for root, else under $XDG_STATE_HOME or ~/.local/state), where `<key>` is a
 * readable stem of the config's path (`myproject-.vscode-mcp.json`) and the first 12 hex digits of
 * the sha256 of its canonical path.
 */
export function wrapStateDir(file: string): string {
  const home = stateHome();
  if (!home)
    throw new UsageError(
      "cannot find your home directory for wrap's files: give --policies DIR outside the project",
    );
  const path = canonical(file);
  const parent = dirname(path);
  // A client's own folder (.vscode, .cursor) says little alone: the project's name goes first.
  const words = basename(parent).startsWith(".")
    ? [basename(dirname(parent)), basename(parent), basename(path)]
    : [basename(parent), basename(path)];
  const stem =
    words
      .filter(Boolean)
      .join("-")
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[.-]+/, "")
      .slice(0, 80) || "config";
  return join(home, "clients", `${stem}-${sha256(path).slice(0, 12)}`);
}

/** Make a folder of wrap's (and its parents) private to the user: 0700. */
function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Write `bytes` beside `file` and rename it over, with `mode`. */
function writeAtomic(file: string, bytes: Buffer | string, mode?: number): void {
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, bytes, { flag: "wx", mode: mode ?? 0o644 });
    if (mode !== undefined) chmodSync(temporary, mode);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Read the file named on the command line, or a one-line usage error. */
function readConfigFile(arg: string): { file: string; bytes: Buffer; mode: number } {
  const file = resolve(arg);
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === "ENOENT" ? `${arg}: no such file` : `${arg}: cannot read (${code})`);
  }
  if (stat.isDirectory()) throw new UsageError(`${arg}: a folder, not a client config file`);
  try {
    // A config kept as a symlink (dotfiles) is written where it points, and the link stays.
    const real = realpathSync(file);
    return { file: real, bytes: readFileSync(real), mode: stat.mode & 0o7777 };
  } catch (error) {
    throw new UsageError(`${arg}: cannot read (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** Whether an entry already starts `mcpguard run` (wrapped before, by wrap or by hand). */
export function isWrapped(entry: StdioEntry): boolean {
  const words = [entry.command, ...(entry.args ?? [])];
  const i = words.findIndex((w) => /(^|[/\\])mcpguard(\.js|\.cmd|\.exe)?$/.test(w));
  return i !== -1 && words[i + 1] === "run";
}

/** A file name for a server name: letters, digits, `.`, `_` and `-`. */
const fileName = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "_") || "server";

interface Planned {
  name: string;
  entry: StdioEntry;
  /** The launch as the client will expand it (variables filled in): what derive starts. */
  argv: string[];
  cwd: string;
  cwdReason: string;
  env: NodeJS.ProcessEnv;
  /** Names of the variables the entry gives the server (env, envFile): the policy keeps them. */
  keep: string[];
  findings: Finding[];
  /** Why the server cannot be started at wrap time (a VS Code input in its command line). */
  blocked?: string;
  notes: string[];
  policy: string;
  auditLog: string;
}

function plan(
  config: ClientConfig,
  name: string,
  entry: StdioEntry,
  context: { workspace?: string; kernel: boolean; policies: string; auditDir: string; taken: Set<string> },
): Planned {
  const vars = { workspace: context.workspace, home: homedir(), env: process.env };
  const notes: string[] = [];
  let blocked: string | undefined;
  const fill = (text: string, where: string) => {
    const out = expand(text, vars);
    if (out.missing && !blocked) blocked = `${where} uses ${out.missing}`;
    return out.value;
  };
  const argv = [fill(entry.command, "command"), ...(entry.args ?? []).map((a) => fill(a, "args"))];
  const base = dirname(config.file);
  let cwd: string;
  let cwdReason: string;
  if (entry.cwd !== undefined) {
    cwd = resolve(context.workspace ?? base, fill(entry.cwd, "cwd"));
    cwdReason = "the entry's cwd";
  } else if (context.workspace) {
    cwd = context.workspace;
    cwdReason = "the project folder the client starts it in";
  } else {
    cwd = "/";
    cwdReason = "no folder (a desktop client's server starts in none of yours)";
  }
  if (!blocked && (!existsSync(cwd) || !statSync(cwd).isDirectory()))
    blocked = `its cwd ${cwd} is not a folder here`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  const keep = new Set<string>();
  if (entry.envFile !== undefined) {
    const envFile = resolve(context.workspace ?? base, expand(entry.envFile, vars).value);
    try {
      for (const [k, v] of Object.entries(parseEnvFile(readFileSync(envFile, "utf8")))) {
        env[k] = v;
        keep.add(k);
      }
    } catch {
      // Unreadable here: said in the notes, and the policy keeps none of its variables.
      notes.push(`envFile ${envFile} cannot be read here: its variables are not kept by the policy`);
    }
  }
  for (const [k, v] of Object.entries(entry.env ?? {})) {
    if (v === null) {
      delete env[k];
      continue;
    }
    const value = expand(String(v), vars);
    if (value.missing) notes.push(`env ${k} is ${String(v)}: started without it here`);
    else env[k] = value.value;
    keep.add(k);
  }
  let stem = fileName(name);
  for (let i = 2; context.taken.has(stem); i++) stem = `${fileName(name)}-${i}`;
  context.taken.add(stem);
  const findings = scanLaunch({
    command: argv[0] as string,
    args: argv.slice(1),
    env: entry.env,
    cwd,
    path: env.PATH,
    kernel: context.kernel,
  });
  return {
    name,
    entry,
    argv,
    cwd,
    cwdReason,
    env,
    keep: [...keep].sort(),
    findings,
    blocked,
    notes,
    policy: join(context.policies, `${stem}.json`),
    auditLog: join(context.auditDir, `${stem}.ndjson`),
  };
}

/** The `args` of the wrapped entry (its command is this node). */
function wrappedArgs(p: Planned, bin: string, configName: string, pins: string): string[] {
  return [
    bin,
    "run",
    "--config",
    configName,
    "--policy",
    p.policy,
    "--pins",
    pins,
    "--audit-log",
    p.auditLog,
    "--server-name",
    p.name,
    "--",
    p.entry.command,
    ...(p.entry.args ?? []),
  ];
}

const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
/** Arguments that hold secrets, replaced by what they are: a review never prints a secret. */
const masked = (argv: readonly string[]) => {
  const secret = secretArgs(argv);
  return argv.map((word, i) => {
    const kind = secret.get(i);
    if (!kind) return word;
    const eq = word.indexOf("=");
    return eq > 0 && kind.startsWith("value of")
      ? `${word.slice(0, eq)}=<secret>`
      : `<${kind.replace(/^value of .*/, "secret")}>`;
  });
};
const show = (argv: readonly string[]) => argv.map(quote).join(" ");

/**
 * How long wrap gives one of its own commands for a server: --timeout-ms for each start of the
 * server (policy derive starts it twice: its listing, and the relative-path probe), and SLACK_MS
 * for the rest (mcpguard's own start, the kernel probe, resolving the launch: npx fetches a package
 * it has not cached there).
 */
const SLACK_MS = 15_000;
/** A command of wrap's that a signal or the time-out stopped, killed if it has not ended after this. */
const STOP_MS = 10_000;

interface OwnResult {
  ok: boolean;
  out: string;
  err: string;
  /** Stopped past its budget: the one line that says so. */
  timedOut?: string;
}

/**
 * Run one of mcpguard's own commands for a server (policy derive, pin), with the server's env and
 * cwd, in a session of its own: a signal to wrap (a Ctrl-C too) reaches it once, from wrap. It is
 * held (helperExit.ts) while it runs, so wrap stopped by a signal hands it on and waits while the
 * command stops its server and removes its cgroup. Past its budget (`starts` times --timeout-ms,
 * and SLACK_MS) it is stopped the same way, with SIGTERM. Once a stopped command has ended, what is
 * left of its process group (npx fetching a package) is killed.
 */
async function runOwn(
  bin: string,
  args: string[],
  p: Planned,
  timeoutMs: number,
  starts: number,
): Promise<OwnResult> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: p.cwd,
    env: p.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<Error | undefined>((resolve) => {
    child.once("exit", () => resolve(undefined));
    child.once("error", resolve);
  });
  // Its output to the end, unless a process it started holds the pipes open.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const stop = async (signal: NodeJS.Signals) => {
    child.kill(signal);
    const kill = setTimeout(() => child.kill("SIGKILL"), STOP_MS);
    await exited;
    clearTimeout(kill);
    // What it started in its own process group (npx fetching the server's package) ends with it.
    if (child.pid) signalGroup(child.pid, "SIGKILL");
  };
  const letGo = hold({ stop, stopNow: () => child.kill("SIGTERM") });
  const budgetMs = starts * timeoutMs + SLACK_MS;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stop("SIGTERM");
  }, budgetMs);
  const error = await exited;
  clearTimeout(timer);
  letGo();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
  out = out.trim();
  err = err.trim();
  if (error) return { ok: false, out, err: error.message };
  if (timedOut) {
    const command = args[0] === "policy" ? "policy derive" : args[0];
    const each = starts > 1 ? ` for each of the server's ${starts} starts` : "";
    return {
      ok: false,
      out,
      err,
      timedOut:
        `mcpguard ${command} did not finish within ${budgetMs / 1000} s (--timeout-ms ${timeoutMs}${each}, ` +
        `and ${SLACK_MS / 1000} s for the rest, where npx fetches a package it has not cached): ` +
        `try a larger --timeout-ms`,
    };
  }
  return { ok: child.exitCode === 0, out, err };
}

/** What wrap reads of a policy file it edits: its description and the variables it keeps; the rest as written. */
const PolicyKeep = z.looseObject({
  description: z.optional(z.string()),
  environment: z.optional(z.looseObject({ keep: z.optional(z.array(z.string())) })),
});

/** Add the entry's own variables to a freshly derived policy's `environment.keep`. */
function keepEntryEnv(file: string, names: readonly string[]): void {
  if (names.length === 0) return;
  const policy = PolicyKeep.parse(JSON.parse(readFileSync(file, "utf8")));
  const keep = new Set([...(policy.environment?.keep ?? []), ...names]);
  policy.environment = { ...policy.environment, keep: [...keep] };
  policy.description =
    `${policy.description ?? ""} environment.keep holds the variables the client config gives this server (${names.join(", ")}), added by mcpguard wrap.`.trim();
  writeAtomic(file, `${JSON.stringify(policy, null, 2)}\n`, 0o600);
}

function printReview(planned: Planned[], skipped: { name: string; reason: string }[]): void {
  const lines: string[] = ["review of the servers' launches:"];
  for (const p of planned) {
    lines.push(`  ${p.name}: ${show(masked([p.entry.command, ...(p.entry.args ?? [])]))}`);
    if (p.findings.length === 0) lines.push("    no findings");
    for (const f of p.findings) lines.push(`    ${f.severity.padEnd(6)} ${f.rule}: ${f.reason}`);
  }
  for (const s of skipped) lines.push(`  ${s.name}: skipped: ${s.reason}`);
  const counts = SEVERITIES.map(
    (s) => `${planned.reduce((n, p) => n + p.findings.filter((f) => f.severity === s).length, 0)} ${s}`,
  );
  lines.push(`findings: ${counts.join(", ")}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The one client config file a command takes. */
function oneConfigFile(positionals: string[], verb: string): void {
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0
        ? `no client config file given (mcpguard ${verb} <client-config-file>)`
        : `one client config file at a time, got ${positionals.length}`,
    );
}

/** The L3 capabilities this host cannot enforce (none when the config has no kernel layer). */
async function kernelMissing(kernel: boolean): Promise<string[]> {
  if (!kernel) return [];
  const l3 = await import("@mcpguard/kernel");
  const probe = await l3.probeBackends({});
  const backends = l3.capabilityBackends(probe);
  const hardening = l3.hardeningBackends(probe);
  return [
    ...l3.CAPABILITIES.filter((c) => backends[c].backend === null),
    ...l3.HARDENING.filter((c) => hardening[c].backend === null),
  ];
}

type WrapValues = NonNullable<ReturnType<typeof WRAP.parse>>["values"];

/** What `wrap` was asked to do, its options checked: the client config as read, the defense config. */
interface WrapRequest {
  values: WrapValues;
  /** The config file as given on the command line. */
  arg: string;
  file: string;
  bytes: Buffer;
  mode: number;
  config: ClientConfig;
  configName: string;
  /** The defense config has the kernel layer. */
  kernel: boolean;
  timeoutMs: number;
  roots: string[];
  workspace: string | undefined;
}

/** Where wrap keeps its files for the config: the policies, the pin file, the audit logs. */
interface Places {
  /** Wrap's own folder for the config, when --policies does not say where. */
  stateDir: string | undefined;
  policies: string;
  pins: string;
  auditDir: string;
}

/** The options as a request, or a usage error in one line before anything is read or started. */
function requestOf(parsed: NonNullable<ReturnType<typeof WRAP.parse>>): WrapRequest {
  const { values, positionals } = parsed;
  oneConfigFile(positionals, "wrap");
  let configName: string;
  let kernel: boolean;
  try {
    const resolved = resolveConfig(values.config);
    if (!(resolved.layers as readonly string[]).includes("L1"))
      throw new ConfigError(
        `wrap writes a policy for each server: --config must be C-full or C-app, not ${resolved.name}`,
      );
    configName = resolved.name;
    kernel = (resolved.layers as readonly string[]).includes("L3");
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  const timeoutMs = intOption(values["timeout-ms"], "timeout-ms", 15_000);
  const roots = (values.root ?? []).map((dir) => {
    const path = resolve(dir);
    if (!existsSync(path) || !statSync(path).isDirectory())
      throw new UsageError(`--root ${dir}: not a folder`);
    return realpathSync(path);
  });
  const arg = positionals[0] as string;
  const { file, bytes, mode } = readConfigFile(arg);
  let config: ClientConfig;
  try {
    config = parseClientConfig(file, bytes);
  } catch (error) {
    if (error instanceof ClientConfigError) throw new UsageError(error.message);
    throw error;
  }
  let workspace = config.workspace;
  if (values.workspace !== undefined) {
    const dir = resolve(values.workspace);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UsageError(`--workspace ${values.workspace}: not a folder`);
    workspace = realpathSync(dir);
  }
  const names = config.entries.map((e) => e.name);
  for (const wanted of values.server ?? [])
    if (!names.includes(wanted))
      throw new UsageError(`--server ${wanted}: no such server in ${file} (it has ${names.join(", ")})`);
  return { values, arg, file, bytes, mode, config, configName, kernel, timeoutMs, roots, workspace };
}

/**
 * `mcpguard wrap`, step by step (docs/ARCHITECTURE.md, "run and wrap, phase by phase"): review the
 * servers' launches, then for each server derive its draft policy and pin its tools, then write the
 * config (with its backup and wrap's state), and report. Nothing is written before every server has
 * its policy; --dry-run stops after the review with the plan.
 */
async function wrap(argv: string[]): Promise<number> {
  const parsed = WRAP.parse(argv);
  if (!parsed) return 0;
  const request = requestOf(parsed);
  const { values, file, config } = request;
  if (values.learn) {
    if (values.relocate) throw new UsageError("give --learn or --relocate, not both");
    return learnAll(file, config, values.server ?? [], values["dry-run"] === true);
  }
  if (values.relocate) {
    for (const option of ["policies", "pins", "audit-dir"] as const)
      if (values[option] !== undefined)
        throw new UsageError(`--relocate moves the files into wrap's own folder: leave out --${option}`);
    return relocate(request.arg, file, request.bytes, request.mode, config, values["dry-run"] === true);
  }
  const places = placesOf(request);
  const planned = review(request, places);
  if (planned.length === 0) {
    process.stdout.write(`nothing to wrap in ${file}\n`);
    return 0;
  }
  const previous = previousWrap(request);
  const bin = ownBin();
  const text = wrappedText(request, places, planned, bin);
  if (values["dry-run"]) return printPlan(request, places, planned, bin);
  if (refuseHigh(planned, values.yes === true)) return 1;
  // A wrapped server under an L3 config that cannot run here would only fail at its client's start.
  const missing = await kernelMissing(request.kernel);
  if (missing.length)
    throw new UsageError(
      `${request.configName} needs the kernel layer, which cannot enforce ${missing.join(", ")} here (mcpguard doctor says why): wrap with --config C-app, or where L3 runs`,
    );

  const pinned = await preparePlaces(places);
  const failed: string[] = [];
  for (const p of planned) {
    process.stdout.write(`${p.name}:\n`);
    const problem = await derivePolicy(request, p, bin);
    if (problem) failed.push(problem);
    else await pinTools(request, places, p, bin, pinned);
  }
  if (failed.length) {
    for (const line of failed) process.stderr.write(`mcpguard: ${line}\n`);
    process.stderr.write(
      `mcpguard: ${file} was left as it was; fix the server(s) above, or leave them out with --server\n`,
    );
    return 1;
  }
  writeWrapped(request, places, planned, previous, text);
  report(request, places, planned);
  return 0;
}

/** Wrap's folders for the config: its own folder, unless --policies, --pins or --audit-dir say else. */
function placesOf(request: WrapRequest): Places {
  const { values, file } = request;
  const stateDir = values.policies === undefined ? wrapStateDir(file) : undefined;
  const policies = resolve(values.policies ?? (stateDir as string));
  const pins = resolve(values.pins ?? join(policies, "pins.json"));
  const auditDir = resolve(values["audit-dir"] ?? join(policies, "audit"));
  return { stateDir, policies, pins, auditDir };
}

/**
 * The review step: the entries to wrap, planned, and those left as they are (remote, unreadable,
 * already wrapped), printed with each launch's findings. Refuses wrap's folders where a server may
 * write them.
 */
function review(request: WrapRequest, places: Places): Planned[] {
  const { values, config, workspace, kernel } = request;
  const { policies, auditDir } = places;
  const skipped: { name: string; reason: string }[] = [];
  const planned: Planned[] = [];
  const taken = new Set<string>();
  for (const e of config.entries) {
    if (values.server && !values.server.includes(e.name)) continue;
    if (e.kind === "remote") skipped.push({ name: e.name, reason: e.reason });
    else if (e.kind === "invalid")
      skipped.push({ name: e.name, reason: `not a server entry mcpguard can read: ${e.reason}` });
    else if (isWrapped(e.entry)) {
      // Wrapped by an older wrap, which kept the files beside the config: mcpguard run refuses them.
      const args = e.entry.args ?? [];
      const policy = args.includes("--policy") ? args[args.indexOf("--policy") + 1] : undefined;
      const inProject = policy && workspace && within(canonical(policy), canonical(workspace));
      skipped.push({
        name: e.name,
        reason: inProject
          ? `already wrapped, with its policy in the project: mcpguard wrap --relocate ${request.arg} moves wrap's files out`
          : "already wrapped",
      });
    } else planned.push(plan(config, e.name, e.entry, { workspace, kernel, policies, auditDir, taken }));
  }
  refuseReachable(request, places, planned);
  printReview(planned, skipped);
  return planned;
}

/** The server may write its project, its cwd and the roots: wrap's files go elsewhere. */
function refuseReachable(request: WrapRequest, places: Places, planned: Planned[]): void {
  const { values, workspace, roots } = request;
  const reach: [string, string][] = [
    ...(workspace ? [[workspace, "the project folder"] as [string, string]] : []),
    ...planned
      .filter((p) => p.entry.cwd !== undefined)
      .map((p) => [p.cwd, `the cwd of ${p.name}`] as [string, string]),
    ...roots.map((r) => [r, "--root"] as [string, string]),
  ];
  const list: [string, string, string | undefined][] = [
    [places.policies, "--policies", values.policies],
    [places.pins, "--pins", values.pins],
    [places.auditDir, "--audit-dir", values["audit-dir"]],
  ];
  for (const [place, option, given] of list) {
    const inside = reach.find(([dir]) => within(canonical(place), canonical(dir)));
    if (inside)
      throw new UsageError(
        `${given === undefined ? `wrap's own folder for the config, ${place},` : `${option} ${given}`} lies in ` +
          `${inside[1]} ${inside[0]}, which the server may write: mcpguard run would refuse the files there; ` +
          (given === undefined
            ? `give ${option} DIR outside it`
            : "choose a folder outside it (the default is wrap's own folder for the config)"),
      );
  }
}

/** A backup exists: wrapping more is only safe while the file is as wrap left it. Its state, if so. */
function previousWrap(request: WrapRequest): WrapState | undefined {
  const { file, bytes } = request;
  const backup = backupPath(file);
  const stateFile = statePath(file);
  if (!existsSync(backup)) return undefined;
  const previous = readState(stateFile);
  if (!previous || previous.wrappedSha256 !== sha256(bytes))
    throw new UsageError(
      `${backup} exists and ${basename(file)} changed since mcpguard wrap wrote it: ` +
        `run mcpguard unwrap ${request.arg} first, or move the backup and ${basename(stateFile)} away to start from the file as it is`,
    );
  return previous;
}

/** The config's text with each planned entry's launch replaced by mcpguard run. */
function wrappedText(request: WrapRequest, places: Places, planned: Planned[], bin: string): string {
  const { config, configName } = request;
  const value = structuredClone(config.value);
  for (const p of planned)
    replaceLaunch(
      value,
      shapeOf(config, p.name),
      p.name,
      process.execPath,
      wrappedArgs(p, bin, configName, places.pins),
    );
  return formatClientConfig(value, config.format);
}

/** --dry-run: what wrap would do for each server, and nothing written or started. */
async function printPlan(
  request: WrapRequest,
  places: Places,
  planned: Planned[],
  bin: string,
): Promise<number> {
  const { file, configName } = request;
  const { pins } = places;
  const lines = ["plan (--dry-run: nothing written, nothing started):"];
  for (const p of planned) {
    lines.push(`  ${p.name}:`);
    lines.push(
      `    policy     ${p.policy}${existsSync(p.policy) ? " (exists: kept)" : " (derived from its tools/list)"}`,
    );
    lines.push(`    started in ${p.cwd}: ${p.cwdReason}`);
    if (p.keep.length) lines.push(`    keeps env  ${p.keep.join(", ")}`);
    if (p.blocked) lines.push(`    cannot be derived here: ${p.blocked}`);
    for (const note of p.notes) lines.push(`    note: ${note}`);
    lines.push(
      `    command    ${show(masked([process.execPath, ...wrappedArgs(p, bin, configName, pins)]))}`,
    );
  }
  lines.push(`  pins       ${pins}`, `  backup     ${backupPath(file)}`, `  file       ${file}`);
  const missing = await kernelMissing(request.kernel);
  if (missing.length)
    lines.push(
      `  note: ${configName} needs the kernel layer, which cannot enforce ${missing.join(", ")} here: the real run refuses (--config C-app)`,
    );
  process.stdout.write(`${lines.join("\n")}\n`);
  return refuseHigh(planned, request.values.yes === true) ? 1 : 0;
}

/** Wrap's folders, private, and the pin file: the servers it pins already. */
async function preparePlaces(places: Places): Promise<Set<string>> {
  const { policies, pins, auditDir } = places;
  makePrivateDir(policies);
  makePrivateDir(auditDir);
  makePrivateDir(dirname(pins));
  const { emptyPins, loadPins, PinError, savePins } = await import("../pins.js");
  let pinned: Set<string>;
  try {
    pinned = new Set(Object.keys(loadPins(pins, true).servers));
  } catch (error) {
    if (error instanceof PinError) throw new UsageError(error.message.split("\n")[0] as string);
    throw error;
  }
  if (!existsSync(pins)) savePins(pins, emptyPins());
  chmodSync(pins, 0o600);
  return pinned;
}

const say = (line: string) => process.stdout.write(`  ${line}\n`);

/** What `policy derive` and `pin` are both told of a server: its name, the timeout, the roots, its command. */
function serverArgs(request: WrapRequest, p: Planned): string[] {
  const roots = request.roots.flatMap((root) => ["--root", root]);
  return ["--server", p.name, "--timeout-ms", String(request.timeoutMs), ...roots, "--", ...p.argv];
}

/**
 * The derive step for one server: a policy file that exists is kept (and checked), else a draft
 * is derived from its tools/list (mcpguard policy derive). Why it failed, or nothing.
 */
async function derivePolicy(request: WrapRequest, p: Planned, bin: string): Promise<string | undefined> {
  const { file, timeoutMs } = request;
  for (const note of p.notes) say(`note: ${note}`);
  if (existsSync(p.policy)) {
    say(`policy ${p.policy} exists: kept as it is (delete it to derive a new draft)`);
    checkKeep(p, say);
    await checkConfigOutsideGrants(p, file, say);
    return undefined;
  }
  if (p.blocked) return `${p.name}: cannot be started here: ${p.blocked}`;
  const r = await runOwn(
    bin,
    ["policy", "derive", "--out", p.policy, ...serverArgs(request, p)],
    p,
    timeoutMs,
    2,
  );
  for (const line of r.err.split("\n").filter(Boolean)) say(line.replace(/^mcpguard policy derive: /, ""));
  if (!r.ok || !existsSync(p.policy))
    return `${p.name}: ${
      r.timedOut ??
      (r.err
        .split("\n")
        .at(-1)
        ?.replace(/^mcpguard( policy)?: /, "") ||
        "derive failed")
    }`;
  chmodSync(p.policy, 0o600);
  keepEntryEnv(p.policy, p.keep);
  say(`started in ${p.cwd} (${p.cwdReason})`);
  await checkConfigOutsideGrants(p, file, say);
  return undefined;
}

/** The pin step for one server: its tool definitions pinned (mcpguard pin), unless the pin file has them. */
async function pinTools(
  request: WrapRequest,
  places: Places,
  p: Planned,
  bin: string,
  pinned: Set<string>,
): Promise<void> {
  const { timeoutMs } = request;
  const { pins } = places;
  if (pinned.has(p.name)) {
    say(`pins of "${p.name}" in ${pins} kept as they are`);
    return;
  }
  const r = await runOwn(bin, ["pin", "--pins", pins, ...serverArgs(request, p)], p, timeoutMs, 1);
  const lines = [...`${r.out}\n${r.err}`.split("\n").filter(Boolean), ...(r.timedOut ? [r.timedOut] : [])];
  // mcpguard pin writes a new file: private again.
  if (existsSync(pins)) chmodSync(pins, 0o600);
  if (r.ok) for (const line of lines) say(line);
  else
    say(
      `warning: not pinned (${lines.at(-1) ?? "mcpguard pin failed"}): mcpguard run pins its first listing in each session only`,
    );
}

/** The write step: the backup (the first time), wrap's state, then the config, each written atomically. */
function writeWrapped(
  request: WrapRequest,
  places: Places,
  planned: Planned[],
  previous: WrapState | undefined,
  text: string,
): void {
  const { file, bytes, mode } = request;
  const { stateDir, pins } = places;
  const backup = backupPath(file);
  if (!previous) {
    try {
      copyFileSync(file, backup, constants.COPYFILE_EXCL);
    } catch (error) {
      throw new UsageError(`cannot write the backup ${backup}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  const state: WrapState = {
    version: 1,
    file,
    backup,
    backupSha256: previous?.backupSha256 ?? sha256(bytes),
    wrappedSha256: sha256(text),
    wrappedAt: new Date().toISOString(),
    ...(stateDir ? { stateDir } : previous?.stateDir ? { stateDir: previous.stateDir } : {}),
    pins,
    servers: {
      ...previous?.servers,
      ...Object.fromEntries(planned.map((p) => [p.name, { policy: p.policy, auditLog: p.auditLog }])),
    },
  };
  writeAtomic(statePath(file), `${JSON.stringify(state, null, 2)}\n`, 0o600);
  writeAtomic(file, text, mode);
}

/** The report step: one line of what was wrapped, and what to review. */
function report(request: WrapRequest, places: Places, planned: Planned[]): void {
  const { file, configName } = request;
  // Relative where that is shorter and clear: below the working directory, and not from / (where
  // "tmp/x" reads like a path of its own).
  const rel = (path: string) => {
    const short = relative(process.cwd(), path);
    return short && !short.startsWith("..") && process.cwd() !== "/" ? short : path;
  };
  process.stdout.write(
    `wrapped ${planned.length} server(s) of ${rel(file)} (${configName}); backup ${rel(backupPath(file))}; ` +
      `policies in ${rel(places.policies)} are drafts: review them, then remove "draft": true\n`,
  );
}

/** High findings without --yes: one line, and wrap goes no further. */
function refuseHigh(planned: Planned[], yes: boolean): boolean {
  const high = planned.filter((p) => p.findings.some((f) => f.severity === "high")).map((p) => p.name);
  if (high.length === 0 || yes) return false;
  process.stderr.write(
    `mcpguard: high findings for ${high.join(", ")}: nothing was started or written; ` +
      "review them, then run again with --yes, or leave the server out with --server\n",
  );
  return true;
}

/**
 * The client config is what makes its client start mcpguard at all: a server that may write it can
 * take `mcpguard run` out of its own entry, or change the backup unwrap restores, before the next
 * start. A write grant cannot have a file carved out of it (Landlock's rules only add), so where the
 * policy's write grants hold the config (a project's `.vscode/mcp.json` when the draft grants the
 * project folder), say so: narrow the grant, or keep the servers in a user-level config.
 */
async function checkConfigOutsideGrants(
  p: Planned,
  file: string,
  say: (line: string) => void,
): Promise<void> {
  const policyLib = await import("@mcpguard/policy");
  let writes: string[];
  try {
    const policy = await policyLib.loadPolicy(p.policy);
    const vars = { cwd: p.cwd, home: p.env.HOME || undefined, tmp: p.env.TMPDIR || undefined };
    writes = policyLib.policyNeeds(policyLib.resolvePolicy(policy, undefined, vars)).write;
  } catch {
    return; // A policy that does not load is refused by mcpguard run in its own words.
  }
  const config = canonical(file);
  const grant = writes.find((w) => within(config, canonical(w)));
  if (grant)
    say(
      `warning: the policy lets the server write ${grant}, which holds ${config}: a server that rewrites it ` +
        "can take mcpguard out of its own entry, or change the backup unwrap restores, before the client's next start; " +
        "narrow the write grants to the folders the server needs, or keep the server in a user-level config",
    );
}

/** A kept policy that would withhold a variable the entry gives its server: say so. */
function checkKeep(p: Planned, say: (line: string) => void): void {
  try {
    const policy = PolicyKeep.parse(JSON.parse(readFileSync(p.policy, "utf8")));
    const keep = new Set(policy.environment?.keep ?? []);
    const missing = p.keep.filter((name) => !keep.has(name));
    if (missing.length)
      say(
        `warning: its environment.keep lacks ${missing.join(", ")}, which the config gives the server: mcpguard run withholds them`,
      );
  } catch {
    say(
      `warning: ${p.policy} is not a policy wrap can read (JSON, environment.keep a list of names): mcpguard run will refuse it`,
    );
  }
}

function readState(file: string): WrapState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = WrapState.safeParse(JSON.parse(readFileSync(file, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Unreadable or not JSON is no state: the caller says so and refuses what needs one.
    return undefined;
  }
}

async function unwrap(argv: string[]): Promise<number> {
  const parsed = UNWRAP.parse(argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  oneConfigFile(positionals, "unwrap");
  const arg = positionals[0] as string;
  const file = existsSync(resolve(arg)) ? realpathSync(resolve(arg)) : resolve(arg);
  if (existsSync(file) && statSync(file).isDirectory())
    throw new UsageError(`${arg}: a folder, not a client config file`);
  const backup = backupPath(file);
  const stateFile = statePath(file);
  if (!existsSync(backup))
    throw new UsageError(
      `${arg} has no backup (${basename(backup)}): it was not wrapped, or was unwrapped already`,
    );
  const saved = readFileSync(backup);
  const state = readState(stateFile);
  if (!values.force) {
    if (!state)
      throw new UsageError(
        `${basename(stateFile)} is missing or unreadable: cannot tell whether ${arg} changed since wrap (--force restores the backup anyway)`,
      );
    if (sha256(saved) !== state.backupSha256)
      throw new UsageError(`${basename(backup)} changed since wrap wrote it (--force restores it anyway)`);
    if (!existsSync(file))
      throw new UsageError(`${arg} was removed since wrap (--force restores the backup)`);
    if (sha256(readFileSync(file)) !== state.wrappedSha256)
      throw new UsageError(
        `${arg} changed since mcpguard wrap wrote it: restoring the backup would lose those edits (--force restores it anyway)`,
      );
  }
  writeAtomic(file, saved, statSync(backup).mode & 0o7777);
  rmSync(backup);
  rmSync(stateFile, { force: true });
  process.stdout.write(`restored ${arg} from ${basename(backup)}\n`);
  if (state) tidy(file, state, values["keep-policies"] === true);
  return 0;
}

/** Remove a folder if it is empty; say whether it was. */
function removeIfEmpty(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    // Not empty, or gone already: either way it is not removed now.
    return false;
  }
}

/** A regular file (not a link, not a folder) or nothing. */
function isPlainFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    // Nothing there is no plain file.
    return false;
  }
}

/**
 * After unwrap: remove the policies and the pin file the record lists where they lie in wrap's
 * own folder for the config (computed here: the record lies beside the config, where a server may
 * have written it), then the folder once empty. The audit logs are kept: a record of decisions is
 * never deleted by a command that is not about the record.
 */
function tidy(file: string, state: WrapState, keepPolicies: boolean): void {
  let dir: string | undefined;
  try {
    dir = canonical(wrapStateDir(file));
  } catch {
    // No state folder (never made, or removed): nothing of it to tidy.
    dir = undefined;
  }
  const ours = (path: string) =>
    dir !== undefined && within(canonical(path), dir) && canonical(path) !== dir && isPlainFile(path);
  const lines: string[] = [];
  // wrap --learn keeps the policy it changed as <policy>.before-learn: it goes with the policy.
  const policies = Object.values(state.servers).flatMap((s) => [s.policy, `${s.policy}.before-learn`]);
  const files = [...new Set([...policies, state.pins])];
  for (const path of files.filter((f) => existsSync(f))) {
    if (keepPolicies) lines.push(`kept ${path} (--keep-policies)`);
    else if (!ours(path)) lines.push(`kept ${path}: not in wrap's own folder`);
    else {
      rmSync(path);
      lines.push(`removed ${path}`);
    }
  }
  const logs = Object.values(state.servers).flatMap((s) => auditFiles(s.auditLog));
  if (logs.length)
    lines.push(
      `kept the audit logs (${logs.length} file${logs.length > 1 ? "s" : ""} in ${[...new Set(logs.map(dirname))].join(", ")}): remove them by hand when their record is no longer wanted`,
    );
  if (dir) {
    removeIfEmpty(join(dir, "audit"));
    if (removeIfEmpty(dir)) lines.push(`removed ${dir}`);
  }
  if (lines.length) process.stdout.write(`${lines.join("\n")}\n`);
}

/** Copy a file where it goes, private (0600), never over another; the source is removed later. */
function copyPrivate(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_EXCL);
  chmodSync(to, 0o600);
}

/**
 * `wrap --learn`: the learning step for a whole client config. Each wrapped entry names its policy,
 * its audit log and its name in the log; what its sessions were refused is proposed (learn.ts) and,
 * unless --dry-run, added to its policy, the previous one kept beside it as `<policy>.before-learn`.
 * An entry with no session yet is said so; a log that does not verify stops that entry, not the rest.
 */
async function learnAll(
  file: string,
  config: ClientConfig,
  only: readonly string[],
  dryRun: boolean,
): Promise<number> {
  const { learnPolicy } = await import("./policyLearn.js");
  let failed = 0;
  let seen = 0;
  for (const e of config.entries) {
    if (e.kind !== "stdio" || !isWrapped(e.entry) || (only.length && !only.includes(e.name))) continue;
    seen++;
    const args = e.entry.args ?? [];
    const end = args.includes("--") ? args.indexOf("--") : args.length;
    const at = (flag: string) => {
      const i = args.indexOf(flag);
      return i !== -1 && i + 1 < end ? (args[i + 1] as string) : undefined;
    };
    const policy = at("--policy");
    const audit = at("--audit-log");
    process.stdout.write(`${e.name}:\n`);
    if (!policy || !audit) {
      process.stdout.write("  its entry names no --policy or --audit-log: nothing to learn from\n");
      continue;
    }
    if (auditFiles(audit).length === 0) {
      process.stdout.write(
        `  no session in ${audit} yet: use the server from the client, then run wrap --learn again\n`,
      );
      continue;
    }
    const before = `${policy}.before-learn`;
    try {
      const request = { audit: [audit], policy, server: at("--server-name"), auditKey: at("--audit-key") };
      if (dryRun) await learnPolicy(request);
      else {
        copyFileSync(policy, before);
        chmodSync(before, 0o600);
        const { added } = await learnPolicy({ ...request, out: policy });
        if (added === 0) rmSync(before, { force: true });
      }
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      failed++;
      process.stdout.write(`  ${error.message}\n`);
    }
  }
  if (seen === 0) process.stdout.write(`no server of ${file} is wrapped by mcpguard: nothing to learn\n`);
  return failed ? 1 : 0;
}

/** The options of a wrapped entry that name wrap's files, and the subfolder each moves to. */
const RELOCATED_FLAGS: readonly [string, string[]][] = [
  ["--policy", []],
  ["--pins", []],
  ["--audit-log", ["audit"]],
];

/**
 * The copies a relocation makes, from where to where: each moved file, an audit log with its
 * rotated files (<log>.<stamp>-<pid>-<n>); refused where a file is there already.
 */
function relocationCopies(moves: ReadonlyMap<string, string>, dir: string): [string, string][] {
  const copies: [string, string][] = [];
  for (const [from, to] of moves) {
    const files = to.startsWith(`${join(dir, "audit")}/`) ? auditFiles(from) : existsSync(from) ? [from] : [];
    for (const f of files) copies.push([f, join(dirname(to), basename(f))]);
  }
  const taken = copies.find(([, to]) => existsSync(to));
  if (taken)
    throw new UsageError(
      `cannot move ${taken[0]} to ${taken[1]}: a file is there already (move it away first)`,
    );
  return copies;
}

/**
 * `wrap --relocate`: the entries an older wrap pointed at files beside the config (where the
 * server may write them) get them moved into wrap's own folder. Each file is copied there first,
 * then the entry rewritten (as wrap writes it), then the old file removed, so the config names
 * files that exist at every moment. Audit logs move with their rotated files.
 */
function relocate(
  arg: string,
  file: string,
  bytes: Buffer,
  mode: number,
  config: ClientConfig,
  dryRun: boolean,
): number {
  const stateFile = statePath(file);
  const state = readState(stateFile);
  if (!state)
    throw new UsageError(
      `${arg} has no readable wrap record (${basename(stateFile)}): --relocate moves only what mcpguard wrap placed`,
    );
  if (state.wrappedSha256 !== sha256(bytes))
    throw new UsageError(
      `${arg} changed since mcpguard wrap wrote it: --relocate rewrites only the file as wrap left it (unwrap it and wrap it again)`,
    );
  const dir = wrapStateDir(file);
  const home = canonical(dir);
  const moves = new Map<string, string>();
  const value = structuredClone(config.value);
  const servers = { ...state.servers };
  let pins = state.pins;
  const relocated: string[] = [];
  for (const e of config.entries) {
    if (e.kind !== "stdio" || !isWrapped(e.entry) || !Object.hasOwn(state.servers, e.name)) continue;
    const args = [...(e.entry.args ?? [])];
    const end = args.includes("--") ? args.indexOf("--") : args.length;
    let touched = false;
    for (const [flag, sub] of RELOCATED_FLAGS) {
      const i = args.indexOf(flag);
      const from = args[i + 1];
      if (i === -1 || i + 1 >= end || from === undefined || within(canonical(from), home)) continue;
      let to = moves.get(from);
      if (to === undefined) {
        to = join(dir, ...sub, basename(from));
        if (existsSync(to) || [...moves.values()].includes(to))
          throw new UsageError(`cannot move ${from} to ${to}: a file is there already (move it away first)`);
        if (existsSync(from) && !isPlainFile(from))
          throw new UsageError(`cannot move ${from}: not a regular file (move it by hand)`);
        moves.set(from, to);
      }
      if (flag === "--pins" && from === state.pins) pins = to;
      args[i + 1] = to;
      touched = true;
    }
    if (!touched) continue;
    replaceLaunch(value, shapeOf(config, e.name), e.name, e.entry.command, args);
    const at = (flag: string) => args[args.indexOf(flag) + 1] as string;
    servers[e.name] = { policy: at("--policy"), auditLog: at("--audit-log") };
    relocated.push(e.name);
  }
  if (relocated.length === 0) {
    process.stdout.write(`nothing to relocate in ${arg}: its wrapped entries' files lie in ${dir} already\n`);
    return 0;
  }
  const copies = relocationCopies(moves, dir);
  const lines = copies.map(([from, to]) => `${dryRun ? "would move" : "moved"} ${from} to ${to}`);
  if (dryRun) {
    process.stdout.write(`${[...lines, `(--dry-run: nothing moved or written)`].join("\n")}\n`);
    return 0;
  }
  makePrivateDir(join(dir, "audit"));
  for (const [from, to] of copies) copyPrivate(from, to);
  const text = formatClientConfig(value, config.format);
  const record: WrapState = { ...state, stateDir: dir, pins, servers, wrappedSha256: sha256(text) };
  writeAtomic(stateFile, `${JSON.stringify(record, null, 2)}\n`, 0o600);
  writeAtomic(file, text, mode);
  for (const [from] of copies) rmSync(from, { force: true });
  // The folders an older wrap made beside the config, once empty.
  removeIfEmpty(join(dirname(file), "mcpguard", "audit"));
  removeIfEmpty(join(dirname(file), "mcpguard"));
  process.stdout.write(
    `${[...lines, `relocated ${relocated.length} server(s) of ${arg} (${relocated.join(", ")}): wrap's files are in ${dir}`].join("\n")}\n`,
  );
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  return wrap(argv);
}

export async function unwrapMain(argv: string[]): Promise<number> {
  return unwrap(argv);
}
