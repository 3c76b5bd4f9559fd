/**
 * The frame soak: millions of generated frames, valid and hostile, pushed both ways through the
 * real `mcpguard run` CLI, counting what must never happen:
 *
 * - a crash: the proxy exits with anything but the server's status 0, prints a stack trace, or
 *   stops answering;
 * - a malformed frame forwarded: a line written to either side that is not one valid JSON message
 *   within the depth limit, or that holds a bare CR or a raw U+2028, U+2029 or U+0085;
 * - under a config with the sanitizer, the server's planted key reaching the client;
 *
 * and measuring the proxy's peak resident memory (VmHWM). Half the frames come from the client
 * side (this process), half from the server side (`frameServer.js`, run as the proxy's server).
 * The frames are split over `segments` proxy runs, so a crash costs one segment, not the run.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { repoPath } from "../paths.js";
import { type FrameKind, frame, lineProblem, random, SOAK_KEY } from "./generate.js";

export const SOAK_CONFIGS = ["C0", "C-full"] as const;

export const FrameSoakOptions = z.strictObject({
  /** Frames in all, per config, both directions together. */
  frames: z.number().int().min(2).default(1_000_000),
  configs: z
    .array(z.enum(SOAK_CONFIGS))
    .min(1)
    .default([...SOAK_CONFIGS]),
  seed: z.number().int().default(11),
  /** Proxy runs the frames are split over. */
  segments: z.number().int().min(1).default(10),
  /** The proxy's --max-depth. */
  maxDepth: z.number().int().min(1).max(1000).default(128),
  /** A segment whose proxy writes nothing for this long is counted as a crash (stalled). */
  stallMs: z.number().int().min(1000).default(60_000),
});
export type FrameSoakOptions = z.input<typeof FrameSoakOptions>;

const Count = z.number().int().nonnegative();

export const ConfigSoakReport = z.strictObject({
  config: z.string(),
  segments: Count,
  framesFromClient: Count,
  framesFromServer: Count,
  byKind: z.record(z.string(), Count),
  crashes: Count,
  malformedToClient: Count,
  malformedToServer: Count,
  linesToClient: Count,
  linesToServer: Count,
  plantedKeyToClient: Count,
  proxyLogLines: Count,
  peakRssMiB: z.number().nonnegative(),
  durationMs: z.number().nonnegative(),
  problems: z.array(z.string()),
});
export type ConfigSoakReport = z.infer<typeof ConfigSoakReport>;

export const FrameSoakReport = z.strictObject({
  frames: Count,
  seed: z.number().int(),
  maxDepth: Count,
  configs: z.array(ConfigSoakReport),
});
export type FrameSoakReport = z.infer<typeof FrameSoakReport>;

const SERVER_REPORT_PREFIX = "mcpguard-frame-soak-server ";
/** Built, like the CLI it runs behind: tests on sources start the same files. */
const FRAME_SERVER = repoPath("runner", "dist", "soak", "frameServer.js");
const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");
const CRASH_SIGNS = /^\s+at .+:\d+:\d+\)?$|^(?:RangeError|TypeError|SyntaxError|ReferenceError|Error):/m;

const ServerStats = z.looseObject({
  sent: Count,
  byKind: z.record(z.string(), Count),
  received: Count,
  malformedReceived: Count,
  examples: z.array(z.string()),
});

/** What one proxy run saw. */
interface Segment {
  crashed: boolean;
  byKind: Record<string, number>;
  fromClient: number;
  fromServer: number;
  malformedToClient: number;
  malformedToServer: number;
  linesToClient: number;
  linesToServer: number;
  plantedKeyToClient: number;
  logLines: number;
  peakRssMiB: number;
  problems: string[];
}

function peakRss(pid: number | undefined): number {
  try {
    const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A policy for the soak's server under C-full: one text tool, nothing to touch. */
function writePolicy(dir: string): string {
  const file = join(dir, "frame-soak.json");
  const policy = { version: 1, server: "frame-soak", tools: { echo: { args: { text: "text" } } } };
  writeFileSync(file, JSON.stringify(policy));
  return file;
}

/** Run the soak: every config in turn, each over `segments` proxy runs. */
export async function runFrameSoak(
  input: FrameSoakOptions = {},
  progress: (line: string) => void = () => {},
): Promise<FrameSoakReport> {
  const opts = FrameSoakOptions.parse(input);
  const dir = mkdtempSync(join(tmpdir(), "mcpguard-frame-soak-"));
  try {
    const policy = writePolicy(dir);
    const configs: ConfigSoakReport[] = [];
    for (const config of opts.configs) {
      const started = Date.now();
      const segments: Segment[] = [];
      for (let i = 0; i < opts.segments; i++) {
        const frames = Math.floor(opts.frames / opts.segments) + (i < opts.frames % opts.segments ? 1 : 0);
        const seed = opts.seed * 1000 + i;
        const { maxDepth, stallMs } = opts;
        segments.push(await runSegment({ config, frames, seed, policy, maxDepth, stallMs }));
        const done = segments.reduce((n, s) => n + s.fromClient + s.fromServer, 0);
        progress(`${config}: ${done} frames, ${segments.filter((s) => s.crashed).length} crashes`);
      }
      configs.push(summarize(config, segments, Date.now() - started));
    }
    return FrameSoakReport.parse({ frames: opts.frames, seed: opts.seed, maxDepth: opts.maxDepth, configs });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function summarize(config: string, segments: Segment[], durationMs: number): ConfigSoakReport {
  const sum = (f: (s: Segment) => number) => segments.reduce((n, s) => n + f(s), 0);
  const byKind: Record<string, number> = {};
  for (const s of segments) for (const [k, n] of Object.entries(s.byKind)) byKind[k] = (byKind[k] ?? 0) + n;
  return {
    config,
    segments: segments.length,
    framesFromClient: sum((s) => s.fromClient),
    framesFromServer: sum((s) => s.fromServer),
    byKind,
    crashes: sum((s) => (s.crashed ? 1 : 0)),
    malformedToClient: sum((s) => s.malformedToClient),
    malformedToServer: sum((s) => s.malformedToServer),
    linesToClient: sum((s) => s.linesToClient),
    linesToServer: sum((s) => s.linesToServer),
    plantedKeyToClient: sum((s) => s.plantedKeyToClient),
    proxyLogLines: sum((s) => s.logLines),
    peakRssMiB: Math.max(...segments.map((s) => s.peakRssMiB)),
    durationMs,
    problems: segments.flatMap((s) => s.problems).slice(0, 20),
  };
}

interface SegmentPlan {
  config: string;
  frames: number;
  seed: number;
  policy: string;
  maxDepth: number;
  stallMs: number;
}

function startProxy(plan: SegmentPlan): ChildProcessWithoutNullStreams {
  const serverFrames = Math.floor(plan.frames / 2);
  const layers = plan.config === "C0" ? [] : ["--policy", plan.policy];
  return spawn(
    process.execPath,
    [
      MCPGUARD,
      "run",
      "--config",
      plan.config,
      ...layers,
      "--max-depth",
      String(plan.maxDepth),
      "--",
      process.execPath,
      FRAME_SERVER,
      "--frames",
      String(serverFrames),
      "--seed",
      String(plan.seed + 7),
      "--max-depth",
      String(plan.maxDepth),
    ],
    { stdio: "pipe" },
  );
}

/** One proxy run: client frames in, server frames out, every line checked. */
async function runSegment(plan: SegmentPlan): Promise<Segment> {
  const child = startProxy(plan);
  const seg: Segment = {
    crashed: false,
    byKind: {},
    fromClient: 0,
    fromServer: 0,
    malformedToClient: 0,
    malformedToServer: 0,
    linesToClient: 0,
    linesToServer: 0,
    plantedKeyToClient: 0,
    logLines: 0,
    peakRssMiB: 0,
    problems: [],
  };
  const problem = (text: string) => {
    if (seg.problems.length < 5) seg.problems.push(`${plan.config} seed ${plan.seed}: ${text}`);
  };
  const rss = setInterval(() => {
    seg.peakRssMiB = Math.max(seg.peakRssMiB, peakRss(child.pid));
  }, 100);
  // "close", not "exit": the server's report on stderr is read by then.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  child.stdin.on("error", () => {});
  const ends = readClientSide(child, plan, seg, problem);
  readStderr(child, seg, problem);
  await writeClientFrames(child, plan, seg);
  const finished = await Promise.race([ends, exited.then(() => false)]);
  seg.peakRssMiB = Math.max(seg.peakRssMiB, peakRss(child.pid));
  clearInterval(rss);
  if (!finished) problem("the proxy ended or stalled before answering the last request");
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  if (code !== 0) problem(`the proxy exited with ${signal ?? code}`);
  seg.crashed ||= !finished || code !== 0;
  return seg;
}

/** Resolves once `stream` drains, or closes. */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

async function writeClientFrames(child: ChildProcessWithoutNullStreams, plan: SegmentPlan, seg: Segment) {
  const r = random(plan.seed);
  const count = plan.frames - Math.floor(plan.frames / 2);
  for (let i = 0; i < count && !child.stdin.destroyed; i++) {
    const f = frame(r, "client", i);
    seg.byKind[f.kind] = (seg.byKind[f.kind] ?? 0) + 1;
    seg.fromClient++;
    if (!child.stdin.write(f.bytes)) await drained(child.stdin);
  }
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "soak-end", method: "ping" })}\n`);
}

/**
 * Check every line the proxy writes to the client. Resolves true once the server said it is done
 * and the last request is answered; false when the proxy goes quiet for `stallMs`.
 */
function readClientSide(
  child: ChildProcessWithoutNullStreams,
  plan: SegmentPlan,
  seg: Segment,
  problem: (text: string) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    let serverDone = false;
    let lastAnswered = false;
    let pending: Buffer[] = [];
    let stall = setTimeout(() => resolve(false), plan.stallMs);
    const onLine = (line: Buffer) => {
      seg.linesToClient++;
      const why = lineProblem(line, plan.maxDepth);
      if (why) {
        seg.malformedToClient++;
        problem(`to the client, ${why}: ${line.subarray(0, 80).toString("utf8")}`);
        return;
      }
      if (line.includes(SOAK_KEY)) {
        seg.plantedKeyToClient++;
        if (plan.config !== "C0")
          problem(`the planted key reached the client: ${line.subarray(0, 200).toString("utf8")}`);
      }
      if (line.includes('"soak/done"')) serverDone = true;
      if (line.includes('"soak-end"')) lastAnswered = true;
    };
    child.stdout.on("data", (chunk: Buffer) => {
      clearTimeout(stall);
      stall = setTimeout(() => resolve(false), plan.stallMs);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        onLine(
          pending.length ? Buffer.concat([...pending, chunk.subarray(start, nl)]) : chunk.subarray(start, nl),
        );
        pending = [];
        start = nl + 1;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      if (serverDone && lastAnswered) {
        clearTimeout(stall);
        resolve(true);
      }
    });
    child.stdout.once("end", () => {
      clearTimeout(stall);
      if (pending.length) {
        seg.malformedToClient++;
        problem("to the client, a last line without LF");
      }
      resolve(serverDone && lastAnswered);
    });
  });
}

/** The proxy's diagnostics: counted, checked for stack traces, and the server's report read. */
function readStderr(
  child: ChildProcessWithoutNullStreams,
  seg: Segment,
  problem: (text: string) => void,
): void {
  let rest = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith(SERVER_REPORT_PREFIX)) {
        const stats = ServerStats.parse(JSON.parse(line.slice(SERVER_REPORT_PREFIX.length)));
        seg.fromServer += stats.sent;
        seg.linesToServer += stats.received;
        seg.malformedToServer += stats.malformedReceived;
        for (const [k, n] of Object.entries(stats.byKind)) seg.byKind[k] = (seg.byKind[k] ?? 0) + n;
        for (const example of stats.examples) problem(`to the server, ${example}`);
      } else if (line.startsWith("mcpguard: ")) {
        seg.logLines++;
      } else if (CRASH_SIGNS.test(line)) {
        seg.crashed = true;
        problem(`stderr: ${line.slice(0, 120)}`);
      }
    }
  });
}

export type { FrameKind };
