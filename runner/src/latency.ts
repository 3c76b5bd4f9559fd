/**
 * `mcpguard bench latency`: what each config adds to a tool call. One long-lived session per config
 * (and one straight to the server, `direct`), each in its own world, timed with tinybench in
 * interleaved rounds so no config always runs on a warmer or busier machine. Two bare relays that
 * only copy bytes, `pipe-c` (in C) and `pipe` (in Node.js), measure the floor of any stdio proxy and
 * of any Node.js proxy, so what a config adds splits into the second process on the way, the
 * runtime, and the proxy's own work. A third, `pipe-contained`, also gives the server the
 * containment every config gives it (a cgroup with limits, joined before the server's first
 * instruction, and a reaper): at cold start, what containment costs in itself on this host. Cold
 * start (spawn to initialized) is measured separately, on fresh sessions. Tables in hyperfine's
 * shape, beside the published paper's latency table.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { findCgroup2 } from "@mcpguard/proxy";
import { defineCommand, intOption, UsageError } from "@mcpguard/proxy/args";
import { stringify } from "csv-stringify/sync";
import { Bench } from "tinybench";
import { resolveInterpreters } from "./interpreters.js";
import { repoPath } from "./paths.js";
import { peerWorldBase } from "./peers.js";
import { loadRegistry, type ServerEntry } from "./registry.js";
import { PAPER } from "./render.js";
import { resolveConfigs, selectScenarios } from "./select.js";
import { BYTE_RELAY, openSession, PIPE, PIPE_C, PIPE_CONTAINED, REAPER, type Session } from "./session.js";
import { DIRECT, type Latency, latencyStats } from "./summarize.js";
import { applySetup } from "./trial.js";
import { type World, WorldFactory } from "./world/world.js";

export interface LatencyResult {
  runId: string;
  case: string;
  iterations: number;
  warmup: number;
  rounds: number;
  calls: Record<string, Latency>;
  /** The p50 of each path in each round: differences are taken round by round, on the same machine state. */
  roundP50s?: Record<string, number[]>;
  /**
   * CPU time per timed call in each round, in µs (never the client's): `process`, of the process
   * the client spawned (the proxy or relay; the server for direct), all its threads; `session`, of
   * every process of the session (its cgroup: with the server and what they started), absent
   * where the sessions have no cgroup of their own (not root).
   */
  roundCpuMicros?: { process: Record<string, number[]>; session?: Record<string, number[]> };
  coldStart: Record<string, Latency>;
  /** The CPUs every process of the run was pinned to (`--cpus`), if any. */
  cpus?: string;
}

/**
 * Pin this process, each of its threads, and so every process it starts (client, proxies, servers,
 * relays), to a CPU list in taskset's notation (`1`, `0,1`, `2-3`). Node.js has no affinity call of
 * its own; children inherit the mask at fork.
 */
export function pinToCpus(list: string, pid = process.pid): void {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(list))
    throw new UsageError(`--cpus must be a CPU list such as 1 or 0,2 or 0-3, got "${list}"`);
  try {
    execFileSync("taskset", ["--all-tasks", "--pid", "--cpu-list", list, String(pid)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "")
      .trim()
      .split("\n")[0];
    throw new UsageError(`--cpus ${list}: taskset refused: ${stderr || (error as Error).message}`);
  }
}

/** The median of the per-round differences (or ratios) of `a` against `b`, with their range over the rounds. */
export interface RoundDelta {
  median: number;
  lo: number;
  hi: number;
  rounds: number;
}

function median(values: number[]): number {
  const v = [...values].sort((x, y) => x - y);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

/** `a - b` (or `a / b`) round by round: what a config adds, with the machine's drift between rounds taken out. */
export function roundDelta(
  a: number[] | undefined,
  b: number[] | undefined,
  kind: "diff" | "ratio",
): RoundDelta | null {
  if (!a || !b || a.length === 0 || a.length !== b.length) return null;
  const values = a.map((x, i) => (kind === "diff" ? x - (b[i] as number) : x / (b[i] as number)));
  return values.some((v) => !Number.isFinite(v)) ? null : spread(values);
}

/** The median of values taken round by round, and their range. */
function spread(values: number[]): RoundDelta | null {
  if (values.length === 0) return null;
  return { median: median(values), lo: Math.min(...values), hi: Math.max(...values), rounds: values.length };
}

const roundText = (d: RoundDelta | null, kind: "diff" | "ratio") =>
  d === null
    ? "–"
    : kind === "diff"
      ? `${d.median >= 0 ? "+" : ""}${d.median.toFixed(3)} [${d.lo.toFixed(3)}, ${d.hi.toFixed(3)}]`
      : `${d.median.toFixed(2)}× [${d.lo.toFixed(2)}, ${d.hi.toFixed(2)}]`;

/** Paths that are not configs: nothing is compared with them but direct. */
const BASELINES = new Set([DIRECT, PIPE_C, PIPE, PIPE_CONTAINED]);

const ms = (v: number | null) => (v === null ? "–" : v.toFixed(3));
const diff = (a: Latency | undefined, b: Latency | undefined) =>
  a?.p50 != null && b?.p50
    ? `${a.p50 - b.p50 >= 0 ? "+" : ""}${ms(a.p50 - b.p50)} (${(a.p50 / b.p50).toFixed(2)}×)`
    : "–";

/**
 * A proxy's own start as a multiple of Node.js's boot on this machine: its p50 over `pipe`'s,
 * divided by `pipe`'s over direct's. Machines of one kind differ in speed by more than a proxy's
 * start-up work does; this ratio held within 0.11 (30 starts each) on two VMs whose Node.js boots
 * differed 2.3 times.
 */
const bootMultiple = (a: Latency | undefined, pipe: Latency | undefined, direct: Latency | undefined) => {
  if (a?.p50 == null || pipe?.p50 == null || direct?.p50 == null) return "–";
  const boot = pipe.p50 - direct.p50;
  return boot > 0 ? `${((a.p50 - pipe.p50) / boot).toFixed(2)}` : "–";
};

export function renderLatency(r: LatencyResult): string {
  const paths = Object.keys(r.calls);
  const lines = [
    `# Tool call latency — ${r.case}, ${r.iterations} calls per path (${r.rounds} interleaved rounds, ${r.warmup} warm-up${r.cpus === undefined ? "" : `, every process pinned to CPUs ${r.cpus}`})`,
    "",
    "| path | n | p50 [ms] | p95 [ms] | p99 [ms] | mean ± sd [ms] | p50 vs C0 | p50 vs pipe | p50 vs direct | paper median [ms] |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...paths.map((p) => {
      const s = r.calls[p] as Latency;
      const paper = PAPER.latencyMedianMs[p];
      const baseline = BASELINES.has(p);
      return `| ${p} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${ms(s.mean)} ± ${ms(s.sd)} | ${p === "C0" || baseline ? "–" : diff(s, r.calls.C0)} | ${baseline ? "–" : diff(s, r.calls[PIPE])} | ${p === DIRECT ? "–" : diff(s, r.calls[DIRECT])} | ${paper === undefined ? "–" : paper.toFixed(3)} |`;
    }),
    "",
    ...(r.roundP50s && r.rounds > 1
      ? [
          `## Round by round (${r.rounds} rounds): median of the per-round differences of p50 [min, max]`,
          "",
          "Each round times every path one after the other, so a difference taken within a round holds the machine's state still; the median over rounds is the figure to quote, the range how much it moved.",
          "",
          "| path | vs C0 [ms] | vs pipe | vs direct [ms] |",
          "|---|---:|---:|---:|",
          ...paths
            .filter((p) => p !== DIRECT)
            .map((p) => {
              const rp = r.roundP50s as Record<string, number[]>;
              const c0 =
                p === "C0" || BASELINES.has(p) ? "–" : roundText(roundDelta(rp[p], rp.C0, "diff"), "diff");
              const pipe = BASELINES.has(p) ? "–" : roundText(roundDelta(rp[p], rp[PIPE], "ratio"), "ratio");
              return `| ${p} | ${c0} | ${pipe} | ${roundText(roundDelta(rp[p], rp[DIRECT], "diff"), "diff")} |`;
            }),
          "",
        ]
      : []),
    ...renderCpu(r, paths),
    `\`${PIPE_C}\` (in C) and \`${PIPE}\` (in Node.js) are bare relays that only copy bytes: the floor of any stdio proxy, and of any Node.js proxy, on this machine.`,
    `Paper: C-full +${PAPER.cFullOverC0MedianMs} ms median over C0, p95 ${PAPER.cFullP95Ms} ms.`,
    "",
    "## Cold start: spawn to initialized (fresh session, fresh world)",
    "",
    `| path | n | p50 [ms] | p95 [ms] | mean ± sd [ms] | p50 vs C0 | p50 vs pipe | p50 vs ${PIPE_CONTAINED} | p50 vs direct | own start / Node.js boot |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...Object.entries(r.coldStart).map(
      ([p, s]) =>
        `| ${p} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.mean)} ± ${ms(s.sd)} | ${p === "C0" || BASELINES.has(p) ? "–" : diff(s, r.coldStart.C0)} | ${BASELINES.has(p) && p !== PIPE_CONTAINED ? "–" : diff(s, r.coldStart[PIPE])} | ${BASELINES.has(p) ? "–" : diff(s, r.coldStart[PIPE_CONTAINED])} | ${p === DIRECT ? "–" : diff(s, r.coldStart[DIRECT])} | ${BASELINES.has(p) ? "–" : bootMultiple(s, r.coldStart[PIPE], r.coldStart[DIRECT])} |`,
    ),
    "",
    `A proxy written in Node.js starts no faster than \`${PIPE}\`, which boots Node.js before it spawns the server: its own start-up cost is the difference to \`${PIPE}\`. The last column divides that by Node.js's boot on this machine (\`${PIPE}\` over direct), a figure that holds across machines of different speed. \`${PIPE_CONTAINED}\` is \`${PIPE}\` that also contains its server as every config does, with no code of the proxy's: its difference to \`${PIPE}\` is what containment costs on this host (on most kernels most of it is the wait of a process's move into a cgroup, docs/PERFORMANCE.md), and a config's difference to it is the proxy's own start.`,
    "",
  ];
  return lines.join("\n");
}

/** CPU per call: the proxy's or relay's own, and the whole session's, round by round. */
function renderCpu(r: LatencyResult, paths: string[]): string[] {
  const cpu = r.roundCpuMicros;
  if (!cpu) return [];
  const us = (d: RoundDelta | null, sign = true) =>
    d === null
      ? "–"
      : `${sign && d.median >= 0 ? "+" : ""}${d.median.toFixed(1)} [${d.lo.toFixed(1)}, ${d.hi.toFixed(1)}]`;
  const own = (table: Record<string, number[]> | undefined, p: string) => us(spread(table?.[p] ?? []), false);
  const vs = (table: Record<string, number[]> | undefined, p: string, base: string, shown: boolean) =>
    shown && table ? us(roundDelta(table[p], table[base], "diff")) : "–";
  return [
    "## CPU per call, round by round: median [min, max] in µs",
    "",
    "Scheduler run time over the timed calls, never the client's: of the process the client spawned (the relay or proxy, every thread; for direct, the server), and of every process of the session (its cgroup: with the server, the reaper, the BPF loader and the kernel's work on their behalf). It depends much less than the round trip on when each process gets a CPU back: what a proxy adds over `pipe` here is its own work.",
    "",
    "| path | spawned process | vs pipe | whole session | vs direct | vs C0 |",
    "|---|---:|---:|---:|---:|---:|",
    ...paths.map((p) => {
      const config = !BASELINES.has(p);
      return `| ${p} | ${own(cpu.process, p)} | ${vs(cpu.process, p, PIPE, config)} | ${cpu.session ? own(cpu.session, p) : "–"} | ${vs(cpu.session, p, DIRECT, p !== DIRECT)} | ${vs(cpu.session, p, "C0", config && p !== "C0")} |`;
    }),
    ...(cpu.session
      ? []
      : ["", "The whole session is not measured: its processes have no cgroup of their own (run as root)."]),
    "",
  ];
}

export function renderLatencyCsv(r: LatencyResult): string {
  const rows = [
    ...Object.entries(r.calls).map(([path, s]) => ({ kind: "call", path, ...s })),
    ...Object.entries(r.coldStart).map(([path, s]) => ({ kind: "cold-start", path, ...s })),
  ];
  return stringify(rows, { header: true, columns: ["kind", "path", "n", "p50", "p95", "p99", "mean", "sd"] });
}

const LATENCY = defineCommand({
  name: "mcpguard bench latency",
  description:
    "Time one tool call per path in long-lived sessions, and the cold start of each. The paths are each " +
    "config, direct (no proxy), two bare relays that only copy bytes: pipe-c (in C, built with bpf/) " +
    "and pipe (in Node.js), and pipe-contained, pipe with the server contained as every config " +
    "contains it (as root). Writes latency.md, latency.csv and latency.json to --out. A line on " +
    "stderr after each round and each cold start round says how far it is.",
  options: {
    configs: {
      type: "string",
      value: "list",
      help: 'comma-separated configs, or "all" (default: all built here)',
    },
    iterations: { type: "string", value: "n", help: "timed calls per path (default 100)" },
    warmup: { type: "string", value: "n", help: "untimed calls per path first (default 20)" },
    rounds: {
      type: "string",
      value: "n",
      help: "rounds the calls are split into, the paths interleaved in each (default 4)",
    },
    case: { type: "string", value: "id", help: "the case whose call is timed (default BN-01)" },
    /** `mcpguard bench`'s spelling, kept as an alias (one case here). */
    cases: { type: "string", value: "id" },
    "cold-starts": { type: "string", value: "n", help: "cold starts timed per path (default 10)" },
    cpus: {
      type: "string",
      value: "list",
      help:
        "pin the run (client, proxies, servers) to these CPUs, as taskset writes them (1, 0,1, 2-3): " +
        "the same placement for every path, at the cost of a realistic spread",
    },
    out: { type: "string", value: "dir", help: "output directory (default reports/<run-id>)" },
    "run-id": { type: "string", value: "id", help: "name of the run (default latency-<time>)" },
    quiet: { type: "boolean", help: "no progress lines" },
  },
});

/** Whether the `pipe-contained` path can run here: true, or why not. */
function containedFloor(): true | string {
  if (process.getuid?.() !== 0) return "it makes cgroups, which needs root";
  if (!findCgroup2()) return "no cgroup2 hierarchy is mounted here";
  if (!existsSync(REAPER)) return `${REAPER} is not built (npm run setup)`;
  return true;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = LATENCY.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  if (values.cpus !== undefined) pinToCpus(values.cpus);
  const started = performance.now();
  const note = (line: string) => {
    if (!values.quiet)
      process.stderr.write(
        `[latency] ${line}, ${((performance.now() - started) / 1000).toFixed(0)} s elapsed\n`,
      );
  };
  const iterations = intOption(values.iterations, "iterations", 100);
  const warmup = intOption(values.warmup, "warmup", 20);
  const rounds = intOption(values.rounds, "rounds", 4);
  const coldStarts = intOption(values["cold-starts"], "cold-starts", 10);
  if (iterations < rounds || rounds < 1)
    throw new UsageError("--iterations must be at least --rounds, and --rounds at least 1");
  const configs = resolveConfigs(values.configs);
  if (values.case !== undefined && values.cases !== undefined)
    throw new UsageError("give --case or its alias --cases, not both");
  const { scenarios } = selectScenarios(values.case ?? values.cases ?? "BN-01");
  const scenario = scenarios[0];
  if (!scenario || scenarios.length !== 1) throw new UsageError("--case takes one case id");
  const runId = values["run-id"] ?? `latency-${new Date().toISOString().replace(/[-:]/g, "").slice(0, 15)}`;
  const out = resolve(values.out ?? repoPath("reports", `${runId}`));

  const server = loadRegistry().get(scenario.server) as ServerEntry;
  const interpreters = await resolveInterpreters();
  const factory = await WorldFactory.create({ baseDir: peerWorldBase(configs) });
  const nativeRelay = existsSync(BYTE_RELAY);
  if (!nativeRelay)
    process.stderr.write(`${PIPE_C} is left out: ${BYTE_RELAY} is not built (npm run setup)\n`);
  const contained = containedFloor();
  if (typeof contained === "string") process.stderr.write(`${PIPE_CONTAINED} is left out: ${contained}\n`);
  const paths = [
    DIRECT,
    ...(nativeRelay ? [PIPE_C] : []),
    PIPE,
    ...(contained === true ? [PIPE_CONTAINED] : []),
    ...configs,
  ];
  const open = async (config: string): Promise<{ world: World; session: Session }> => {
    const world = await factory.create();
    applySetup(world, scenario.setup ?? []);
    return { world, session: await openSession({ world, server, interpreters, config }) };
  };
  const sessions = new Map<string, { world: World; session: Session }>();
  try {
    for (const p of paths) sessions.set(p, await open(p));
    const call = (p: string) => {
      const s = sessions.get(p) as { world: World; session: Session };
      return s.session.client.callTool({
        name: scenario.tool,
        arguments: s.world.expand(scenario.arguments),
      });
    };
    const samples = new Map<string, number[]>(paths.map((p) => [p, []]));
    const roundP50s = new Map<string, number[]>(paths.map((p) => [p, []]));
    // CPU of each session over the timed calls of a round, its spawned process's and its cgroup's
    // (tinybench's hooks run outside the timed calls; "warmup" is the untimed part). Each measure
    // goes into the result only if every session has it.
    const cpuOf = (p: string) => sessions.get(p)?.session.cpuMicros();
    const measures = {
      process: paths.every((p) => cpuOf(p)?.process !== undefined),
      session: paths.every((p) => cpuOf(p)?.session !== undefined),
    };
    const roundCpu = {
      process: new Map<string, number[]>(paths.map((p) => [p, []])),
      session: new Map<string, number[]>(paths.map((p) => [p, []])),
    };
    const cpuUsed = new Map<string, { process: number; session: number }>();
    const perRound = Math.ceil(iterations / rounds);
    for (let round = 0; round < rounds; round++) {
      const bench = new Bench({
        iterations: perRound,
        time: 0,
        warmupIterations: round === 0 ? warmup : Math.min(warmup, 5),
        warmupTime: 0,
        retainSamples: true,
      });
      for (const p of round % 2 === 0 ? paths : [...paths].reverse()) {
        let before: ReturnType<typeof cpuOf>;
        bench.add(p, () => call(p), {
          beforeAll: (mode) => {
            if (mode === "run") before = cpuOf(p);
          },
          afterAll: (mode) => {
            const after = cpuOf(p);
            if (mode === "run" && before && after)
              cpuUsed.set(p, {
                process: (after.process ?? 0) - (before.process ?? 0),
                session: (after.session ?? 0) - (before.session ?? 0),
              });
          },
        });
      }
      await bench.run();
      for (const task of bench.tasks) {
        if (task.result.state === "errored") throw new Error(`${task.name}: ${task.result.error?.message}`);
        const taken = (task.result as { latency?: { samples?: number[] } }).latency?.samples ?? [];
        samples.get(task.name)?.push(...taken);
        const p50 = latencyStats(taken).p50;
        if (p50 !== null) roundP50s.get(task.name)?.push(p50);
        const used = cpuUsed.get(task.name);
        if (used && taken.length > 0) {
          roundCpu.process.get(task.name)?.push(used.process / taken.length);
          roundCpu.session.get(task.name)?.push(used.session / taken.length);
        }
      }
      note(`round ${round + 1}/${rounds}: ${perRound} calls on each of ${paths.length} paths`);
    }
    for (const { world, session } of sessions.values()) {
      await session.close();
      await world.destroy();
    }
    sessions.clear();

    const cold = new Map<string, number[]>(paths.map((p) => [p, []]));
    for (let i = 0; i < coldStarts; i++) {
      for (const p of i % 2 === 0 ? paths : [...paths].reverse()) {
        const world = await factory.create();
        const t0 = performance.now();
        const session = await openSession({ world, server, interpreters, config: p });
        cold.get(p)?.push(performance.now() - t0);
        await session.close();
        await world.destroy();
      }
      note(`cold starts ${i + 1}/${coldStarts} on each of ${paths.length} paths`);
    }
    const result: LatencyResult = {
      runId,
      case: scenario.id,
      iterations,
      warmup,
      rounds,
      calls: Object.fromEntries(paths.map((p) => [p, latencyStats(samples.get(p) as number[])])),
      roundP50s: Object.fromEntries(roundP50s),
      ...(measures.process
        ? {
            roundCpuMicros: {
              process: Object.fromEntries(roundCpu.process),
              ...(measures.session ? { session: Object.fromEntries(roundCpu.session) } : {}),
            },
          }
        : {}),
      ...(values.cpus === undefined ? {} : { cpus: values.cpus }),
      coldStart: coldStarts
        ? Object.fromEntries(paths.map((p) => [p, latencyStats(cold.get(p) as number[])]))
        : {},
    };
    mkdirSync(out, { recursive: true });
    const markdown = renderLatency(result);
    writeFileSync(join(out, "latency.md"), markdown);
    writeFileSync(join(out, "latency.csv"), renderLatencyCsv(result));
    writeFileSync(join(out, "latency.json"), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${markdown}\nwritten to ${out}/latency.{md,csv,json}\n`);
    return 0;
  } finally {
    for (const { world, session } of sessions.values()) {
      await session.close();
      await world.destroy();
    }
    factory.dispose();
  }
}
