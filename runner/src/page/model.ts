/**
 * The data the report page embeds (through `scriptJson`): the charts' series, and every trial of
 * the run in a compact form for the per-case drill-down. Built from the summary and the trial
 * records alone, so `mcpguard report` rebuilds the same page from `trials.ndjson`.
 */
import { suiteOf } from "../coreSet.js";
import { isUnjudged } from "../outcomes.js";
import type { Interval } from "../stats.js";
import { type ConfigSummary, DIRECT, type Summary, sortConfigs } from "../summarize.js";
import type { TrialRecord } from "../trial.js";

export type PaperRow = { apr: number; vapr: number; fpr: string };

/** How a trial came out, for the drill-down and its filters. */
export type TrialOutcome = "fired" | "stopped" | "unjudged" | "passed" | "failed" | "not run";

/**
 * [id, category, kind, visibility, server, tool, viable (null: unknown), tags, title, note,
 * the call as JSON (the tool call's arguments, or a protocol case's steps), "arguments" or
 * "steps", suite (`core`, `extension`, `external`, or the case's category; coreSet.ts)] (title,
 * note and call empty in runs recorded before they were kept)
 */
export type CaseRow = [
  string,
  string,
  string,
  string | null,
  string,
  string,
  boolean | null,
  string,
  string,
  string,
  string,
  "arguments" | "steps",
  string,
];

/**
 * [case index, config index, trial, outcome, evidence, layer, rule, ended, error, latency ms,
 * start ms, response bytes, response sha256, sink contacts, sink bytes, cwd, not-run reason]
 */
export type TrialRow = [
  number,
  number,
  number,
  TrialOutcome,
  string[],
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number | null,
  number,
  string,
  number,
  number,
  string | null,
  string | null,
];

export interface PageData {
  runId: string;
  /** The configs of the core summary, in the design's order (charts). */
  configs: string[];
  metrics: { apr: Interval | null; vapr: Interval | null; fpr: Interval | null }[];
  paper: (PaperRow | null)[];
  /** Sorted latency samples of benign calls, per config. */
  latency: Record<string, number[]>;
  /** Every config with a trial (suites and peers included): the drill-down's columns. */
  trialConfigs: string[];
  cases: CaseRow[];
  trials: TrialRow[];
  /**
   * [case index, config index, denials]: the kernel's denials after the call in a case's trials
   * under a config, as summary.json's caseResults list them (`kernelDenials`); only where there are some.
   */
  denials: [number, number, string[]][];
}

export function outcomeOf(r: TrialRecord): TrialOutcome {
  if (r.notRun) return "not run";
  if (r.kind === "benign") return r.passed ? "passed" : "failed";
  if (isUnjudged(r)) return "unjudged";
  return r.fired ? "fired" : "stopped";
}

function latencySamples(records: TrialRecord[]): Record<string, number[]> {
  const samples = new Map<string, number[]>();
  for (const r of records) {
    if (r.kind !== "benign" || r.latencyMs === null || r.notRun) continue;
    samples.set(r.config, [...(samples.get(r.config) ?? []), r.latencyMs]);
  }
  for (const list of samples.values()) list.sort((a, b) => a - b);
  return Object.fromEntries(samples);
}

const round = (v: number | null, digits = 3) => (v === null ? null : Number(v.toFixed(digits)));

/** The cases and trials of the drill-down (the direct baseline is a latency measurement, left out). */
function drillDown(summary: Summary, records: TrialRecord[]) {
  const judged = records.filter((r) => r.config !== DIRECT);
  const trialConfigs = sortConfigs([...new Set(judged.map((r) => r.config))]);
  const viable = new Map<string, boolean | null>();
  for (const r of summary.caseResults) if (r.kind === "attack") viable.set(r.id, r.viable ?? null);
  const caseIndex = new Map<string, number>();
  const cases: CaseRow[] = [];
  // A record of each case, one that carries the case's title where any does (older runs have none).
  const byId = new Map<string, TrialRecord>();
  for (const r of judged)
    if (!byId.has(r.id) || (byId.get(r.id)?.title === undefined && r.title)) byId.set(r.id, r);
  const ids = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  for (const r of ids) {
    caseIndex.set(r.id, cases.length);
    cases.push([
      r.id,
      r.category,
      r.kind,
      r.visibility,
      r.server,
      r.tool,
      viable.get(r.id) ?? null,
      (r.tags ?? []).join(" "),
      r.title ?? "",
      r.note ?? "",
      r.steps ? JSON.stringify(r.steps, null, 2) : r.arguments ? JSON.stringify(r.arguments, null, 2) : "",
      r.steps ? "steps" : "arguments",
      suiteOf(r),
    ]);
  }
  const configIndex = new Map(trialConfigs.map((c, i) => [c, i]));
  const trials: TrialRow[] = judged
    .map(
      (r): TrialRow => [
        caseIndex.get(r.id) as number,
        configIndex.get(r.config) as number,
        r.trial,
        outcomeOf(r),
        r.evidence,
        r.stoppedBy,
        r.stoppedRule ?? null,
        r.ended ?? null,
        r.error,
        round(r.latencyMs),
        round(r.startMs, 1),
        r.responseBytes,
        r.responseSha256,
        r.sinkContacts,
        r.sinkBytes,
        r.cwd ?? null,
        r.notRun,
      ],
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const denials: [number, number, string[]][] = summary.caseResults
    .filter((r) => r.kernelDenials?.length && caseIndex.has(r.id) && configIndex.has(r.config))
    .map((r) => [
      caseIndex.get(r.id) as number,
      configIndex.get(r.config) as number,
      r.kernelDenials as string[],
    ]);
  denials.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return { trialConfigs, cases, trials, denials };
}

export function pageData(
  summary: Summary,
  records: TrialRecord[],
  paperRow: (config: string) => PaperRow | undefined,
): PageData {
  const configs = sortConfigs(Object.keys(summary.configs));
  return {
    runId: summary.runId,
    configs,
    metrics: configs.map((n) => {
      const s = summary.configs[n] as ConfigSummary;
      return { apr: s.apr, vapr: s.vapr, fpr: s.fpr };
    }),
    paper: configs.map((n) => paperRow(n) ?? null),
    latency: latencySamples(records),
    ...drillDown(summary, records),
  };
}
