/**
 * A policy as other sandboxes' profiles (`mcpguard policy export`, and the benchmark's peer
 * configs): the policy is resolved for a working directory and environment as `mcpguard run`
 * resolves it, its tools' needs are joined as the kernel layer joins them, and the server's
 * command is resolved as the kernel layer resolves it (a launcher such as npx or uvx to the
 * interpreter and script it would run) and adds what that interpreter needs, so an exported
 * profile grants what C-full grants, for the command C-full runs.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import type { Exported, ExportFormat, Grant } from "@mcpguard/kernel/export";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { defaultLimits, resolveLimits } from "./limits.js";

export {
  bwrapArgs,
  bwrapArgv,
  EXPORT_FORMATS,
  type Exported,
  type ExportFormat,
  firejailArgv,
  type Grant,
  srtArgv,
} from "@mcpguard/kernel/export";

export interface PolicyGrantOptions {
  /** The policy file; without one the server gets only what its interpreter needs. */
  policy?: string;
  /** Operator overrides: a file, or a directory holding `<server>.json`. */
  overrides?: string;
  cwd: string;
  /** The server's environment at spawn, before the policy filters it. */
  env: NodeJS.ProcessEnv;
  /** The server's argv as given (may be empty); a launcher in it is resolved as `mcpguard run` does. */
  argv: readonly string[];
  /** `--pids-max` / `--memory-max`, as `mcpguard run` takes them. */
  limits?: { pidsMax?: string; memoryMax?: string };
}

export interface PolicyExportOptions extends PolicyGrantOptions {
  format: ExportFormat;
  /** What srt itself reads inside its sandbox (see {@link srtRuntimeFiles}); else looked up on PATH. */
  srtRuntime?: string[];
}

function limitsFrom(
  flags: PolicyGrantOptions["limits"],
  policy: { pids?: number; memoryBytes?: number } | undefined,
): Grant["limits"] {
  const limits = resolveLimits(flags ?? {}, policy);
  const defaults = defaultLimits();
  const source = (flag: string | undefined, fromPolicy: number | undefined, name: string) =>
    flag !== undefined
      ? `${name} from the command line`
      : fromPolicy !== undefined
        ? `${name} from the policy`
        : `${name} by default`;
  return {
    ...limits,
    from: [
      source(flags?.pidsMax, policy?.pids, `pids ${limits.pids}`),
      source(flags?.memoryMax, policy?.memoryBytes, `memory ${limits.memoryBytes}`),
      `(defaults: ${defaults.pids} tasks, ${defaults.memoryBytes} bytes)`,
    ].join(", "),
  };
}

/**
 * What the kernel layer runs for `argv` (launchers.ts, resolveLaunch, as `mcpguard run` calls it):
 * npx, npm exec, uvx, uv tool run and a version manager's shim resolved, with the launcher run here
 * (npx and uv from their caches first); a launcher it does not resolve is refused, as run refuses it.
 */
async function resolveCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ argv: readonly string[]; launcher?: { command: readonly string[]; via: string } }> {
  if (argv.length === 0) return { argv };
  const kernel = await import("@mcpguard/kernel");
  const { ExportError } = await import("@mcpguard/kernel/export");
  try {
    const launch = await kernel.resolveLaunch(argv, { env, cwd });
    return { argv: launch.argv, ...(launch.via ? { launcher: { command: argv, via: launch.via } } : {}) };
  } catch (error) {
    if (error instanceof kernel.LaunchError) throw new ExportError(error.message);
    throw error;
  }
}

/** The grant of a server under its policy, as the kernel layer would compute it. */
export async function policyGrant(options: PolicyGrantOptions): Promise<Grant> {
  const policyLib = await import("@mcpguard/policy");
  const { buildGrant } = await import("@mcpguard/kernel/export");
  const { env, cwd, argv } = options;
  const resolved = await resolveCommand(argv, env, cwd);
  const vars = { cwd, home: env.HOME || undefined, tmp: env.TMPDIR || undefined };
  let server: string;
  let needs = {
    read: [] as string[],
    write: [] as string[],
    exec: [] as string[],
    network: [] as string[],
    sockets: [] as string[],
    shell: false,
  };
  let keep = new Set<string>();
  let limits: { pids?: number; memoryBytes?: number } | undefined;
  if (options.policy) {
    const policy = await policyLib.loadPolicy(options.policy);
    const resolved = policyLib.resolvePolicy(
      policy,
      await policyLib.loadOverrides(options.overrides, policy.server),
      vars,
    );
    server = policy.server;
    needs = policyLib.policyNeeds(resolved);
    keep = resolved.keepEnv;
    limits = policy.limits;
  } else {
    const script = argv.slice(1).find((a) => !a.startsWith("-")) ?? argv[0] ?? "server";
    server = basename(script).replace(/\.[^.]+$/, "");
  }
  const filtered = policyLib.filterEnvironment(env, keep);
  const grant = buildGrant({
    server,
    needs,
    argv: resolved.argv,
    launcher: resolved.launcher,
    env,
    cwd,
    keptEnv: [...keep],
    withheldEnv: filtered.withheld,
    limits: limitsFrom(options.limits, limits),
  });
  if (!options.policy) grant.notes.unshift("no policy: the server gets only what its interpreter needs");
  return grant;
}

function which(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir && isAbsolute(dir) && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

const SRT_PACKAGE = "@anthropic-ai/sandbox-runtime";
const srtArch = () => (process.arch === "arm64" ? "arm64" : "x64");

/**
 * What srt reads inside its own sandbox once `/` is denied: its `apply-seccomp` helper, bash (it
 * runs the command with bash) and socat (its proxy bridges), by the names it uses and their targets.
 * srt's cli.js and the rest of its package run outside the sandbox and are not granted.
 */
export function srtRuntimeFiles(packageDir: string, env: NodeJS.ProcessEnv): string[] {
  const helper = join(packageDir, "vendor", "seccomp", srtArch());
  const files = [existsSync(helper) ? realpathSync(helper) : helper];
  for (const tool of ["bash", "socat"]) {
    const found = which(tool, env.PATH);
    if (found) files.push(found, realpathSync(found));
  }
  return [...new Set(files)];
}

/** The name a package.json gives its package, if any. */
const PackageName = z.looseObject({ name: z.optional(z.string()) });

/**
 * The sandbox-runtime package a file belongs to: the nearest folder above it with a named
 * package.json (one without a name, such as dist/package.json's `{"type": "module"}`, is passed
 * over), if that name is sandbox-runtime's.
 */
function srtPackageOf(file: string): string | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    let name: string | undefined;
    try {
      name = PackageName.parse(JSON.parse(readFileSync(manifest, "utf8"))).name;
    } catch {
      // Not JSON, or a name that is not a string: not sandbox-runtime's package.
      return undefined;
    }
    if (name === undefined) continue;
    return name === SRT_PACKAGE ? dir : undefined;
  }
  return undefined;
}

/**
 * The script a package manager's shell shim runs: pnpm's names it (`# cmd-shim-target=<path>`);
 * pnpm's and npm's cmd-shim both run `node "$basedir/<path>"`, where $basedir is the shim's folder
 * (pnpm's after following links to the shim, npm's as the shim was called).
 */
function shimTarget(shim: string, called: string): string | undefined {
  let text: string;
  try {
    if (statSync(shim).size > 65_536) return undefined;
    text = readFileSync(shim, "utf8");
  } catch {
    // Unreadable: not a shim.
    return undefined;
  }
  if (!text.startsWith("#!")) return undefined;
  const named = /^# cmd-shim-target=(\/.+)$/m.exec(text)?.[1];
  if (named && existsSync(named)) return named;
  for (const m of text.matchAll(/"\$basedir\/([^"$]+\.[cm]?js)"/g)) {
    for (const base of [dirname(shim), dirname(called)]) {
      const candidate = join(base, m[1] as string);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

/** srt as found on PATH: the command, the cli.js it runs and its package; or why it cannot be used. */
export interface SrtInstall {
  bin: string;
  cli: string;
  packageDir: string;
}

/**
 * srt's files from the `srt` command on PATH: npm links it to the package's dist/cli.js; pnpm
 * (and npm's cmd-shim) write a shell script that runs node on it, read here for its target. A
 * string says why srt's files cannot be known (not on PATH, a wrapper of another kind, no helper).
 */
export function srtFromPath(env: NodeJS.ProcessEnv): SrtInstall | string {
  const bin = which("srt", env.PATH);
  if (!bin) return "srt is not on PATH";
  const real = realpathSync(bin);
  const cli = /\.[cm]?js$/.test(real) ? real : shimTarget(real, bin);
  if (!cli) return `${bin} is neither a link to ${SRT_PACKAGE}'s cli.js nor a pnpm or npm shim that names it`;
  const cliReal = realpathSync(cli);
  const packageDir = srtPackageOf(cliReal);
  if (!packageDir) return `${bin} runs ${cliReal}, which is not in a ${SRT_PACKAGE} package`;
  const helper = join(packageDir, "vendor", "seccomp", srtArch(), "apply-seccomp");
  if (!existsSync(helper)) return `${packageDir} has no seccomp helper for this machine (${helper})`;
  if (!which("bash", env.PATH)) return "bash, which srt runs the command with, is not on PATH";
  return { bin, cli: cliReal, packageDir };
}

export async function exportPolicy(
  options: PolicyExportOptions,
): Promise<{ grant: Grant; exported: Exported }> {
  const { exportGrant, ExportError } = await import("@mcpguard/kernel/export");
  let srtRuntime = options.srtRuntime;
  let found: string | undefined;
  if (!srtRuntime && options.format === "srt") {
    // Without srt's own files inside, srt cannot start the command (bash is hidden by denyRead /).
    const srt = srtFromPath(options.env);
    if (typeof srt === "string")
      throw new ExportError(
        `cannot write an srt profile that would run: ${srt}, so srt's own files (its seccomp helper, bash, socat) cannot be granted; put srt (${SRT_PACKAGE}) on PATH`,
      );
    srtRuntime = srtRuntimeFiles(srt.packageDir, options.env);
    found = `srt on PATH: ${srt.bin} runs ${srt.cli}`;
  }
  const grant = await policyGrant(options);
  return { grant, exported: exportGrant(options.format, grant, { srt: { runtime: srtRuntime, found } }) };
}
