/**
 * Peer configs: the victim server wrapped by a sandbox a security engineer could use today,
 * `P-srt` (sandbox-runtime), `P-bwrap` (bubblewrap) and `P-firejail`, with a profile exported from
 * the same MCPGuard policy the C-configs use for that server (`mcpguard policy export`), never tuned
 * per case. The client still reaches the server through `mcpguard run --config C0`, so containment,
 * the limits of the server's cgroup (the policy's, as C-full gets them), latency and the audit of
 * start and exit are the same as for every other config; the peer sits between C0 and the server.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { repoPath } from "./paths.js";
import { defaultWorldBase } from "./world/world.js";

export const PEER_CONFIGS = ["P-srt", "P-bwrap", "P-firejail"] as const;
export type PeerConfig = (typeof PEER_CONFIGS)[number];
type Tool = "srt" | "bwrap" | "firejail";

export const isPeerConfig = (name: string): name is PeerConfig =>
  (PEER_CONFIGS as readonly string[]).includes(name);

const toolOf = (config: PeerConfig) => config.slice(2) as Tool;

function which(name: string, path = process.env.PATH): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export interface PeerInstall {
  /** How to start the peer's own program (srt: node and its cli.js). */
  command: string[];
  version: string;
  /** srt's package directory (its apply-seccomp helper lives there). */
  packageDir?: string;
}

/** The first line of what a failed check wrote, for the "not run" reason. */
function firstLine(r: ReturnType<typeof spawnSync>): string {
  const text = `${r.stderr ?? ""}${r.stdout ?? ""}`.trim().split("\n")[0];
  return text || (r.error ? r.error.message : `exit status ${r.status ?? r.signal}`);
}

function trial(command: string[], env?: NodeJS.ProcessEnv): string | null {
  const r = spawnSync(command[0] as string, command.slice(1), {
    encoding: "utf8",
    timeout: 20_000,
    env: env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return r.status === 0 ? null : firstLine(r);
}

function checkBwrap(): PeerInstall | string {
  const bwrap = which("bwrap");
  if (!bwrap) return "bwrap is not installed (apt-get install bubblewrap)";
  const failed = trial([
    bwrap,
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--ro-bind",
    "/",
    "/",
    "true",
  ]);
  if (failed) return `bwrap cannot start a sandbox here: ${failed}`;
  const version = spawnSync(bwrap, ["--version"], { encoding: "utf8" }).stdout.trim();
  return { command: [bwrap], version };
}

function checkFirejail(): PeerInstall | string {
  const firejail = which("firejail");
  if (!firejail) return "firejail is not installed (apt-get install firejail)";
  const failed = trial([firejail, "--noprofile", "--quiet", "/bin/true"]);
  if (failed) return `firejail cannot start a sandbox here: ${failed}`;
  const version =
    spawnSync(firejail, ["--version"], { encoding: "utf8" }).stdout.split("\n")[0]?.trim() ?? "";
  return { command: [firejail], version };
}

function checkSrt(): PeerInstall | string {
  let packageDir: string;
  try {
    packageDir = dirname(dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime")));
  } catch {
    return "@anthropic-ai/sandbox-runtime is not installed (pnpm install)";
  }
  for (const [tool, pkg] of [
    ["bwrap", "bubblewrap"],
    ["socat", "socat"],
    ["rg", "ripgrep"],
  ]) {
    if (!which(tool as string)) return `srt needs ${tool}, which is not installed (apt-get install ${pkg})`;
  }
  const command = [process.execPath, join(packageDir, "dist", "cli.js")];
  const dir = mkdtempSync(join(tmpdir(), "mcpguard-srt-check-"));
  try {
    const settings = join(dir, "settings.json");
    writeFileSync(
      settings,
      JSON.stringify({
        network: { allowedDomains: [], deniedDomains: [] },
        filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
      }),
    );
    const failed = trial([...command, "--settings", settings, "-c", "true"], { ...process.env, TMPDIR: dir });
    if (failed) return `srt cannot start a sandbox here: ${failed}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const version = spawnSync(process.execPath, [command[1] as string, "--version"], {
    encoding: "utf8",
  }).stdout.trim();
  return { command, version, packageDir };
}

const installs = new Map<PeerConfig, PeerInstall | string>();

/** The peer's program, or why it cannot run here: checked once per process by starting a sandbox. */
export function peerInstall(config: PeerConfig): PeerInstall | string {
  let found = installs.get(config);
  if (found === undefined) {
    const tool = toolOf(config);
    found = tool === "bwrap" ? checkBwrap() : tool === "firejail" ? checkFirejail() : checkSrt();
    installs.set(config, found);
  }
  return found;
}

/**
 * A run of attacks with a peer always has C0: the viable attacks, over which V-APR is counted, are
 * the ones that fire under C0. (A suite of benign cases needs no C0.)
 */
export function withViableBaseline(configs: string[], hasAttacks: boolean): string[] {
  if (!hasAttacks || !configs.some(isPeerConfig) || configs.includes("C0")) return configs;
  return ["C0", ...configs];
}

/** The peer configs of a run that cannot run here, each with the reason ("not run: ..."). */
export function peersNotRun(configs: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const config of configs) {
    if (!isPeerConfig(config)) continue;
    const install = peerInstall(config);
    if (typeof install === "string") out.set(config, `not run: ${install}`);
  }
  return out;
}

/**
 * srt replaces /dev with its own, so worlds under /dev/shm (the default) would be invisible to the
 * server: a run with P-srt puts every config's worlds under $TMPDIR instead, unless
 * MCPGUARD_WORLD_DIR says where. Undefined: the default.
 */
export function peerWorldBase(configs: readonly string[]): string | undefined {
  if (!configs.includes("P-srt") || process.env.MCPGUARD_WORLD_DIR) return undefined;
  const base = defaultWorldBase();
  return base === "/dev" || base.startsWith("/dev/") ? join(tmpdir(), "mcpguard") : undefined;
}

/** What the manifest records of the peers of a run: their versions, or why they did not run. */
export function peerManifest(configs: readonly string[]): Record<string, string> | null {
  const peers = configs.filter(isPeerConfig);
  if (peers.length === 0) return null;
  return Object.fromEntries(
    peers.map((p) => {
      const install = peerInstall(p);
      return [p, typeof install === "string" ? `not run: ${install}` : install.version];
    }),
  );
}

export interface PeerSessionOptions {
  config: PeerConfig;
  serverArgv: string[];
  serverId: string;
  cwd: string;
  env: Record<string, string>;
  policy: string;
  overrides: string;
  node: string;
  auditLog?: string;
}

const MCPGUARD_BIN = repoPath("packages", "proxy", "bin", "mcpguard.js");

/**
 * The argv of a peer session: `mcpguard run --config C0` (with the policy's limits) in front of the
 * peer, which wraps the server with the profile exported from the server's policy. The profile
 * files live outside the world and go with `cleanup`.
 */
export async function peerSessionArgv(
  o: PeerSessionOptions,
): Promise<{ argv: string[]; cleanup: () => void }> {
  const install = peerInstall(o.config);
  if (typeof install === "string") throw new Error(`${o.config}: not run: ${install}`);
  const { bwrapArgs, bwrapArgv, exportPolicy, firejailArgv, srtArgv, srtRuntimeFiles } = await import(
    "@mcpguard/proxy/export"
  );
  const tool = toolOf(o.config);
  const dir = mkdtempSync(join(tmpdir(), "mcpguard-peer-"));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    const { grant, exported } = await exportPolicy({
      format: tool,
      policy: o.policy,
      overrides: o.overrides,
      cwd: o.cwd,
      env: o.env,
      argv: o.serverArgv,
      srtRuntime: install.packageDir ? srtRuntimeFiles(install.packageDir, o.env) : undefined,
    });
    // What runs under the profile: the server's command as the kernel layer resolves it (a launcher
    // such as npx resolved to the script it runs), its program an absolute path.
    const command = grant.command;
    let wrapper: string[];
    if (tool === "bwrap") {
      wrapper = bwrapArgv(install.command[0] as string, bwrapArgs(grant), command);
    } else if (tool === "firejail") {
      const profile = join(dir, `${o.serverId}.profile`);
      writeFileSync(profile, exported.text);
      wrapper = firejailArgv(install.command[0] as string, profile, command);
    } else {
      const settings = join(dir, "srt-settings.json");
      writeFileSync(settings, exported.text);
      // srt's own sockets go to its TMPDIR, not the world's; the command sets the world's back.
      const env = which("env") ?? "/usr/bin/env";
      wrapper = [env, `TMPDIR=${dir}`, ...srtArgv(install.command, settings, grant, command)];
    }
    const argv = [
      o.node,
      MCPGUARD_BIN,
      "run",
      "--config",
      "C0",
      "--server-name",
      o.serverId,
      "--pids-max",
      String(grant.limits.pids),
      "--memory-max",
      String(grant.limits.memoryBytes),
      ...(o.auditLog ? ["--audit-log", o.auditLog] : []),
      "--",
      ...wrapper,
    ];
    return { argv, cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}
