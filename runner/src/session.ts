/**
 * An MCP session with a victim server inside a trial world, the way a user's client would open
 * it: the official SDK client over stdio, either straight to the server (`direct`) or through the
 * real `mcpguard run` CLI under a defense config.
 *
 * Every process of the session runs in one trial containment (a cgroup where possible), so closing
 * the session kills whatever the server started, in whatever session or process group it hid.
 */

import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Containment,
  createContainment,
  defaultLimits,
  findCgroup2,
  removeCgroupTree,
  v1LimitParents,
} from "@mcpguard/proxy";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Interpreters } from "./interpreters.js";
import { repoPath } from "./paths.js";
import { isPeerConfig, peerSessionArgv } from "./peers.js";
import { launchArgv, type ServerEntry } from "./registry.js";
import type { World } from "./world/world.js";

export const MCPGUARD_BIN = repoPath("packages", "proxy", "bin", "mcpguard.js");
/** The latency benchmark's `pipe` path: a bare Node.js relay, the floor of any Node.js proxy. */
export const PIPE = "pipe";
const PIPE_RELAY = repoPath("runner", "probe", "pipeRelay.cjs");
/**
 * The `pipe-contained` path: `pipe` plus the containment `mcpguard run` gives its server (its own
 * cgroup and limits, joined before its first instruction, and a reaper), with no code of the
 * proxy's: the floor of any Node.js proxy that contains its server. Root and cgroup2 only.
 */
export const PIPE_CONTAINED = "pipe-contained";
const PIPE_CONTAINED_RELAY = repoPath("runner", "probe", "pipeContained.cjs");
/** The reaper the `pipe-contained` path spawns (bpf/reaper.c). */
export const REAPER = repoPath("bpf", ".output", "mcpguard-reaper");
/** The `pipe-c` path: a bare relay in C (`bpf/byte-relay.c`), the floor of any stdio proxy. */
export const PIPE_C = "pipe-c";
export const BYTE_RELAY = repoPath("bpf", ".output", "byte-relay");
const STDERR_LIMIT = 64 * 1024;

/** The policy, AgentBound manifest and overrides the proxy is given for a server. */
export interface PolicyFiles {
  policy: string;
  manifest: string;
  overrides: string;
  /** The client config's pin file (`--pins`), for the cases that look at listings. */
  pins?: string;
}

export function policyFiles(serverId: string, policiesDir?: string): PolicyFiles {
  return {
    policy: policiesDir
      ? join(policiesDir, `${serverId}.json`)
      : repoPath("policies", "servers", `${serverId}.json`),
    manifest: repoPath("policies", "agentbound", `${serverId}.json`),
    overrides: repoPath("policies", "overrides"),
  };
}

export interface SessionOptions {
  world: World;
  server: ServerEntry;
  /** Default: {@link policyFiles} of the server's id. */
  policies?: PolicyFiles;
  interpreters: Interpreters;
  /**
   * A defense config for `mcpguard run`, "direct" for no proxy at all, "pipe" or "pipe-c" for a bare
   * relay, "pipe-contained" for one that contains the server.
   */
  config: string;
  /** Where the proxy writes its audit log (never inside the world). */
  auditLog?: string;
  /** Time allowed for start-up and `initialize`. */
  startTimeoutMs?: number;
  /** The working directory of the proxy and the server (default: the world's workspace). */
  cwd?: string;
  /** The server's behaviour (`--variant`), for servers that have several. */
  variant?: string;
  /** What the client declares it can do (sampling, elicitation), and its handlers, set before `initialize`. */
  client?: { capabilities: ClientCapabilities; prepare(client: Client): void };
}

export interface Session {
  readonly client: Client;
  readonly containment: Containment["kind"];
  /** What the proxy and the server wrote to stderr (first 64 KiB). */
  stderr(): string;
  /**
   * CPU time used so far, in µs: by the process the client spawned, every thread of it (the proxy
   * or relay; the server itself for `direct`), and by every process of the session (that one, the
   * server, and what either started: its cgroup's `cpu.stat`, undefined without a cgroup).
   */
  cpuMicros(): { process: number | undefined; session: number | undefined };
  /** End the session and kill every process it started. */
  close(): Promise<void>;
}

let sequence = 0;
const TRIAL_CGROUP = "mcpguard-trial-";

/** The world's environment, plus what a real server's entry sets (a client config's `env`). */
export function serverEnvironment(server: ServerEntry, world: World): Record<string, string> {
  return server.env ? { ...world.env, ...world.expand(server.env) } : world.env;
}

/** What the client spawns for a path: the server itself, a bare relay, or `mcpguard run` under a config. */
function sessionArgv(
  config: string,
  serverArgv: string[],
  files: PolicyFiles,
  opts: { node: string; auditLog?: string; serverId: string },
): string[] {
  switch (config) {
    case "direct":
      return serverArgv;
    case PIPE:
      return [opts.node, PIPE_RELAY, ...serverArgv];
    case PIPE_CONTAINED:
      return [opts.node, PIPE_CONTAINED_RELAY, ...serverArgv];
    case PIPE_C:
      return [BYTE_RELAY, ...serverArgv];
    default:
      return [
        opts.node,
        MCPGUARD_BIN,
        "run",
        "--config",
        config,
        "--server-name",
        opts.serverId,
        "--policy",
        files.policy,
        "--manifest",
        files.manifest,
        "--overrides",
        files.overrides,
        ...(files.pins ? ["--pins", files.pins] : []),
        ...(opts.auditLog ? ["--audit-log", opts.auditLog] : []),
        "--",
        ...serverArgv,
      ];
  }
}

export async function openSession(options: SessionOptions): Promise<Session> {
  const { world, server, interpreters } = options;
  const serverArgv = launchArgv(server, interpreters, world, options.variant);
  const files = options.policies ?? policyFiles(server.id);
  // A peer config wraps the server in another sandbox, behind `mcpguard run --config C0` (peers.ts).
  const peer = isPeerConfig(options.config)
    ? await peerSessionArgv({
        config: options.config,
        serverArgv,
        serverId: server.id,
        cwd: options.cwd ?? world.workspace,
        env: serverEnvironment(server, world),
        policy: files.policy,
        overrides: files.overrides,
        node: interpreters.node,
        auditLog: options.auditLog,
      })
    : undefined;
  const argv =
    peer?.argv ??
    sessionArgv(options.config, serverArgv, files, {
      node: interpreters.node,
      auditLog: options.auditLog,
      serverId: server.id,
    });
  // With limits, the trial's cgroup has cgroup-v1 cgroups too where the host keeps pids and memory
  // there: the proxy's server cgroups nest in them and go with the trial, whatever was killed first.
  // A random part: a cgroup a killed run left behind (its pid reused since) never takes the name.
  const containment = createContainment({
    name: `${TRIAL_CGROUP}${process.pid}-${++sequence}-${randomBytes(4).toString("hex")}`,
    limits: defaultLimits(),
  });
  const [command, ...args] = containment.wrap(argv, { newSession: true });
  const transport = new StdioClientTransport({
    command: command as string,
    args,
    env: serverEnvironment(server, world),
    cwd: options.cwd ?? world.workspace,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk.toString("utf8").slice(0, STDERR_LIMIT - stderr.length);
  });
  const client = new Client(
    { name: "mcpguard-bench", version: "1.0.0" },
    options.client ? { capabilities: options.client.capabilities } : undefined,
  );
  options.client?.prepare(client);

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    const pid = transport.pid;
    await client.close().catch(() => {});
    if (pid) await containment.killAll(pid);
    containment.dispose();
    // A process still on its way out (a busy machine) keeps the cgroup populated a little longer.
    const path = containment.cgroupPath;
    for (let i = 0; path && existsSync(path) && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      containment.dispose();
    }
    peer?.cleanup();
  };

  try {
    await client.connect(transport, { timeout: options.startTimeoutMs ?? 15_000 });
  } catch (error) {
    await close();
    const detail = stderr.trim() ? `\n${stderr.trim()}` : "";
    throw new Error(`cannot start ${server.id} (${options.config}): ${(error as Error).message}${detail}`);
  }
  return {
    client,
    containment: containment.kind,
    stderr: () => stderr,
    cpuMicros: () => ({
      process: transport.pid ? processCpuMicros(transport.pid) : undefined,
      session: cgroupCpuMicros(containment.cgroupPath),
    }),
    close,
  };
}

/**
 * CPU time of a process, in µs: the sum over its threads of the scheduler's run time
 * (`/proc/<pid>/task/<tid>/schedstat`, in ns, where `stat` counts in clock ticks of 10 ms). A thread
 * that has exited is no longer counted; undefined when the process is gone.
 */
export function processCpuMicros(pid: number): number | undefined {
  let total = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const ns = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "latin1").split(" ")[0]);
      if (!Number.isFinite(ns)) return undefined;
      total += ns;
    }
  } catch {
    return undefined;
  }
  return total / 1000;
}

/** `usage_usec` of a cgroup2 directory's `cpu.stat` (its processes and its descendants'), or undefined. */
export function cgroupCpuMicros(cgroup: string | undefined): number | undefined {
  if (cgroup === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(join(cgroup, "cpu.stat"), "latin1");
  } catch {
    return undefined;
  }
  const usage = /^usage_usec (\d+)$/m.exec(stat)?.[1];
  return usage === undefined ? undefined : Number(usage);
}

/**
 * Remove the empty trial cgroups of runs that are gone (a run killed before it closed its trials):
 * `mcpguard-trial-<pid>-...` whose runner no longer runs. A populated one is never touched. Returns
 * how many were removed.
 */
export function sweepTrialCgroups(): number {
  const v2 = findCgroup2();
  const parents = [...(v2 ? [join(v2.mount, v2.self)] : []), ...v1LimitParents()];
  let removed = 0;
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent).filter((n) => n.startsWith(TRIAL_CGROUP));
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(name.slice(TRIAL_CGROUP.length).split("-")[0]);
      if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
      if (removeCgroupTree(join(parent, name))) removed++;
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
