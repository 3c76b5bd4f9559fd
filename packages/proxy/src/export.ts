/**
 * A policy as other sandboxes' profiles (`mcpguard policy export`, and the benchmark's peer
 * configs): the policy is resolved for a working directory and environment as `mcpguard run`
 * resolves it, its tools' needs are joined as the kernel layer joins them, and the server's
 * command adds what its interpreter needs, so an exported profile grants what C-full grants.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import type { Exported, ExportFormat, Grant } from "@mcpguard/kernel/export";
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
  /** The server's argv (may be empty). */
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

/** The grant of a server under its policy, as the kernel layer would compute it. */
export async function policyGrant(options: PolicyGrantOptions): Promise<Grant> {
  const policyLib = await import("@mcpguard/policy");
  const { buildGrant } = await import("@mcpguard/kernel/export");
  const { env, cwd, argv } = options;
  const vars = { cwd, home: env.HOME || undefined, tmp: env.TMPDIR || undefined };
  let server: string;
  let needs = {
    read: [] as string[],
    write: [] as string[],
    exec: [] as string[],
    network: [] as string[],
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
    argv,
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

/**
 * What srt reads inside its own sandbox once `/` is denied: its `apply-seccomp` helper, bash (it
 * runs the command with bash) and socat (its proxy bridges), by the names it uses and their targets.
 */
export function srtRuntimeFiles(packageDir: string, env: NodeJS.ProcessEnv): string[] {
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  const helper = join(packageDir, "vendor", "seccomp", arch);
  const files = [existsSync(helper) ? realpathSync(helper) : helper];
  for (const tool of ["bash", "socat"]) {
    const found = which(tool, env.PATH);
    if (found) files.push(found, realpathSync(found));
  }
  return [...new Set(files)];
}

/** srt's package directory from the `srt` command on PATH (a link into the package's dist/cli.js). */
export function srtPackageFromPath(env: NodeJS.ProcessEnv): string | undefined {
  const bin = which("srt", env.PATH);
  if (!bin) return undefined;
  const cli = realpathSync(bin);
  const dir = dirname(dirname(cli));
  return existsSync(join(dir, "vendor", "seccomp")) ? dir : undefined;
}

export async function exportPolicy(
  options: PolicyExportOptions,
): Promise<{ grant: Grant; exported: Exported }> {
  const { exportGrant } = await import("@mcpguard/kernel/export");
  const grant = await policyGrant(options);
  let srtRuntime = options.srtRuntime;
  if (!srtRuntime && options.format === "srt") {
    const pkg = srtPackageFromPath(options.env);
    if (pkg) srtRuntime = srtRuntimeFiles(pkg, options.env);
  }
  return { grant, exported: exportGrant(options.format, grant, { srt: { runtime: srtRuntime } }) };
}
