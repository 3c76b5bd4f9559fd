/**
 * `mcpguard compare <baseline summary.json> <current summary.json>`: the difference per config and
 * metric, with the intervals of both runs, failing on a regression beyond the thresholds. Writes a
 * JUnit XML file for CI test reporters.
 */
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defineCommand, UsageError } from "@mcpguard/proxy/args";
import { z } from "zod";
import { readJsonFile } from "./jsonFile.js";
import { readRecords } from "./records.js";
import { isCoreCategory } from "./scenario.js";
import { type Interval, wilson } from "./stats.js";
import { type CaseResult, DIRECT, type Summary, sortConfigs } from "./summarize.js";
import type { TrialRecord } from "./trial.js";

export interface Thresholds {
  /** Largest allowed drop of V-APR, in percentage points. */
  maxVaprDrop: number;
  /** Largest allowed rise of FPR, in percentage points. */
  maxFprRise: number;
  /** Largest allowed rise of the p50 call latency, in percent of the baseline. */
  maxP50Rise: number;
  /** Most trial errors the current run may have (a trial whose session or server failed proves nothing). */
  maxErrors: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { maxVaprDrop: 0, maxFprRise: 0, maxP50Rise: 50, maxErrors: 0 };

export interface Row {
  config: string;
  /** `FPR <suite>`: the FPR on a suite beside the core (the benign corpus). */
  metric: "APR" | "V-APR" | "FPR" | "p50 ms" | "errors" | `FPR ${string}`;
  baseline: string;
  current: string;
  delta: string;
  /** Why this row fails, or null. */
  regression: string | null;
  /** Why this row is not compared (a config not run in one of the runs), when it is not. */
  skipped?: string;
}

const pct = (i: Interval | null | undefined) =>
  i ? `${(i.value * 100).toFixed(1)}% [${(i.lo * 100).toFixed(1)}, ${(i.hi * 100).toFixed(1)}]` : "–";
const pp = (a: Interval | null | undefined, b: Interval | null | undefined) =>
  a && b ? (b.value - a.value) * 100 : null;
const signed = (v: number | null, unit: string) =>
  v === null ? "–" : `${v >= 0 ? "+" : ""}${v.toFixed(unit === "%" ? 0 : 1)}${unit}`;

/** One row for the trial errors of each run: the current run may have at most `maxErrors`. */
export function errorRow(baseline: Summary, current: Summary, maxErrors: number): Row {
  // Summaries written before errors were recorded have none to report.
  const b = baseline.errors?.length ?? 0;
  const c = current.errors?.length ?? 0;
  return {
    config: "all",
    metric: "errors",
    baseline: String(b),
    current: String(c),
    delta: `${c - b >= 0 ? "+" : ""}${c - b}`,
    regression: c > maxErrors ? `${c} trial error(s) in the current run (allowed ${maxErrors})` : null,
  };
}

/**
 * The FPR of every suite beside the core that both runs measured, per config both ran: a rise
 * beyond `maxFprRise` is a regression, as on the core.
 */
export function suiteFprRows(baseline: Summary, current: Summary, t: Thresholds): Row[] {
  const rows: Row[] = [];
  for (const [name, suite] of Object.entries(current.suites ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const before = baseline.suites?.[name];
    if (!before) continue;
    for (const config of sortConfigs(Object.keys(suite.configs))) {
      const b = before.configs[config];
      const c = suite.configs[config];
      if (!b?.benign || !c?.benign) continue;
      const fpr = pp(b.fpr, c.fpr);
      rows.push({
        config,
        metric: `FPR ${name}`,
        baseline: pct(b.fpr),
        current: pct(c.fpr),
        delta: signed(fpr, " pp"),
        regression:
          fpr !== null && fpr > t.maxFprRise + 1e-9
            ? `FPR on ${name} rose ${fpr.toFixed(1)} pp (allowed ${t.maxFprRise})`
            : null,
      });
    }
  }
  return rows;
}

/**
 * How much slower the current run's machine was than the baseline's, read off the two runs'
 * `direct` trials: the same first calls with no proxy on the way, which no change to the proxy
 * moves. Their ratio of p50s when the current one is higher as a config's would be called a
 * regression (by more than `maxP50Rise` percent) or beyond the two medians' noise; 1 otherwise, when
 * the current machine was faster (comparing unscaled is then the lenient side), or when a run has no
 * direct trials. CI runners of one kind differ in speed: the committed baseline and a run on a slower
 * VM of the same kind (builds a few commits apart, every verdict the same) had direct p50s of 4.2
 * and 11.1 ms, and the configs' p50s rose 1.0 to 2.2 times. Scaling by the direct trials is a
 * generous allowance, never a stricter check: a config that got slower by more than the machine did
 * is still caught; a smaller regression needs a baseline from the same kind of machine.
 */
export function machineScale(baseline: Summary, current: Summary, maxP50Rise: number): number {
  const b = baseline.direct?.p50;
  const c = current.direct?.p50;
  if (!b || !c || c <= b) return 1;
  const noise = medianNoise(baseline.direct, current.direct);
  return c - b > noise || c / b > 1 + maxP50Rise / 100 ? c / b : 1;
}

/** The row of the runs' direct trials: the control that {@link machineScale} reads. */
function directRow(baseline: Summary, current: Summary, scale: number): Row | undefined {
  const bp = baseline.direct?.p50;
  const cp = current.direct?.p50;
  if (bp == null || cp == null) return undefined;
  const noise = medianNoise(baseline.direct, current.direct);
  return {
    config: DIRECT,
    metric: "p50 ms",
    baseline: bp.toFixed(3),
    current: cp.toFixed(3),
    delta:
      `${signed(bp > 0 ? ((cp - bp) / bp) * 100 : null, "%")}${noise > 0 ? ` (noise ±${noise.toFixed(1)} ms)` : ""}` +
      (scale === 1
        ? ""
        : `: a slower machine, the configs' p50 are compared with the baseline's ×${scale.toFixed(2)}`),
    regression: null,
  };
}

export function compareSummaries(baseline: Summary, current: Summary, t: Thresholds): Row[] {
  const rows: Row[] = [errorRow(baseline, current, t.maxErrors ?? 0)];
  const scale = machineScale(baseline, current, t.maxP50Rise);
  const direct = directRow(baseline, current, scale);
  if (direct) rows.push(direct);
  const notRunBefore = notRunConfigs(baseline);
  const notRunNow = notRunConfigs(current);
  for (const config of sortConfigs([
    ...new Set([
      ...Object.keys(baseline.configs),
      ...Object.keys(current.configs),
      ...notRunBefore.keys(),
      ...notRunNow.keys(),
    ]),
  ])) {
    // A config one run could not enforce is not comparable: never a rate of zero, never a regression.
    const whyBefore = notRunBefore.get(config);
    const whyNow = notRunNow.get(config);
    if (whyBefore !== undefined || whyNow !== undefined) {
      rows.push({
        config,
        metric: "V-APR",
        baseline: whyBefore !== undefined ? `not run: ${whyBefore}` : pct(baseline.configs[config]?.vapr),
        current: whyNow !== undefined ? `not run: ${whyNow}` : pct(current.configs[config]?.vapr),
        delta: "–",
        regression: null,
        skipped: `not comparable: not run in the ${whyNow !== undefined ? "current run" : "baseline"} (${whyNow ?? whyBefore})`,
      });
      continue;
    }
    const b = baseline.configs[config];
    const c = current.configs[config];
    if (!b || !c) {
      rows.push({
        config,
        metric: "V-APR",
        baseline: b ? pct(b.vapr) : "absent",
        current: c ? pct(c.vapr) : "absent",
        delta: "–",
        regression: c ? null : "the config is missing from the current run",
      });
      continue;
    }
    const apr = pp(b.apr, c.apr);
    rows.push({
      config,
      metric: "APR",
      baseline: pct(b.apr),
      current: pct(c.apr),
      delta: signed(apr, " pp"),
      regression: null,
    });
    const vapr = pp(b.vapr, c.vapr);
    rows.push({
      config,
      metric: "V-APR",
      baseline: pct(b.vapr),
      current: pct(c.vapr),
      delta: signed(vapr, " pp"),
      regression:
        vapr !== null && -vapr > t.maxVaprDrop + 1e-9
          ? `V-APR dropped ${(-vapr).toFixed(1)} pp (allowed ${t.maxVaprDrop})`
          : null,
    });
    const fpr = pp(b.fpr, c.fpr);
    rows.push({
      config,
      metric: "FPR",
      baseline: pct(b.fpr),
      current: pct(c.fpr),
      delta: signed(fpr, " pp"),
      regression:
        fpr !== null && fpr > t.maxFprRise + 1e-9
          ? `FPR rose ${fpr.toFixed(1)} pp (allowed ${t.maxFprRise})`
          : null,
    });
    // On a machine of another speed, the baseline's latencies as they would be on this one.
    const raw = b.latencyMs?.p50 ?? null;
    const bp = raw === null ? null : raw * scale;
    const cp = c.latencyMs?.p50 ?? null;
    const rise = bp && cp !== null ? ((cp - bp) / bp) * 100 : null;
    const sd = b.latencyMs?.sd;
    const noise = medianNoise(
      b.latencyMs && { n: b.latencyMs.n, sd: sd == null ? sd : sd * scale },
      c.latencyMs,
    );
    // A rise past the threshold that the runs' own spread explains is reported, not failed.
    const withinNoise = bp !== null && cp !== null && noise > 0 && cp - bp <= noise;
    const scaled = scale === 1 ? "" : ` ×${scale.toFixed(2)}`;
    rows.push({
      config,
      metric: "p50 ms",
      baseline:
        raw === null
          ? "–"
          : `${raw.toFixed(3)}${scaled && bp !== null ? `${scaled} = ${bp.toFixed(3)}` : ""}`,
      current: cp === null ? "–" : cp.toFixed(3),
      delta: `${signed(rise, "%")}${noise > 0 ? ` (noise ±${noise.toFixed(1)} ms)` : ""}`,
      regression:
        rise !== null && rise > t.maxP50Rise + 1e-9 && !withinNoise
          ? `p50 latency rose ${rise.toFixed(0)}%${scaled ? ` over the baseline's${scaled} (a slower machine)` : ""} (allowed ${t.maxP50Rise}%)`
          : null,
    });
  }
  rows.push(...suiteFprRows(baseline, current, t));
  return rows;
}

/**
 * How far two runs' p50 latencies may differ by chance: two standard errors of the difference of
 * the medians, each median's about 1.2533 sd / sqrt(n) (its large-sample error for a normal
 * spread; a heavier tail only widens it). Per-trial latencies are first calls of fresh servers, and
 * with more trials than cores in parallel their spread is mostly how the CPU was shared: two runs of
 * the same build here differed by 74% and 120% at the p50 of 21 calls each, with sd 10-17 ms. 0 when
 * a summary lacks sd or n (a threshold alone then decides).
 */
export function medianNoise(
  b: { sd?: number | null; n?: number | null } | null | undefined,
  c: { sd?: number | null; n?: number | null } | null | undefined,
): number {
  const error = (l: typeof b) =>
    l?.sd != null && l.n != null && l.n > 0 ? (1.2533 * l.sd) / Math.sqrt(l.n) : null;
  const eb = error(b);
  const ec = error(c);
  if (eb === null || ec === null) return 0;
  return 2 * Math.sqrt(eb * eb + ec * ec);
}

/**
 * Configs a run could not enforce, with why: summary.json's `configsNotRun`, a config marked so, or
 * one whose every case was recorded "not run" (summaries written before `configsNotRun`).
 */
export function notRunConfigs(summary: Summary): Map<string, string> {
  const out = new Map<string, string>(Object.entries(summary.configsNotRun ?? {}));
  for (const [config, c] of Object.entries(summary.configs)) {
    const why = (c as { notRun?: unknown }).notRun;
    if (typeof why === "string" && why) out.set(config, why);
  }
  const ran = new Set([
    ...(summary.caseResults ?? []).map((r) => r.config),
    ...(summary.errors ?? []).map((e) => e.config),
  ]);
  for (const n of summary.notRun ?? [])
    if (!ran.has(n.config) && !out.has(n.config) && n.config !== DIRECT) out.set(n.config, n.reason);
  return out;
}

const pairKey = (config: string, id: string) => `${config}\t${id}`;

/** What a run holds, as compare checks it: its configs, its cases (with their sha256) and the trials of each. */
interface Shape {
  configs: Set<string>;
  notRun: Map<string, string>;
  cases: Set<string>;
  hashes: Record<string, string>;
  /** Trials per config and case: judged ones and those an error left unjudged. */
  trials: Map<string, number>;
  /** Config and case pairs recorded "not run" (PE-02 where sudo works). */
  casesNotRun: Set<string>;
}

function shapeOf(summary: Summary): Shape {
  const notRun = notRunConfigs(summary);
  const trials = new Map<string, number>();
  for (const r of summary.caseResults) trials.set(pairKey(r.config, r.id), r.trials);
  for (const e of summary.errors ?? [])
    if (e.counted === "not judged" && e.config !== DIRECT)
      trials.set(pairKey(e.config, e.id), (trials.get(pairKey(e.config, e.id)) ?? 0) + 1);
  const cases = new Set([
    ...summary.caseResults.map((r) => r.id),
    ...(summary.errors ?? []).filter((e) => e.config !== DIRECT).map((e) => e.id),
    ...(summary.notRun ?? []).map((n) => n.id),
  ]);
  return {
    configs: new Set([...summary.caseResults.map((r) => r.config), ...Object.keys(summary.configs)]),
    notRun,
    cases,
    hashes: summary.caseHashes ?? {},
    trials,
    casesNotRun: new Set(
      (summary.notRun ?? []).filter((n) => !notRun.has(n.config)).map((n) => pairKey(n.config, n.id)),
    ),
  };
}

const listed = (ids: Iterable<string>, most = 5) => {
  const all = [...ids].sort();
  return `${all.slice(0, most).join(", ")}${all.length > most ? `, … ${all.length - most} more` : ""}`;
};
const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Whether two runs compare like with like, and the intersection they share. */
export interface Identity {
  /** Each way the runs differ in what they ran; empty when they are the same. */
  problems: string[];
  /** What the check could not see (runs without case hashes) or set aside (cases not run). */
  notes: string[];
  /** The configs compared (the --configs filter, or every config of both runs), not-run ones included. */
  configs: string[];
  /** Config and case pairs both runs judged alike: same case bytes, same number of trials. */
  pairs: Set<string>;
  /** What the intersection leaves out of each run. */
  leftOut: {
    baselineCases: number;
    currentCases: number;
    configs: string[];
    /** Case results (config and case) whose trials differ, and their trials in each run. */
    pairs: number;
    baselineTrials: number;
    currentTrials: number;
  };
}

/**
 * Checks identity before numbers: the same cases (by id, and by the sha256 of each case's file when
 * both runs recorded it), the same configs (or those of `configs`), the same trials per case and
 * config. Configs not run in a run are not comparable, and not a difference.
 */
export function checkIdentity(baseline: Summary, current: Summary, configs?: string[]): Identity {
  const b = shapeOf(baseline);
  const c = shapeOf(current);
  const problems: string[] = [];
  const notes: string[] = [];
  const allB = new Set([...b.configs, ...b.notRun.keys()]);
  const allC = new Set([...c.configs, ...c.notRun.keys()]);
  let compared: string[];
  const leftOutConfigs: string[] = [];
  if (configs) {
    for (const config of configs) {
      if (!allB.has(config)) problems.push(`the baseline has no config ${config}`);
      if (!allC.has(config)) problems.push(`the current run has no config ${config}`);
    }
    compared = configs.filter((x) => allB.has(x) && allC.has(x));
    leftOutConfigs.push(...configs.filter((x) => !compared.includes(x)));
  } else {
    const onlyB = [...allB].filter((x) => !allC.has(x));
    const onlyC = [...allC].filter((x) => !allB.has(x));
    if (onlyB.length) problems.push(`the current run lacks config ${sortConfigs(onlyB).join(", ")}`);
    if (onlyC.length) problems.push(`the baseline lacks config ${sortConfigs(onlyC).join(", ")}`);
    compared = [...allB].filter((x) => allC.has(x));
    leftOutConfigs.push(...onlyB, ...onlyC);
  }
  compared = sortConfigs(compared);

  const missing = [...b.cases].filter((id) => !c.cases.has(id));
  const extra = [...c.cases].filter((id) => !b.cases.has(id));
  if (missing.length)
    problems.push(
      `the current run lacks ${missing.length} of the baseline's ${b.cases.size} cases (${listed(missing)})`,
    );
  if (extra.length)
    problems.push(`the current run has ${count(extra.length, "case")} the baseline lacks (${listed(extra)})`);
  const hashedB = Object.keys(b.hashes).length > 0;
  const hashedC = Object.keys(c.hashes).length > 0;
  if (!hashedB || !hashedC) {
    const which =
      !hashedB && !hashedC
        ? "neither run carries"
        : !hashedB
          ? "the baseline carries no"
          : "the current run carries no";
    notes.push(
      `Cases compared by id only: ${which} case hashes (summary.json \`caseHashes\`, written by runs since they were kept).`,
    );
  }
  const changed = [...b.cases].filter(
    (id) => c.cases.has(id) && b.hashes[id] && c.hashes[id] && b.hashes[id] !== c.hashes[id],
  );
  if (changed.length)
    problems.push(
      `${count(changed.length, "case")} differ in content, the sha256 of the scenario file (${listed(changed)})`,
    );
  const common = [...b.cases].filter((id) => c.cases.has(id) && !changed.includes(id)).sort();

  const pairs = new Set<string>();
  const uneven: string[] = [];
  let baselineTrials = 0;
  let currentTrials = 0;
  const caseNotRun: string[] = [];
  for (const config of compared) {
    if (b.notRun.has(config) || c.notRun.has(config)) continue;
    for (const id of common) {
      const key = pairKey(config, id);
      if (b.casesNotRun.has(key) || c.casesNotRun.has(key)) {
        if (b.trials.has(key) || c.trials.has(key) || (b.casesNotRun.has(key) && c.casesNotRun.has(key)))
          caseNotRun.push(`${id} under ${config}`);
        continue;
      }
      const tb = b.trials.get(key) ?? 0;
      const tc = c.trials.get(key) ?? 0;
      if (tb === tc) {
        if (tb > 0) pairs.add(key);
        continue;
      }
      uneven.push(`${id} under ${config}: ${tb} in the baseline, ${tc} in the current run`);
      baselineTrials += tb;
      currentTrials += tc;
    }
  }
  if (uneven.length)
    problems.push(
      `trials per case differ in ${count(uneven.length, "case result")} (${uneven.slice(0, 3).join("; ")}${uneven.length > 3 ? "; …" : ""})`,
    );
  if (caseNotRun.length)
    notes.push(
      `Not comparable, not run in a run: ${caseNotRun.slice(0, 8).join(", ")}${caseNotRun.length > 8 ? ", …" : ""}.`,
    );
  if (baseline.partial) notes.push(`The baseline is partial: ${baseline.partial}.`);
  if (current.partial) notes.push(`The current run is partial: ${current.partial}.`);
  for (const config of compared) {
    const why = c.notRun.get(config) ?? b.notRun.get(config);
    if (why !== undefined)
      notes.push(
        `${config} is not comparable: not run in the ${c.notRun.has(config) ? "current run" : "baseline"} (${why}).`,
      );
  }
  return {
    problems,
    notes,
    configs: compared,
    pairs,
    leftOut: {
      baselineCases: b.cases.size - common.length,
      currentCases: c.cases.size - common.length,
      configs: sortConfigs([...new Set(leftOutConfigs)]),
      pairs: uneven.length,
      baselineTrials,
      currentTrials,
    },
  };
}

/** The sentence that says what an --allow-subset comparison left out; null when it left out nothing. */
export function leftOutLine(identity: Identity): string | null {
  const l = identity.leftOut;
  const parts: string[] = [];
  if (l.baselineCases || l.currentCases)
    parts.push(`${l.baselineCases} of the baseline's cases and ${l.currentCases} of the current run's`);
  if (l.configs.length) parts.push(`${count(l.configs.length, "config")} (${l.configs.join(", ")})`);
  if (l.pairs)
    parts.push(
      `${count(l.pairs, "case result")} whose trials differ (${l.baselineTrials} baseline and ${l.currentTrials} current trials)`,
    );
  return parts.length
    ? `Restricted to what both runs ran (--allow-subset): left out ${parts.join(", ")}.`
    : null;
}

/**
 * A summary seen through the comparison: only the compared configs and, when `pairs` is given (cases
 * left out), its rates recomputed from the case results of those pairs, as summarize pools them.
 */
export function restrictSummary(summary: Summary, configs: string[], pairs: Set<string> | null): Summary {
  const inPairs = (r: { config: string; id: string }) => pairs === null || pairs.has(pairKey(r.config, r.id));
  const results = summary.caseResults.filter((r) => configs.includes(r.config) && inPairs(r));
  const rates = (mine: CaseResult[]) => {
    const attacks = mine.filter((r) => r.kind === "attack");
    const viable = attacks.filter((r) => r.viable === true);
    const benign = mine.filter((r) => r.kind === "benign");
    const sum = (rs: CaseResult[], f: (r: CaseResult) => number) => rs.reduce((n, r) => n + f(r), 0);
    return {
      apr: wilson(
        sum(attacks, (r) => r.trials - (r.fired ?? 0)),
        sum(attacks, (r) => r.trials),
      ),
      vapr: attacks.some((r) => r.viable !== null && r.viable !== undefined)
        ? wilson(
            sum(viable, (r) => r.trials - (r.fired ?? 0)),
            sum(viable, (r) => r.trials),
          )
        : null,
      fpr: wilson(
        sum(benign, (r) => r.failed ?? 0),
        sum(benign, (r) => r.trials),
      ),
    };
  };
  const keep = <T>(record: Record<string, T>) =>
    Object.fromEntries(Object.entries(record).filter(([config]) => configs.includes(config)));
  const configsView = keep(summary.configs);
  const suites: Summary["suites"] = {};
  for (const [name, suite] of Object.entries(summary.suites ?? {})) {
    const suiteConfigs = keep(suite.configs);
    if (pairs !== null)
      for (const [config, s] of Object.entries(suiteConfigs))
        suiteConfigs[config] = {
          ...s,
          fpr: rates(results.filter((r) => r.config === config && r.category === name)).fpr,
        };
    suites[name] = { ...suite, configs: suiteConfigs };
  }
  if (pairs !== null)
    for (const [config, s] of Object.entries(configsView))
      configsView[config] = {
        ...s,
        ...rates(results.filter((r) => r.config === config && isCoreCategory(r.category))),
      };
  return {
    ...summary,
    configs: configsView,
    suites,
    caseResults: results,
    errors: (summary.errors ?? []).filter(
      (e) => e.config === DIRECT || (configs.includes(e.config) && inPairs(e)),
    ),
    notRun: (summary.notRun ?? []).filter((n) => configs.includes(n.config)),
  };
}

/** One config and case compared across the runs. */
export interface CaseComparison {
  config: string;
  id: string;
  kind: "attack" | "benign";
  baseline: string;
  current: string;
  /** The verdict changed: passed and failed, or fired and prevented. */
  flipped: boolean;
  /** Why this case fails the comparison, or null. */
  regression: string | null;
  /** The trials behind the current verdict (and the baseline's, when its trials.ndjson is there). */
  evidence: string[];
}

function verdict(r: CaseResult): { state: string; text: string } {
  if (r.kind === "attack") {
    const fired = r.fired ?? 0;
    const state = fired > 0 ? "fired" : "prevented";
    const by = fired === 0 && r.stoppedBy ? ` by ${r.stoppedBy}` : "";
    return { state, text: `${state}${by} (fired in ${fired}/${r.trials})` };
  }
  const failed = r.failed ?? 0;
  const state = failed > 0 ? "failed" : "passed";
  return { state, text: `${state} (failed ${failed}/${r.trials})` };
}

/** One trial's verdict and what the oracle saw, for the evidence of a flipped case. */
export function trialLine(r: TrialRecord): string {
  const state =
    r.kind === "attack"
      ? r.fired === true
        ? "fired"
        : r.fired === false
          ? "prevented"
          : "not judged"
      : r.passed
        ? "passed"
        : "failed";
  const by =
    r.kind === "attack" && r.fired === false && r.stoppedBy
      ? ` by ${r.stoppedBy}${r.stoppedRule ? ` ${r.stoppedRule}` : ""}`
      : "";
  const seen = r.evidence.length ? `, oracle saw ${r.evidence.join(", ")}` : ", oracle saw nothing";
  const error = r.error ? `, error: ${(r.error.split("\n")[0] ?? "").slice(0, 120)}` : "";
  return `trial ${r.trial} ${state}${by}${seen}${error}`;
}

/**
 * Every config and case both runs judged alike, compared: a flip that makes a defended case fire or
 * a benign case fail is a regression while the aggregate's threshold allows no change (the default);
 * under C0 an attack that stops firing changes the viable set, which is reported, not failed.
 */
export function compareCases(
  baseline: Summary,
  current: Summary,
  pairs: Set<string>,
  t: Thresholds,
  trials: { baseline?: TrialRecord[]; current?: TrialRecord[] } = {},
): CaseComparison[] {
  const index = (s: Summary) => new Map(s.caseResults.map((r) => [pairKey(r.config, r.id), r]));
  const before = index(baseline);
  const now = index(current);
  const byPair = (records: TrialRecord[] | undefined, key: string) =>
    (records ?? []).filter((r) => pairKey(r.config, r.id) === key).sort((x, y) => x.trial - y.trial);
  const out: CaseComparison[] = [];
  for (const key of pairs) {
    const b = before.get(key);
    const c = now.get(key);
    if (!b || !c) continue;
    const vb = verdict(b);
    const vc = verdict(c);
    const flipped = vb.state !== vc.state;
    const worse = flipped && (vc.state === "fired" || vc.state === "failed");
    let regression: string | null = null;
    if (worse && c.kind === "benign" && t.maxFprRise === 0)
      regression = `${c.id} under ${c.config}: passed → failed`;
    if (worse && c.kind === "attack" && c.config !== "C0" && t.maxVaprDrop === 0)
      regression = `${c.id} under ${c.config}: prevented → fired`;
    const evidence = flipped
      ? [
          ...byPair(trials.current, key).map((r) => `current ${trialLine(r)}`),
          ...byPair(trials.baseline, key).map((r) => `baseline ${trialLine(r)}`),
        ]
      : [];
    out.push({
      config: c.config,
      id: c.id,
      kind: c.kind,
      baseline: vb.text,
      current: vc.text,
      flipped,
      regression,
      evidence,
    });
  }
  const order = sortConfigs([...new Set(out.map((x) => x.config))]);
  return out.sort((x, y) => order.indexOf(x.config) - order.indexOf(y.config) || x.id.localeCompare(y.id));
}

/** The case-by-case part of the Markdown: what flipped, with its trials. */
function renderCases(cases: CaseComparison[]): string[] {
  const flipped = cases.filter((c) => c.flipped);
  const ids = new Set(cases.map((c) => c.id)).size;
  const configs = new Set(cases.map((c) => c.config)).size;
  const lines = [
    "### Case by case",
    "",
    `${count(cases.length, "case result")} compared (${count(ids, "case")} × ${count(configs, "config")}); ${flipped.length} flipped.`,
    "",
  ];
  if (flipped.length) {
    lines.push("| case | config | baseline | current | verdict | trials |", "|---|---|---|---|---|---|");
    for (const c of flipped)
      lines.push(
        `| ${c.id} | ${c.config} | ${c.baseline} | ${c.current} | ${c.regression ? "❌ regression" : c.config === "C0" && c.kind === "attack" ? "viable set changed" : "flipped"} | ${c.evidence.join("<br>").replace(/\|/g, "\\|") || "–"} |`,
      );
    lines.push("");
  }
  return lines;
}

export function renderComparison(
  rows: Row[],
  baseline: Summary,
  current: Summary,
  extra: { identity?: Identity; cases?: CaseComparison[] } = {},
): string {
  const cases = extra.cases ?? [];
  const failed = [...rows.filter((r) => r.regression), ...cases.filter((c) => c.regression)];
  const restricted = extra.identity ? leftOutLine(extra.identity) : null;
  const identity = extra.identity
    ? [
        restricted ??
          `Same cases${extra.identity.notes.some((n) => n.startsWith("Cases compared by id only")) ? " (by id)" : " (by id and sha256)"}, configs and trials per case in both runs.`,
        ...extra.identity.notes,
        "",
      ]
    : [];
  const lines = [
    `## mcpguard compare: ${baseline.runId} → ${current.runId}`,
    "",
    `Baseline ${baseline.trials} trial run(s), current ${current.trials}. Intervals: 95% Wilson on pooled trials.`,
    "",
    ...identity,
    "| config | metric | baseline | current | Δ | verdict |",
    "|---|---|---|---|---:|---|",
    ...rows.map(
      (r) =>
        `| ${r.config} | ${r.metric} | ${r.baseline} | ${r.current} | ${r.delta} | ${r.regression ? `❌ ${r.regression}` : r.skipped ? r.skipped : "ok"} |`,
    ),
    "",
    ...(extra.cases ? renderCases(cases) : []),
    failed.length ? `**${failed.length} regression(s).**` : "No regression beyond the thresholds.",
    "",
  ];
  return lines.join("\n");
}

const xml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderJunit(rows: Row[], perCase?: CaseComparison[]): string {
  const failures = rows.filter((r) => r.regression).length;
  const skipped = rows.filter((r) => !r.regression && r.skipped).length;
  const cases = rows.map((r) => {
    const name = xml(`${r.config} ${r.metric}`);
    const detail = xml(`baseline ${r.baseline}, current ${r.current}, delta ${r.delta}`);
    if (r.regression)
      return `    <testcase classname="mcpguard.compare" name="${name}"><failure message="${xml(r.regression)}">${detail}</failure></testcase>`;
    if (r.skipped)
      return `    <testcase classname="mcpguard.compare" name="${name}"><skipped message="${xml(r.skipped)}"/></testcase>`;
    return `    <testcase classname="mcpguard.compare" name="${name}"><system-out>${detail}</system-out></testcase>`;
  });
  const suites = [
    `  <testsuite name="mcpguard compare" tests="${rows.length}" failures="${failures}" skipped="${skipped}">`,
    ...cases,
    "  </testsuite>",
  ];
  let total = rows.length;
  let totalFailures = failures;
  if (perCase) {
    const caseFailures = perCase.filter((c) => c.regression).length;
    total += perCase.length;
    totalFailures += caseFailures;
    suites.push(
      `  <testsuite name="mcpguard compare: cases" tests="${perCase.length}" failures="${caseFailures}">`,
      ...perCase.map((c) => {
        const name = xml(`${c.config} ${c.id}`);
        const detail = xml(
          `baseline ${c.baseline}, current ${c.current}${c.flipped ? " (flipped)" : ""}${c.evidence.length ? `\n${c.evidence.join("\n")}` : ""}`,
        );
        return c.regression
          ? `    <testcase classname="mcpguard.compare.cases" name="${name}"><failure message="${xml(c.regression)}">${detail}</failure></testcase>`
          : `    <testcase classname="mcpguard.compare.cases" name="${name}"><system-out>${detail}</system-out></testcase>`;
      }),
      "  </testsuite>",
    );
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites tests="${total}" failures="${totalFailures}">`,
    ...suites,
    "</testsuites>",
    "",
  ].join("\n");
}

/** What compare reads of a summary.json: checked, so a hand-edited or foreign file is refused, not misread. */
const Rate = z.looseObject({ value: z.number(), lo: z.number(), hi: z.number() }).nullable().optional();
/** A run's p50 call latency, with the spread and count its noise is judged by. */
const Latency = z
  .looseObject({
    p50: z.number().nonnegative().nullable().optional(),
    sd: z.number().nonnegative().nullable().optional(),
    n: z.number().int().nonnegative().nullable().optional(),
  })
  .nullable()
  .optional();
const ConfigRates = z.looseObject({
  apr: Rate,
  vapr: Rate,
  fpr: Rate,
  latencyMs: Latency,
});
/** One config and case of a run: what the identity check and the case-by-case comparison read. */
const ComparedCase = z.looseObject({
  id: z.string().min(1),
  config: z.string().min(1),
  kind: z.enum(["attack", "benign"]),
  category: z.string(),
  trials: z.number().int().nonnegative(),
  fired: z.number().int().nonnegative().optional(),
  failed: z.number().int().nonnegative().optional(),
  viable: z.boolean().nullable().optional(),
  stoppedBy: z.string().nullable().optional(),
});
const ComparedSummary = z.looseObject({
  runId: z.string(),
  trials: z.number().int().positive(),
  direct: Latency,
  configs: z.record(z.string(), ConfigRates),
  caseResults: z.array(ComparedCase),
  caseHashes: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
  notRun: z.array(z.looseObject({ id: z.string(), config: z.string(), reason: z.string() })).optional(),
  configsNotRun: z.record(z.string(), z.string()).optional(),
  partial: z.string().optional(),
  errors: z
    .array(
      z.looseObject({
        id: z.string(),
        config: z.string(),
        trial: z.number().int().nonnegative(),
        counted: z.string(),
      }),
    )
    .optional(),
  suites: z
    .record(
      z.string(),
      z.looseObject({
        configs: z.record(z.string(), z.looseObject({ benign: z.number().optional(), fpr: Rate })),
      }),
    )
    .optional(),
});

function readSummary(file: string): Summary {
  // The fields compare reads are checked; the rest is carried as the summary it claims to be.
  const summary = readJsonFile(file, ComparedSummary, "summary.json");
  // A summary that ran nothing (no config, none recorded as not run) would compare as "no regression".
  if (Object.keys(summary.configs).length === 0 && Object.keys(summary.configsNotRun ?? {}).length === 0)
    throw new UsageError(`${file}: no config in it, so there is nothing to compare`);
  return summary as unknown as Summary;
}

/** The trials.ndjson beside a summary.json, for the evidence of flipped cases; undefined when there is none. */
function trialsBeside(file: string): TrialRecord[] | undefined {
  const dir = dirname(file);
  return existsSync(join(dir, "trials.ndjson")) ? readRecords(dir) : undefined;
}

function threshold(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new UsageError(`--${name} must be a non-negative number, got "${value}"`);
  return n;
}

const COMPARE = defineCommand({
  name: "mcpguard compare",
  description:
    "Print the differences of two runs as Markdown and exit 1 on a regression beyond the thresholds. " +
    "Writes JUnit XML to --junit (default: compare.junit.xml beside the current summary).",
  args: [
    ["<baseline>", "the baseline run's summary.json"],
    ["<current>", "the current run's summary.json"],
  ],
  options: {
    "max-vapr-drop": {
      type: "string",
      value: "pp",
      help: `largest V-APR drop, in percentage points (default ${DEFAULT_THRESHOLDS.maxVaprDrop})`,
    },
    "max-fpr-rise": {
      type: "string",
      value: "pp",
      help: `largest FPR rise, in percentage points (default ${DEFAULT_THRESHOLDS.maxFprRise})`,
    },
    "max-p50-rise": {
      type: "string",
      value: "pct",
      help: `largest p50 latency rise, in percent (default ${DEFAULT_THRESHOLDS.maxP50Rise})`,
    },
    "max-errors": {
      type: "string",
      value: "n",
      help: `trial errors allowed in the current run (default ${DEFAULT_THRESHOLDS.maxErrors})`,
    },
    junit: { type: "string", value: "file", help: "where the JUnit XML goes" },
    configs: {
      type: "string",
      value: "list",
      help: "compare only these configs (comma-separated); each must be in both runs",
    },
    "allow-subset": {
      type: "boolean",
      help:
        "when the runs differ in cases, configs or trials per case, compare what both ran (and say what was " +
        "left out) instead of refusing with exit 2",
    },
  },
});

export function main(argv: string[]): number {
  const parsed = COMPARE.parse(argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const [baseFile, currentFile] = positionals.map((p) => resolve(p)) as [string, string];
  const baseline = readSummary(baseFile);
  const current = readSummary(currentFile);
  const thresholds: Thresholds = {
    maxVaprDrop: threshold(values["max-vapr-drop"], "max-vapr-drop", DEFAULT_THRESHOLDS.maxVaprDrop),
    maxFprRise: threshold(values["max-fpr-rise"], "max-fpr-rise", DEFAULT_THRESHOLDS.maxFprRise),
    maxP50Rise: threshold(values["max-p50-rise"], "max-p50-rise", DEFAULT_THRESHOLDS.maxP50Rise),
    maxErrors: threshold(values["max-errors"], "max-errors", DEFAULT_THRESHOLDS.maxErrors),
  };
  const filter =
    values.configs === undefined
      ? undefined
      : [...new Set(values.configs.split(",").map((c) => c.trim()))].filter(Boolean);
  if (filter && filter.length === 0) throw new UsageError("--configs needs at least one config");
  // Identity before numbers: a run of other cases, configs or trials is refused, or, with
  // --allow-subset, compared on what both ran.
  const identity = checkIdentity(baseline, current, filter);
  if (identity.problems.length && !values["allow-subset"])
    throw new UsageError(
      `the runs do not compare like with like: ${identity.problems.join("; ")}; pass --allow-subset to compare only what both ran`,
    );
  const restricted = leftOutLine(identity) !== null && identity.problems.length > 0;
  // Cases or trials left out: the rates are recomputed on what both ran; configs left out are dropped.
  const casesLeftOut =
    restricted && identity.leftOut.baselineCases + identity.leftOut.currentCases + identity.leftOut.pairs > 0;
  const pairs = casesLeftOut ? identity.pairs : null;
  const b = restrictSummary(baseline, identity.configs, pairs);
  const c = restrictSummary(current, identity.configs, pairs);
  const rows = compareSummaries(b, c, thresholds).map((r) =>
    casesLeftOut && r.metric === "p50 ms" && r.config !== DIRECT
      ? { ...r, delta: `${r.delta} (each run's whole case set: not judged)`, regression: null }
      : r,
  );
  const cases = compareCases(b, c, identity.pairs, thresholds, {
    baseline: trialsBeside(baseFile),
    current: trialsBeside(currentFile),
  });
  process.stdout.write(renderComparison(rows, b, c, { identity, cases }));
  const junit = values.junit ?? join(dirname(currentFile), "compare.junit.xml");
  try {
    writeFileSync(junit, renderJunit(rows, cases));
  } catch (error) {
    throw new UsageError(
      `cannot write the JUnit file ${junit}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return rows.some((r) => r.regression) || cases.some((x) => x.regression) ? 1 : 0;
}
