/**
 * `mcpguard compare <baseline summary.json> <current summary.json>`: the difference per config and
 * metric, with the intervals of both runs, failing on a regression beyond the thresholds. Writes a
 * JUnit XML file for CI test reporters.
 */
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defineCommand, UsageError } from "@mcpguard/proxy/args";
import { z } from "zod";
import { readJsonFile } from "./jsonFile.js";
import type { Interval } from "./stats.js";
import { DIRECT, type Summary, sortConfigs } from "./summarize.js";

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
  for (const config of sortConfigs([
    ...new Set([...Object.keys(baseline.configs), ...Object.keys(current.configs)]),
  ])) {
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

export function renderComparison(rows: Row[], baseline: Summary, current: Summary): string {
  const failed = rows.filter((r) => r.regression);
  const lines = [
    `## mcpguard compare: ${baseline.runId} → ${current.runId}`,
    "",
    `Baseline ${baseline.trials} trial run(s), current ${current.trials}. Intervals: 95% Wilson on pooled trials.`,
    "",
    "| config | metric | baseline | current | Δ | verdict |",
    "|---|---|---|---|---:|---|",
    ...rows.map(
      (r) =>
        `| ${r.config} | ${r.metric} | ${r.baseline} | ${r.current} | ${r.delta} | ${r.regression ? `❌ ${r.regression}` : "ok"} |`,
    ),
    "",
    failed.length ? `**${failed.length} regression(s).**` : "No regression beyond the thresholds.",
    "",
  ];
  return lines.join("\n");
}

const xml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderJunit(rows: Row[]): string {
  const failures = rows.filter((r) => r.regression).length;
  const cases = rows.map((r) => {
    const name = xml(`${r.config} ${r.metric}`);
    const detail = xml(`baseline ${r.baseline}, current ${r.current}, delta ${r.delta}`);
    return r.regression
      ? `    <testcase classname="mcpguard.compare" name="${name}"><failure message="${xml(r.regression)}">${detail}</failure></testcase>`
      : `    <testcase classname="mcpguard.compare" name="${name}"><system-out>${detail}</system-out></testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites tests="${rows.length}" failures="${failures}">`,
    `  <testsuite name="mcpguard compare" tests="${rows.length}" failures="${failures}">`,
    ...cases,
    "  </testsuite>",
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
const ComparedSummary = z.looseObject({
  direct: Latency,
  configs: z.record(z.string(), ConfigRates).refine((c) => Object.keys(c).length > 0, "no config in it"),
  errors: z.array(z.unknown()).optional(),
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
  return readJsonFile(file, ComparedSummary, "summary.json") as unknown as Summary;
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
  const rows = compareSummaries(baseline, current, thresholds);
  process.stdout.write(renderComparison(rows, baseline, current));
  const junit = values.junit ?? join(dirname(currentFile), "compare.junit.xml");
  try {
    writeFileSync(junit, renderJunit(rows));
  } catch (error) {
    throw new UsageError(
      `cannot write the JUnit file ${junit}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return rows.some((r) => r.regression) ? 1 : 0;
}
