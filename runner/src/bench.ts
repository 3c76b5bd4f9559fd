/**
 * Run: every (config, case, trial) in a fresh isolated world, in parallel, one record per trial in
 * `trials.ndjson` (the source of truth). Summaries and reports are derived from those records.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, freemem } from "node:os";
import { join } from "node:path";
import { resolveConfig } from "@mcpguard/proxy";
import { suiteOfScenario } from "./coreSet.js";
import { type Interpreters, resolveInterpreters } from "./interpreters.js";
import { writeManifest } from "./manifest.js";
import { isPeerConfig, peersNotRun, peerWorldBase } from "./peers.js";
import { kernelLayerUnavailable, probeEnvironment } from "./probe.js";
import { prepareNpmCache } from "./real.js";
import type { HashedRecord } from "./records.js";
import { loadAllServers, type ServerEntry } from "./registry.js";
import { caseSha256, cwdVariants, type Scenario, type TrialCwd } from "./scenario.js";
import { sweepTrialCgroups } from "./session.js";
import { DIRECT } from "./summarize.js";
import { caseFields, markError, runTrial, type TrialRecord } from "./trial.js";
import { Sink } from "./world/sink.js";
import { serverPath, WorldFactory } from "./world/world.js";

/** Commands the cases and servers exec; the runner checks them on the server PATH before a run. */
export const REQUIRED_COMMANDS = [
  "python3",
  "node",
  "git",
  "curl",
  "wget",
  "sh",
  "chmod",
  "env",
  "printenv",
  "cat",
  "ls",
  "date",
  "id",
  "uname",
];

/** A trial that exceeds this is killed and cleaned up (start 15 s + call 15 s + judging). */
export const TRIAL_TIMEOUT_MS = 45_000;

export interface BenchPlan {
  runId: string;
  outDir: string;
  configs: string[];
  scenarios: Scenario[];
  trials: number;
  jobs: number;
  /** Also run the benign cases without the proxy, as the latency baseline. */
  direct: boolean;
  keepRaw: boolean;
  allowHostSudo: boolean;
  /** Each server's policy from `<dir>/<server id>.json` instead of policies/servers. */
  policiesDir?: string;
  /**
   * The configs were named (`--configs C-full`), not the default: one the host cannot enforce
   * refuses the run instead of being reported "not run".
   */
  explicitConfigs?: boolean;
  /** Keep every trial's audit log in this folder (for `mcpguard policy learn`). */
  auditDir?: string;
  /** Run only this deterministic slice of the trials (1-based index). */
  shard?: { index: number; count: number };
  /**
   * How to show progress on stderr: "tty" rewrites one line, "lines" prints a plain line every
   * PROGRESS_EVERY_MS (for CI logs), "off" prints nothing.
   */
  progress: "tty" | "lines" | "off";
  commandLine: string[];
}

export interface TrialTask {
  config: string;
  scenario: Scenario;
  trial: number;
  /** Where the proxy and the server start (the case's variants: the workspace, `/`). */
  cwd: TrialCwd;
}

/** Every trial of the plan in a fixed order: by trial run, then case and its cwd variants, then config. */
export function planTasks(plan: Pick<BenchPlan, "configs" | "scenarios" | "trials" | "direct">): TrialTask[] {
  const tasks: TrialTask[] = [];
  const scenarios = [...plan.scenarios].sort((a, b) => a.id.localeCompare(b.id));
  for (let trial = 1; trial <= plan.trials; trial++) {
    for (const scenario of scenarios) {
      for (const cwd of cwdVariants(scenario)) {
        for (const config of plan.configs) tasks.push({ config, scenario, trial, cwd });
        if (plan.direct && scenario.kind === "benign") tasks.push({ config: DIRECT, scenario, trial, cwd });
      }
    }
  }
  return tasks;
}

/** The slice of shard `index` of `count`: every count-th task, so each shard gets every config. */
export function shardTasks<T>(tasks: T[], shard: { index: number; count: number } | undefined): T[] {
  if (!shard) return tasks;
  return tasks.filter((_, i) => i % shard.count === shard.index - 1);
}

/** The configs of a list that need the kernel layer (L3). */
export function kernelConfigs(configs: readonly string[]): string[] {
  return configs.filter((c) => !isPeerConfig(c) && c !== DIRECT && resolveConfig(c).layers.includes("L3"));
}

/**
 * The configs this host cannot enforce, with why ("the kernel layer cannot run here: ..."), to be
 * reported not run while the rest run; when the configs were named, one of them refuses the run.
 */
export function hostNotRun(
  configs: readonly string[],
  explicit: boolean,
  unavailable: () => string | null = kernelLayerUnavailable,
): Map<string, string> {
  const l3 = kernelConfigs(configs);
  if (l3.length === 0) return new Map();
  const why = unavailable();
  if (why === null) return new Map();
  if (explicit) {
    throw new Error(
      `${l3.join(", ")} ${l3.length === 1 ? "needs" : "need"} the kernel layer, which cannot run here: ${why} (mcpguard doctor says more; without --configs the configs this host can enforce run)`,
    );
  }
  return new Map(l3.map((c) => [c, `the kernel layer cannot run here: ${why}`]));
}

export function checkCommands(path = serverPath()): string[] {
  const script = REQUIRED_COMMANDS.map((c) => `command -v ${c} >/dev/null 2>&1 || echo ${c}`).join("; ");
  const out = execFileSync("/bin/sh", ["-c", script], { encoding: "utf8", env: { PATH: path } });
  return out.split("\n").filter(Boolean);
}

/** Whether `sudo -n true` works for the server's uid and environment (PE-02 would then read /etc/shadow). */
export function hostSudoUsable(): boolean {
  const r = spawnSync("sudo", ["-n", "true"], {
    env: { PATH: serverPath(), LANG: "C.UTF-8" },
    stdio: "ignore",
    timeout: 5000,
  });
  return r.status === 0;
}

/** Off a terminal, one progress line this often. */
export const PROGRESS_EVERY_MS = 30_000;

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

export interface BenchResult {
  records: TrialRecord[];
  interrupted: boolean;
  wallMs: number;
  interpreters: Interpreters;
}

/** Run the plan; resolves when every trial has ended and been cleaned up (or the run was interrupted). */
export async function runBench(plan: BenchPlan, signal?: AbortSignal): Promise<BenchResult> {
  const started = Date.now();
  // Before anything is prepared: a named config this host cannot enforce refuses the run at once.
  const hostSkipped = hostNotRun(plan.configs, plan.explicitConfigs === true);
  // Each case's suite: the core set by the manifest, extensions and external files apart.
  const suites = new Map(plan.scenarios.map((s) => [s.id, suiteOfScenario(s)]));
  const servers = loadAllServers();
  const interpreters = await resolveInterpreters();
  const missing = checkCommands();
  if (missing.length > 0) {
    throw new Error(`missing on PATH: ${missing.join(", ")} (npm run setup installs them when run as root)`);
  }
  (await Sink.start()).close(); // refuses the run when IPv6 loopback cannot be bound
  const used = new Set(plan.scenarios.map((s) => s.server));
  prepareNpmCache(
    [...servers.values()].filter((s) => used.has(s.id)),
    interpreters,
  );

  const sudo = hostSudoUsable();
  const notRunReason = (s: Scenario) =>
    s.id === "PE-02" && sudo && !plan.allowHostSudo ? "host sudo usable" : undefined;

  // A peer that cannot run here is reported "not run: <why>" for every case, never skipped silently;
  // so is a config whose kernel layer this host cannot enforce (unless it was named).
  const peerNotRun = new Map([...peersNotRun(plan.configs), ...hostSkipped]);
  const trialsFile = join(plan.outDir, "trials.ndjson");
  const records: TrialRecord[] = [];
  // Each record names the bytes of its case (the sha256 of its file), so a comparison knows it is the same case.
  const write = (record: TrialRecord, scenario: Scenario) => {
    const sha256 = caseSha256(scenario);
    if (sha256) (record as HashedRecord).caseSha256 = sha256;
    records.push(record);
    appendFileSync(trialsFile, `${JSON.stringify(record)}\n`);
  };
  const tasks = shardTasks(planTasks(plan), plan.shard).filter(
    (t) => !notRunReason(t.scenario) && !peerNotRun.has(t.config),
  );

  // What killed runs left behind would only pile up: their empty trial cgroups go first.
  sweepTrialCgroups();
  const factory = await WorldFactory.create({ baseDir: peerWorldBase(plan.configs) });
  const auditDir = join(factory.runDir, "audit");
  // Until the trials' own try below, a run that stops here removes its worlds too.
  try {
    for (const config of plan.configs) {
      if (peerNotRun.has(config)) continue;
      const refused = await probeEnvironment(config, factory, interpreters);
      if (refused)
        throw new Error(`${refused}; the run is refused (HOME, TMPDIR, PATH and LANG describe the world)`);
    }
    mkdirSync(plan.outDir, { recursive: true });
    writeFileSync(trialsFile, "");
    // Cases not run are recorded once per run: by the first shard when the run is sharded.
    if (!plan.shard || plan.shard.index === 1) {
      for (const config of plan.configs) {
        for (const scenario of plan.scenarios) {
          const reason = peerNotRun.get(config) ?? notRunReason(scenario);
          if (reason) write(notRunRecord(plan.runId, config, scenario, reason), scenario);
        }
      }
    }
    mkdirSync(auditDir);
  } catch (error) {
    factory.dispose();
    throw error;
  }
  const rawDir = plan.keepRaw ? join(plan.outDir, "raw") : undefined;
  const running = new Set<AbortController>();
  const onAbort = () => {
    for (const controller of running) controller.abort();
  };
  signal?.addEventListener("abort", onAbort, { once: true });

  let next = 0;
  let done = 0;
  let errors = 0;
  // The ETA counts from the first trial, not from setup, and waits for a few trials to finish.
  const trialsStarted = Date.now();
  let lastLine = trialsStarted;
  const progress = (final = false) => {
    if (plan.progress === "off") return;
    const now = Date.now();
    if (plan.progress === "lines" && !final && now - lastLine < PROGRESS_EVERY_MS) return;
    lastLine = now;
    const elapsed = now - trialsStarted;
    const known = done >= Math.max(5, plan.jobs * 2);
    const eta = final
      ? ""
      : known
        ? `, ETA ${formatDuration(((tasks.length - done) * elapsed) / done)}`
        : ", ETA …";
    const failed = errors ? `, ${errors} trial error${errors === 1 ? "" : "s"}` : "";
    const text = `[bench] ${done}/${tasks.length} trials${failed}, ${formatDuration(elapsed)} elapsed${eta}`;
    if (plan.progress === "tty") process.stderr.write(`\r${text}   ${final ? "\n" : ""}`);
    else process.stderr.write(`${text}\n`);
  };
  const worker = async () => {
    while (!signal?.aborted) {
      const task = tasks[next++];
      if (!task) return;
      const controller = new AbortController();
      running.add(controller);
      const timer = setTimeout(() => controller.abort(), TRIAL_TIMEOUT_MS);
      try {
        const record = await runTrial(
          {
            runId: plan.runId,
            scenario: task.scenario,
            config: task.config,
            trial: task.trial,
            cwd: task.cwd,
            suite: suites.get(task.scenario.id),
            signal: controller.signal,
          },
          {
            factory,
            servers: servers as ReadonlyMap<string, ServerEntry>,
            interpreters,
            auditDir,
            rawDir,
            ...(plan.policiesDir ? { policiesDir: plan.policiesDir } : {}),
            ...(plan.auditDir ? { keepAuditDir: plan.auditDir } : {}),
          },
        );
        if (controller.signal.aborted && !signal?.aborted)
          markError(record, `trial exceeded ${TRIAL_TIMEOUT_MS} ms and was killed`);
        if (!signal?.aborted) write(record, task.scenario);
        if (record.error) errors++;
      } finally {
        clearTimeout(timer);
        running.delete(controller);
      }
      done++;
      progress();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.jobs, tasks.length)) }, worker));
  } finally {
    signal?.removeEventListener("abort", onAbort);
    factory.dispose();
  }
  progress(true);
  const result = {
    records,
    interrupted: signal?.aborted ?? false,
    wallMs: Date.now() - started,
    interpreters,
  };
  writeManifest(plan, result, { hostSudo: sudo, servers });
  return result;
}

function notRunRecord(runId: string, config: string, scenario: Scenario, reason: string): TrialRecord {
  return {
    runId,
    config,
    ...caseFields(scenario),
    suite: suiteOfScenario(scenario),
    trial: 0,
    fired: null,
    passed: null,
    evidence: [],
    stoppedBy: null,
    isError: false,
    latencyMs: null,
    startMs: null,
    durationMs: 0,
    responseBytes: 0,
    responseSha256: "",
    sinkContacts: 0,
    sinkBytes: 0,
    sinkSha256: "",
    containment: null,
    error: null,
    notRun: reason,
    l3: null,
  };
}

/**
 * Trials in parallel when --jobs is not given. A trial is not CPU-bound all the way: it waits on
 * process start-ups, the sink's drain and the server's answers. Measured on 2 cores (C0 and C-full,
 * 164 trials, two rounds): --jobs 2, 3 and 4 took 30.7, 27.1 and 26.2 s at the same CPU time (51 s),
 * and 4 is the CPU-bound floor there. So twice the CPUs this process may use, at most 4 more than
 * them, and at most one trial per 256 MiB of free memory (a trial's world, proxy and server).
 */
export function defaultJobs(cpus = availableParallelism(), freeBytes = freemem()): number {
  const byCpu = Math.min(2 * cpus, cpus + 4);
  const byMemory = Math.floor(freeBytes / (256 * 1024 * 1024));
  return Math.max(1, Math.min(byCpu, byMemory));
}

export const DEFAULT_JOBS = defaultJobs();
