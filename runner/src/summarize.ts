/**
 * Summarize: trial records -> the metrics of DESIGN.md ("Metrics") and `summary.json` of the
 * results contract. Everything here is computed from the records alone, so a report can always be
 * rebuilt from `trials.ndjson`.
 */

import { suiteOf } from "./coreSet.js";
import {
  type EndingCounts,
  isUnjudged,
  preventionEndings,
  type TrialError,
  trialErrors,
} from "./outcomes.js";
import { type PeersBlock, summarizePeers } from "./peersReport.js";
import { type PrecisionBlock, summarizePrecision } from "./precision.js";
import { type RealServersBlock, summarizeRealServers } from "./realReport.js";
import { caseHashes } from "./records.js";
import { type Interval, quantile, tInterval, wilson } from "./stats.js";
import type { TrialRecord } from "./trial.js";

/** The configs in the order of the design, for tables and for a deterministic summary. */
export const CONFIG_ORDER = ["C0", "C-AB", "C-app", "C-ebpf", "C-full", "C-AB+ebpf"];

export function sortConfigs(names: string[]): string[] {
  const rank = (n: string) => {
    const i = CONFIG_ORDER.indexOf(n);
    return i === -1 ? CONFIG_ORDER.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/**
 * Attacks that did not fire although no layer denied the call or changed its result: the server
 * failed on its own, or lacked what it wanted (a secret withheld at spawn, a kernel deny).
 */
export const NO_DECISION = "no decision recorded";

/** The pseudo-config of trials that reach the server without the proxy (latency baseline only). */
export const DIRECT = "direct";

export interface Counts {
  attacks: number;
  viable: number | null;
  /** Attack cases whose oracle fired in none of their trials. */
  blocked: number;
  benign: number;
  /** Benign cases whose expect failed in at least one trial. */
  failed: number;
}

export interface Latency {
  n: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  mean: number | null;
  sd: number | null;
}

export interface ConfigSummary extends Counts {
  apr: Interval | null;
  vapr: Interval | null;
  fpr: Interval | null;
  /** The same metrics as mean ± t-interval across trial runs (null with one run). */
  aprRuns: Interval | null;
  vaprRuns: Interval | null;
  fprRuns: Interval | null;
  latencyMs: Latency;
  startMs: Latency;
  l3: Record<string, string> | null;
  byCategory: Record<string, Counts & { apr: Interval | null }>;
  byVisibility: Record<string, Counts & { apr: Interval | null }>;
  /** Attack trials whose oracle did not fire, by the layer the audit log shows denying the call. */
  stoppedBy: Record<string, number>;
  /** Distinct hidden behaviours (server · tool groups of hidden attacks) in which no case fired. */
  hiddenGroupsBlocked: number;
  /** The kernel's denials beside the credited layers (absent in summaries written before them). */
  kernel?: KernelDenialCounts;
}

/**
 * Core trials of a config with a kernel denial after the call (layers.ts): `decided`, the kernel
 * denial was the deciding layer; `besideDecision`, a decision record decided and the kernel denied
 * something the runtime did not survive as well; `survived`, every denial was survived (start-up
 * target, runtime probe, or the call's outcome held). Records written before the denials were kept
 * are not counted.
 */
export interface KernelDenialCounts {
  trials: number;
  decided: number;
  besideDecision: number;
  survived: number;
}

export interface CaseResult {
  id: string;
  config: string;
  kind: "attack" | "benign";
  category: string;
  visibility: string | null;
  trials: number;
  fired?: number;
  failed?: number;
  viable?: boolean | null;
  stoppedBy?: string | null;
  /** The rule of that layer's decision (`l2.listing.secrets`), as the audit log names it. */
  stoppedRule?: string | null;
  /** The case's suite (coreSet.ts) when its records say it: `core`, `extension`, `external`, a category. */
  suite?: string;
  /**
   * The kernel's denials after the call in the case's trials, `backend:syscall target`, those that
   * could decide first, then the survived ones with why (`(survived: runtime probe)`); at most
   * {@link MAX_CASE_DENIALS}. Absent when none, or in runs written before they were kept.
   */
  kernelDenials?: string[];
}

/** Kernel denials listed per case result. */
export const MAX_CASE_DENIALS = 6;

/** {@link KernelDenialCounts} of a config's trials. */
export function kernelDenialCounts(trials: readonly TrialRecord[]): KernelDenialCounts {
  const out: KernelDenialCounts = { trials: 0, decided: 0, besideDecision: 0, survived: 0 };
  for (const r of trials) {
    const call = (r.kernelDenials ?? []).filter((d) => d.when === "call");
    if (call.length === 0) continue;
    out.trials++;
    const open = call.some((d) => d.survived === null);
    if (!open) out.survived++;
    else if (r.decision) out.besideDecision++;
    else out.decided++;
  }
  return out;
}

/** The distinct kernel denials after the call across a case's trials (see {@link CaseResult.kernelDenials}). */
export function caseKernelDenials(trials: readonly TrialRecord[]): string[] | undefined {
  const open = new Set<string>();
  const survived = new Set<string>();
  for (const r of trials)
    for (const d of r.kernelDenials ?? []) {
      if (d.when !== "call") continue;
      const text = `${d.backend}:${d.syscall} ${d.target}`;
      if (d.survived === null) open.add(text);
      else survived.add(`${text} (survived: ${d.survived})`);
    }
  const all = [...open, ...[...survived].filter((t) => !open.has(t.replace(/ \(survived: .*\)$/, "")))];
  return all.length ? all.slice(0, MAX_CASE_DENIALS) : undefined;
}

/** One config's results on a suite beside the core (e.g. the benign corpus). */
export interface SuiteConfigSummary extends Counts {
  apr: Interval | null;
  fpr: Interval | null;
  fprRuns: Interval | null;
  latencyMs: Latency;
  /** Cases and cases that failed (benign) or fired in some trial (attacks), per server. */
  byServer: Record<string, Counts>;
  /**
   * Attack trials that did not fire, by the layer the audit log shows acting first (as the core's
   * `stoppedBy`); absent in summaries written before it was kept.
   */
  stoppedBy?: Record<string, number>;
  /** The same trials by layer and rule (`L2 l2.pin.changed`): which layer caught what. */
  stoppedByRule?: Record<string, number>;
}

export interface SuiteSummary {
  cases: number;
  attacks: number;
  benign: number;
  configs: Record<string, SuiteConfigSummary>;
  /** What the layers break on the suite's benign cases (precision.ts); null without benign cases. */
  precision?: PrecisionBlock | null;
}

/** How long one suite's trials took: every trial run (direct trials and trial errors included). */
export interface SuiteTime {
  trials: number;
  /** The sum of the trials' durations, world to verdict; with `--jobs` above 1 they overlap, so it exceeds the wall time. */
  trialSeconds: number;
  medianTrialMs: number | null;
}

/**
 * The top-level counts and `configs` cover the core set only (the paper's cases by
 * runner/core-manifest.json, whose Table 1 they are compared with; coreSet.ts). Other cases are
 * summarized per suite in `suites` (their category, `extension`, `external`), and are listed with the
 * rest in `caseResults`.
 */
export interface Summary {
  runId: string;
  trials: number;
  cases: number;
  attacks: number;
  benign: number;
  viable: number | null;
  hiddenGroups: number;
  configs: Record<string, ConfigSummary>;
  suites: Record<string, SuiteSummary>;
  direct: Latency | null;
  caseResults: CaseResult[];
  /** The sha256 of each case's scenario file, by case id, as the records carry it (compare checks them). */
  caseHashes?: Record<string, string>;
  /** Set by `bench merge --partial`: why the merged shards are not one whole run. */
  partial?: string;
  notRun: { id: string; config: string; reason: string }[];
  /**
   * Configs of the run that ran no trial at all, with why (a config the host cannot enforce, a
   * peer sandbox not installed): not run, never zero. Absent in summaries written before.
   */
  configsNotRun?: Record<string, string>;
  /** Trials that ended in an error (outcomes.ts); attacks among them are not judged. */
  errors: TrialError[];
  /** Per suite (`core` first, then the other categories): the trials run and how long they took. */
  time?: Record<string, SuiteTime>;
  /** Per config, how the core suite's prevented attack trials ended. */
  endings: Record<string, EndingCounts>;
  /** The real suite's block (realReport.ts), or null when the run has no real case. */
  realServers: RealServersBlock | null;
  /** The peer configs beside C-full (peersReport.ts), or null when the run has no peer. */
  peers: PeersBlock | null;
}

/** A suite's attack trials that did not fire, by the layer and by the layer and rule that acted first. */
export function stoppedCounts(
  trials: readonly TrialRecord[],
): Required<Pick<SuiteConfigSummary, "stoppedBy" | "stoppedByRule">> {
  const stoppedBy: Record<string, number> = {};
  const stoppedByRule: Record<string, number> = {};
  for (const r of trials) {
    if (r.kind !== "attack" || r.fired !== false) continue;
    const layer = r.stoppedBy ?? NO_DECISION;
    stoppedBy[layer] = (stoppedBy[layer] ?? 0) + 1;
    const rule = r.stoppedBy && r.stoppedRule ? `${layer} ${r.stoppedRule}` : layer;
    stoppedByRule[rule] = (stoppedByRule[rule] ?? 0) + 1;
  }
  return { stoppedBy, stoppedByRule };
}

/** Quantiles, mean and sd of latency samples (nulls when there are none). */
export function latencyStats(values: number[]): Latency {
  const n = values.length;
  if (n === 0) return { n, p50: null, p95: null, p99: null, mean: null, sd: null };
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : 0;
  return {
    n,
    p50: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    p99: quantile(values, 0.99),
    mean,
    sd,
  };
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

/** Attack case ids whose oracle fired in a majority of the C0 trials; null when C0 did not run. */
export function viableSet(records: TrialRecord[]): Set<string> | null {
  const c0 = records.filter((r) => r.config === "C0" && r.kind === "attack" && !r.notRun);
  if (c0.length === 0) return null;
  const viable = new Set<string>();
  for (const [id, trials] of groupBy(c0, (r) => r.id)) {
    if (trials.filter((r) => r.fired).length * 2 > trials.length) viable.add(id);
  }
  return viable;
}

function mostCommon(values: (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [v, c] of counts) {
    if (c > bestCount) {
      best = v;
      bestCount = c;
    }
  }
  return best;
}

function counts(records: TrialRecord[], viable: Set<string> | null): Counts {
  const attacks = groupBy(
    records.filter((r) => r.kind === "attack"),
    (r) => r.id,
  );
  const benign = groupBy(
    records.filter((r) => r.kind === "benign"),
    (r) => r.id,
  );
  return {
    attacks: attacks.size,
    viable: viable ? [...attacks.keys()].filter((id) => viable.has(id)).length : null,
    blocked: [...attacks.values()].filter((trials) => trials.every((r) => !r.fired)).length,
    benign: benign.size,
    failed: [...benign.values()].filter((trials) => trials.some((r) => !r.passed)).length,
  };
}

function pooledApr(records: TrialRecord[]): Interval | null {
  const attacks = records.filter((r) => r.kind === "attack");
  return wilson(attacks.filter((r) => !r.fired).length, attacks.length);
}

function perRun(records: TrialRecord[], rate: (trials: TrialRecord[]) => number | null): Interval | null {
  const runs = [...groupBy(records, (r) => String(r.trial)).values()]
    .map(rate)
    .filter((v): v is number => v !== null);
  return tInterval(runs);
}

/** The same summary whatever order the records come in (a merged run equals an unsharded one). */
function canonicalOrder(records: TrialRecord[]): TrialRecord[] {
  const rank = new Map(sortConfigs([...new Set(records.map((r) => r.config))]).map((c, i) => [c, i]));
  return [...records].sort(
    (a, b) =>
      (rank.get(a.config) ?? 0) - (rank.get(b.config) ?? 0) || a.id.localeCompare(b.id) || a.trial - b.trial,
  );
}

/** {@link SuiteTime} of every suite that ran a trial, the core first. */
export function suiteTimes(records: TrialRecord[]): Record<string, SuiteTime> {
  const time: Record<string, SuiteTime> = {};
  const suites = [
    ...groupBy(
      records.filter((r) => !r.notRun),
      suiteOf,
    ),
  ].sort(([a], [b]) => Number(b === "core") - Number(a === "core") || a.localeCompare(b));
  for (const [suite, trials] of suites) {
    const durations = trials.map((r) => r.durationMs);
    time[suite] = {
      trials: trials.length,
      trialSeconds: durations.reduce((sum, ms) => sum + ms, 0) / 1000,
      medianTrialMs: quantile(durations, 0.5),
    };
  }
  return time;
}

/** Configs whose every record is "not run" (and none a direct trial), with the first reason. */
export function configsNotRunOf(records: readonly TrialRecord[]): Record<string, string> {
  const out: Record<string, string> = {};
  const ran = new Set(records.filter((r) => !r.notRun).map((r) => r.config));
  for (const config of sortConfigs([...new Set(records.map((r) => r.config))])) {
    if (ran.has(config) || config === DIRECT) continue;
    const why = records.find((r) => r.config === config && r.notRun)?.notRun;
    if (why) out[config] = why;
  }
  return out;
}

/**
 * What did not run, once each: a config the host could not enforce is one entry (`configsNotRun`,
 * with how many cases it would have run), and the cases listed are only those not run for their own
 * reasons (PE-02 where host sudo is usable) under configs that did run.
 */
export function notRunEntries(summary: Pick<Summary, "notRun" | "configsNotRun">): {
  configs: { config: string; reason: string; cases: number }[];
  cases: Summary["notRun"];
} {
  const whole = summary.configsNotRun ?? {};
  return {
    configs: Object.entries(whole).map(([config, reason]) => ({
      config,
      reason,
      cases: new Set(summary.notRun.filter((n) => n.config === config).map((n) => n.id)).size,
    })),
    cases: summary.notRun.filter((n) => !Object.hasOwn(whole, n.config)),
  };
}

function withDenials(trials: readonly TrialRecord[]): Pick<CaseResult, "kernelDenials"> {
  const denials = caseKernelDenials(trials);
  return denials ? { kernelDenials: denials } : {};
}

export function summarize(runId: string, unordered: TrialRecord[]): Summary {
  const records = canonicalOrder(unordered);
  // An attack trial with an error is not judged: out of every count and rate (listed in `errors`).
  const run = records.filter((r) => !r.notRun && !isUnjudged(r));
  const notRun = records
    .filter((r) => r.notRun)
    .map((r) => ({ id: r.id, config: r.config, reason: r.notRun as string }));
  const viable = viableSet(run);
  const configsNotRun = configsNotRunOf(records);
  const all = run.filter((r) => r.config !== DIRECT);
  // The core set (coreSet.ts): the manifest's cases; extensions and external files are suites of their own.
  const measured = all.filter((r) => suiteOf(r) === "core");
  const ids = new Set(measured.map((r) => r.id));
  const attackIds = new Set(measured.filter((r) => r.kind === "attack").map((r) => r.id));
  const benignIds = new Set(measured.filter((r) => r.kind === "benign").map((r) => r.id));
  const hiddenGroups = new Set(
    measured
      .filter((r) => r.kind === "attack" && r.visibility === "hidden")
      .map((r) => `${r.server}·${r.tool}`),
  );

  const configs: Record<string, ConfigSummary> = {};
  const caseResults: CaseResult[] = [];
  for (const config of sortConfigs([...new Set(all.map((r) => r.config))])) {
    const recs = measured.filter((r) => r.config === config);
    const attacks = recs.filter((r) => r.kind === "attack");
    const viableAttacks = viable ? attacks.filter((r) => viable.has(r.id)) : [];
    const benign = recs.filter((r) => r.kind === "benign");
    const rateOf = (trials: TrialRecord[], hit: (r: TrialRecord) => boolean) =>
      trials.length === 0 ? null : trials.filter(hit).length / trials.length;

    const byCategory: ConfigSummary["byCategory"] = {};
    for (const [category, trials] of groupBy(recs, (r) => r.category)) {
      byCategory[category] = { ...counts(trials, viable), apr: pooledApr(trials) };
    }
    const byVisibility: ConfigSummary["byVisibility"] = {};
    for (const [visibility, trials] of groupBy(attacks, (r) => r.visibility ?? "none")) {
      byVisibility[visibility] = { ...counts(trials, viable), apr: pooledApr(trials) };
    }
    const stoppedBy: Record<string, number> = {};
    for (const r of attacks) {
      if (r.fired) continue;
      const layer = r.stoppedBy ?? NO_DECISION;
      stoppedBy[layer] = (stoppedBy[layer] ?? 0) + 1;
    }
    const groups = groupBy(
      attacks.filter((r) => r.visibility === "hidden"),
      (r) => `${r.server}·${r.tool}`,
    );

    configs[config] = {
      ...counts(recs, viable),
      apr: pooledApr(attacks),
      vapr: viable ? wilson(viableAttacks.filter((r) => !r.fired).length, viableAttacks.length) : null,
      fpr: wilson(benign.filter((r) => !r.passed).length, benign.length),
      aprRuns: perRun(attacks, (t) => rateOf(t, (r) => !r.fired)),
      vaprRuns: viable ? perRun(viableAttacks, (t) => rateOf(t, (r) => !r.fired)) : null,
      fprRuns: perRun(benign, (t) => rateOf(t, (r) => !r.passed)),
      latencyMs: latencyStats(benign.map((r) => r.latencyMs).filter((v): v is number => v !== null)),
      startMs: latencyStats(recs.map((r) => r.startMs).filter((v): v is number => v !== null)),
      l3: recs.find((r) => r.l3)?.l3 ?? null,
      byCategory,
      byVisibility,
      stoppedBy,
      hiddenGroupsBlocked: [...groups.values()].filter((trials) => trials.every((r) => !r.fired)).length,
      kernel: kernelDenialCounts(recs),
    };
  }

  for (const [config, recs] of groupBy(all, (r) => r.config)) {
    for (const [id, trials] of groupBy(recs, (r) => r.id)) {
      const first = trials[0] as TrialRecord;
      if (first.kind === "attack") {
        caseResults.push({
          id,
          config,
          kind: "attack",
          category: first.category,
          ...(first.suite ? { suite: first.suite } : {}),
          visibility: first.visibility,
          trials: trials.length,
          fired: trials.filter((r) => r.fired).length,
          viable: viable ? viable.has(id) : null,
          stoppedBy: mostCommon(trials.filter((r) => !r.fired).map((r) => r.stoppedBy)),
          stoppedRule: mostCommon(trials.filter((r) => !r.fired).map((r) => r.stoppedRule ?? null)),
          ...withDenials(trials),
        });
      } else {
        caseResults.push({
          id,
          config,
          kind: "benign",
          category: first.category,
          ...(first.suite ? { suite: first.suite } : {}),
          visibility: null,
          trials: trials.length,
          failed: trials.filter((r) => !r.passed).length,
          ...withDenials(trials),
        });
      }
    }
  }
  caseResults.sort((a, b) => a.config.localeCompare(b.config) || a.id.localeCompare(b.id));

  const suites: Record<string, SuiteSummary> = {};
  const others = all.filter((r) => suiteOf(r) !== "core");
  for (const [category, recs] of [...groupBy(others, suiteOf)].sort(([a], [b]) => a.localeCompare(b))) {
    const suiteConfigs: Record<string, SuiteConfigSummary> = {};
    for (const config of sortConfigs([...new Set(recs.map((r) => r.config))])) {
      const mine = recs.filter((r) => r.config === config);
      const benign = mine.filter((r) => r.kind === "benign");
      const byServer: Record<string, Counts> = {};
      for (const [server, trials] of [...groupBy(mine, (r) => r.server)].sort(([a], [b]) =>
        a.localeCompare(b),
      ))
        byServer[server] = counts(trials, viable);
      suiteConfigs[config] = {
        ...counts(mine, viable),
        apr: pooledApr(mine),
        fpr: wilson(benign.filter((r) => !r.passed).length, benign.length),
        fprRuns: perRun(benign, (t) =>
          t.length === 0 ? null : t.filter((r) => !r.passed).length / t.length,
        ),
        latencyMs: latencyStats(benign.map((r) => r.latencyMs).filter((v): v is number => v !== null)),
        byServer,
        ...stoppedCounts(mine),
      };
    }
    suites[category] = {
      cases: new Set(recs.map((r) => r.id)).size,
      attacks: new Set(recs.filter((r) => r.kind === "attack").map((r) => r.id)).size,
      benign: new Set(recs.filter((r) => r.kind === "benign").map((r) => r.id)).size,
      configs: suiteConfigs,
      precision: summarizePrecision(recs, Object.keys(suiteConfigs)),
    };
  }
  const direct = run.filter((r) => r.config === DIRECT);
  return {
    runId,
    trials: Math.max(0, ...run.map((r) => r.trial)),
    cases: ids.size,
    attacks: attackIds.size,
    benign: benignIds.size,
    viable: viable ? [...attackIds].filter((id) => viable.has(id)).length : null,
    hiddenGroups: hiddenGroups.size,
    configs,
    direct: direct.length
      ? latencyStats(direct.map((r) => r.latencyMs).filter((v): v is number => v !== null))
      : null,
    suites,
    caseResults,
    caseHashes: caseHashes(records),
    notRun,
    ...(Object.keys(configsNotRun).length ? { configsNotRun } : {}),
    errors: trialErrors(records),
    time: suiteTimes(records),
    endings: preventionEndings(all),
    realServers: summarizeRealServers(all),
    peers: summarizePeers(configs, suites, caseResults, notRun),
  };
}
