/**
 * The containment soak: does the server end when the proxy ends, however it ends, and does the
 * kernel layer hold until then?
 *
 *   proxy kill   `mcpguard run` is SIGKILLed mid-call (a tools/call in flight) while a daemon the
 *                server started (its own session, out of the server's process group) sends a UDP
 *                datagram to a loopback listener every millisecond. Measured: processes of the
 *                server left, its cgroups left (v2 and v1), datagrams that reach the listener after
 *                the kill, and the time from the kill until everything is gone. Under C-full the
 *                policy allows no network at all, so every send fails with EPERM before the kill,
 *                and any datagram after it is a detached program leaking.
 *   loader kill  under C-full, the BPF loader is SIGKILLed instead: datagrams after the kill, the
 *                time until the proxy has stopped the server, and what is left.
 *
 * Run it with `mcpguard soak containment` (runner/src/soak/cli.ts).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { repoPath } from "../paths.js";

const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");

export const ContainmentSoakOptions = z.strictObject({
  iterations: z.number().int().min(1).default(100),
  configs: z
    .array(z.enum(["C0", "C-full"]))
    .min(1)
    .default(["C0", "C-full"]),
  /** Also kill the BPF loader (C-full) as many times. */
  loaderKills: z.boolean().default(true),
  /** How long to wait, after a kill, for everything of the server to be gone. */
  settleMs: z.number().int().positive().default(5000),
  /** How long to go on listening for datagrams once everything is gone (or settleMs passed). */
  listenMs: z.number().int().nonnegative().default(200),
});
export type ContainmentSoakOptions = z.input<typeof ContainmentSoakOptions>;

const Timing = z.strictObject({ p50: z.number(), p95: z.number(), max: z.number() });
const KillResult = z.strictObject({
  runs: z.number().int(),
  /** Runs after which a process of the server, or a cgroup of it, was still there at settleMs. */
  runsWithProcessesLeft: z.number().int(),
  processesLeft: z.number().int(),
  runsWithCgroupsLeft: z.number().int(),
  cgroupsLeft: z.number().int(),
  /** Datagrams the listener received after the kill, in total and the runs with any. */
  datagramsAfterKill: z.number().int(),
  runsWithDatagramsAfterKill: z.number().int(),
  /** Datagrams received before the kill (C0 sends freely; under C-full every send is refused). */
  datagramsBeforeKill: z.number().int(),
  /** From the kill until every process and cgroup of the server is gone (runs where that happened). */
  cleanupMs: Timing,
  /** Loader kills only: from the kill until the proxy exited, having stopped the server. */
  proxyExitMs: Timing.optional(),
});
export const ContainmentSoakReport = z.strictObject({
  iterations: z.number().int(),
  proxyKill: z.record(z.string(), KillResult),
  loaderKill: KillResult.nullable(),
  wallSeconds: z.number(),
});
export type ContainmentSoakReport = z.infer<typeof ContainmentSoakReport>;
type KillResult = z.infer<typeof KillResult>;

/**
 * A line-delimited MCP server: `daemon {port}` starts the UDP daemon and answers once the daemon
 * has made its first send (refused or not); `sleep` never answers.
 */
const SERVER = `
const { spawn } = require("node:child_process");
const DAEMON = 'const s = require("node:dgram").createSocket("udp4"); s.on("error", () => {});' +
  ' let first = true; setInterval(() => s.send("x", Number(process.argv[1]), "127.0.0.1", () => {' +
  ' if (first) { first = false; process.stdout.write("ready\\\\n"); } }), 1);';
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  for (let nl = buf.indexOf("\\n"); nl !== -1; nl = buf.indexOf("\\n")) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.method === "initialize")
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: "soak", version: "1" } } });
    if (m.method === "tools/call" && m.params.name === "daemon") {
      const d = spawn(process.execPath, ["-e", DAEMON, String(m.params.arguments.port)],
        { detached: true, stdio: ["ignore", "pipe", "ignore"] });
      d.unref();
      d.stdout.once("data", () => {
        d.stdout.destroy();
        send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: String(d.pid) }] } });
      });
    }
  }
});
process.stdin.on("end", () => process.exit(0));
`;

const POLICY = {
  version: 1,
  server: "soak",
  tools: { daemon: { args: { port: "scalar" } }, sleep: { args: { ms: "scalar" } } },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolve when `promise` does or after ms, leaving no timer behind. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function timing(values: number[]): z.infer<typeof Timing> {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? 0 };
}

function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** The cgroup directories (v2, and v1 pids/memory of the server's limits) a process is in. */
function cgroupsOf(pid: number): string[] {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  const mountOf = (fstype: string, controller?: string) =>
    mounts
      .find((l) => {
        const [type, , options] = l.split(" - ")[1]?.split(" ") ?? [];
        return type === fstype && (!controller || options?.split(",").includes(controller));
      })
      ?.split(" ")[4];
  return readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .trim()
    .split("\n")
    .flatMap((line) => {
      const [id, names = "", path = ""] = line.split(":");
      if (id === "0") return [join(mountOf("cgroup2") ?? "/", path)];
      const controller = ["pids", "memory"].find((c) => names.split(",").includes(c));
      const mount = controller ? mountOf("cgroup", controller) : undefined;
      return mount && path.includes("mcpguard-") ? [join(mount, path)] : [];
    });
}

/** `mcpguard run` driven line by line. */
class ProxyRun {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<void>;
  #lines: string[] = [];
  #buffer = "";

  constructor(config: string, policy: string, server: string, cwd: string) {
    const layers = config === "C0" ? [] : ["--policy", policy];
    this.child = spawn(
      process.execPath,
      [MCPGUARD, "run", "--config", config, ...layers, "--", process.execPath, server],
      {
        cwd,
        stdio: "pipe",
      },
    );
    this.child.stdin.on("error", () => {});
    this.child.stderr.resume();
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString();
      for (let nl = this.#buffer.indexOf("\n"); nl !== -1; nl = this.#buffer.indexOf("\n")) {
        this.#lines.push(this.#buffer.slice(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
      }
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  send(message: object): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async next(ms = 15_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    while (this.#lines.length === 0) {
      if (Date.now() > deadline || this.child.exitCode !== null) throw new Error("the proxy did not answer");
      await sleep(2);
    }
    return JSON.parse(this.#lines.shift() as string);
  }
}

/** Start a proxy, its server and the server's daemon, with a tools/call left in flight. */
async function startGuarded(
  config: string,
  paths: { policy: string; server: string; dir: string },
  port: number,
) {
  const proxy = new ProxyRun(config, paths.policy, paths.server, paths.dir);
  proxy.send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "soak", version: "1" } },
  });
  await proxy.next();
  proxy.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  proxy.send({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "daemon", arguments: { port } },
  });
  const reply = (await proxy.next()) as { result?: { content: { text: string }[] } };
  const daemon = Number(reply.result?.content[0]?.text);
  if (!daemon) throw new Error(`the daemon did not start: ${JSON.stringify(reply)}`);
  const cgroups = cgroupsOf(daemon);
  const procs = readFileSync(join(cgroups[0] as string, "cgroup.procs"), "utf8")
    .trim()
    .split("\n")
    .map(Number);
  proxy.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "sleep", arguments: { ms: 60_000 } },
  });
  return { proxy, procs: [...new Set([...procs, daemon])], cgroups };
}

/** Kill and remove what a failed run left, so the next run starts clean (it was counted already). */
function forceClean(procs: number[], cgroups: string[]): void {
  for (const pid of procs) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
  for (const dir of cgroups) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty yet, or gone: best effort.
    }
  }
}

interface Sample {
  before: number;
  after: number;
  procsLeft: number;
  cgroupsLeft: number;
  cleanupMs?: number;
  proxyExitMs?: number;
}

/** One run: start, kill (the proxy or its loader), and measure what follows. */
async function oneRun(
  config: string,
  what: "proxy" | "loader",
  paths: { policy: string; server: string; dir: string },
  udp: { port: number; count: () => number },
  options: z.infer<typeof ContainmentSoakOptions>,
): Promise<Sample> {
  const base = udp.count();
  const { proxy, procs, cgroups } = await startGuarded(config, paths, udp.port);
  await sleep(20);
  const victim = what === "proxy" ? proxy.child.pid : loaderOf(proxy.child.pid as number);
  if (!victim) throw new Error("no BPF loader under the proxy");
  const atKill = udp.count();
  const start = performance.now();
  process.kill(victim, "SIGKILL");
  let proxyExitMs: number | undefined;
  if (what === "loader") {
    await within(proxy.exited, options.settleMs);
    proxyExitMs = performance.now() - start;
  }
  const gone = () => procs.every((pid) => !alive(pid)) && cgroups.every((dir) => !existsSync(dir));
  while (!gone() && performance.now() - start < options.settleMs) await sleep(1);
  const cleanupMs = gone() ? performance.now() - start : undefined;
  await sleep(options.listenMs);
  const sample: Sample = {
    before: atKill - base,
    after: udp.count() - atKill,
    procsLeft: procs.filter(alive).length,
    cgroupsLeft: cgroups.filter((dir) => existsSync(dir)).length,
    cleanupMs,
    proxyExitMs,
  };
  if (proxy.child.exitCode === null && proxy.child.signalCode === null) proxy.child.kill("SIGKILL");
  forceClean(procs, cgroups);
  return sample;
}

function loaderOf(proxyPid: number): number | undefined {
  const children = readFileSync(`/proc/${proxyPid}/task/${proxyPid}/children`, "utf8").trim().split(/\s+/);
  const loader = children.find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("mcpguard-loader");
    } catch {
      return false;
    }
  });
  return loader ? Number(loader) : undefined;
}

function summarize(samples: Sample[], withExit: boolean): KillResult {
  const cleanup = samples.flatMap((s) =>
    s.cleanupMs === undefined ? [] : [Math.round(s.cleanupMs * 10) / 10],
  );
  return {
    runs: samples.length,
    runsWithProcessesLeft: samples.filter((s) => s.procsLeft > 0).length,
    processesLeft: samples.reduce((n, s) => n + s.procsLeft, 0),
    runsWithCgroupsLeft: samples.filter((s) => s.cgroupsLeft > 0).length,
    cgroupsLeft: samples.reduce((n, s) => n + s.cgroupsLeft, 0),
    datagramsAfterKill: samples.reduce((n, s) => n + s.after, 0),
    runsWithDatagramsAfterKill: samples.filter((s) => s.after > 0).length,
    datagramsBeforeKill: samples.reduce((n, s) => n + s.before, 0),
    cleanupMs: timing(cleanup),
    ...(withExit
      ? { proxyExitMs: timing(samples.map((s) => Math.round((s.proxyExitMs ?? 0) * 10) / 10)) }
      : {}),
  };
}

async function udpListener() {
  const socket = createSocket("udp4");
  let count = 0;
  socket.on("message", () => count++);
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { port: socket.address().port, count: () => count, close: () => socket.close() };
}

/** Run the soak; progress lines (one per 10 runs) go to `progress`. */
export async function runContainmentSoak(
  input: ContainmentSoakOptions = {},
  progress: (line: string) => void = () => {},
): Promise<ContainmentSoakReport> {
  const options = ContainmentSoakOptions.parse(input);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "mcpguard-soak-"));
  const paths = { dir, server: join(dir, "server.cjs"), policy: join(dir, "policy.json") };
  writeFileSync(paths.server, SERVER);
  writeFileSync(paths.policy, JSON.stringify(POLICY));
  const udp = await udpListener();
  const plan: [string, "proxy" | "loader"][] = [
    ...options.configs.map((c) => [c, "proxy"] as [string, "proxy"]),
    ...(options.loaderKills ? [["C-full", "loader"] as [string, "loader"]] : []),
  ];
  const results: Record<string, Sample[]> = {};
  try {
    for (const [config, what] of plan) {
      const key = `${what}:${config}`;
      results[key] = [];
      for (let i = 0; i < options.iterations; i++) {
        results[key].push(await oneRun(config, what, paths, udp, options));
        if ((i + 1) % 10 === 0) progress(`${what} kill, ${config}: ${i + 1}/${options.iterations}`);
      }
    }
  } finally {
    udp.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return ContainmentSoakReport.parse({
    iterations: options.iterations,
    proxyKill: Object.fromEntries(
      options.configs.map((c) => [c, summarize(results[`proxy:${c}`] ?? [], false)]),
    ),
    loaderKill: options.loaderKills ? summarize(results["loader:C-full"] ?? [], true) : null,
    wallSeconds: Math.round((performance.now() - started) / 100) / 10,
  });
}
