/**
 * What breaks: the precision of each config on a suite of benign calls (the benign corpus). Per
 * config: the FPR with its Wilson interval over pooled trials, per server and per construct class
 * (a case's tags, `class.name`: it counts in every class it has a tag of), and the causes that
 * broke benign calls, each with the cases it broke. Computed from the trial records alone.
 *
 * The cause of a failed trial is what the records show, in this order: a trial error; the rule
 * of the decision the audit log shows acting on the call (`L1: l1.sql`, `sanitizer:
 * l2.result.token`, `L3:landlock: landlock:execve`); the layer without a rule (older records); and
 * when no layer recorded anything, "L3 (no deny record)" under a config with the kernel layer (an
 * EACCES the loader did not report), else "no decision recorded" (the tool ran and its result did
 * not hold what was expected).
 */
import { type Interval, wilson } from "./stats.js";
import type { TrialRecord } from "./trial.js";

export interface PrecisionCounts {
  /** Benign cases, and the cases whose expect failed in at least one trial. */
  cases: number;
  failed: number;
  /** Benign trials, and the trials whose expect failed. */
  trials: number;
  failedTrials: number;
  /** failedTrials / trials, 95% Wilson interval. */
  fpr: Interval | null;
}

export interface Cause {
  cause: string;
  /** The layer that acted ("error", "none" when no layer recorded anything). */
  layer: string;
  trials: number;
  cases: string[];
}

export interface PrecisionConfig extends PrecisionCounts {
  byServer: Record<string, PrecisionCounts>;
  byClass: Record<string, PrecisionCounts>;
  /** Causes of the failed trials, most cases first. */
  causes: Cause[];
}

export type PrecisionBlock = Record<string, PrecisionConfig>;

export const NO_DENY_RECORD_L3 = "L3 (no deny record)";
export const NO_DECISION_RECORDED = "no decision recorded";

function precisionCounts(trials: readonly TrialRecord[]): PrecisionCounts {
  const failed = trials.filter((r) => !r.passed);
  return {
    cases: new Set(trials.map((r) => r.id)).size,
    failed: new Set(failed.map((r) => r.id)).size,
    trials: trials.length,
    failedTrials: failed.length,
    fpr: wilson(failed.length, trials.length),
  };
}

/** The cause of one failed benign trial, and the layer it belongs to. */
export function causeOf(record: TrialRecord): { cause: string; layer: string } {
  if (record.error) {
    const first = (record.error.split("\n")[0] ?? "").replace(/\/\S*\/t-\d+\//g, "<trial>/");
    return { cause: `trial error: ${first.slice(0, 100)}`, layer: "error" };
  }
  if (record.stoppedBy) {
    const rule = record.stoppedRule;
    return { cause: rule ? `${record.stoppedBy}: ${rule}` : record.stoppedBy, layer: record.stoppedBy };
  }
  if (record.l3) return { cause: NO_DENY_RECORD_L3, layer: "L3" };
  return { cause: NO_DECISION_RECORDED, layer: "none" };
}

function causes(failed: readonly TrialRecord[]): Cause[] {
  const byCause = new Map<string, Cause>();
  for (const record of failed) {
    const { cause, layer } = causeOf(record);
    const entry = byCause.get(cause) ?? { cause, layer, trials: 0, cases: [] };
    entry.trials++;
    if (!entry.cases.includes(record.id)) entry.cases.push(record.id);
    byCause.set(cause, entry);
  }
  for (const entry of byCause.values()) entry.cases.sort();
  return [...byCause.values()].sort(
    (a, b) => b.cases.length - a.cases.length || a.cause.localeCompare(b.cause),
  );
}

function grouped(
  trials: readonly TrialRecord[],
  keys: (r: TrialRecord) => readonly string[],
): Record<string, PrecisionCounts> {
  const groups = new Map<string, TrialRecord[]>();
  for (const record of trials) {
    for (const key of new Set(keys(record))) {
      const group = groups.get(key);
      if (group) group.push(record);
      else groups.set(key, [record]);
    }
  }
  return Object.fromEntries(
    [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([key, recs]) => [key, precisionCounts(recs)]),
  );
}

/** A case's construct classes: the first segment of each of its tags. */
export const classesOf = (record: TrialRecord): string[] =>
  (record.tags ?? []).map((tag) => tag.split(".")[0] as string);

/** The precision of every config on the benign trials of one suite (`configs` in the order to keep). */
export function summarizePrecision(
  records: readonly TrialRecord[],
  configs: readonly string[],
): PrecisionBlock | null {
  const benign = records.filter((r) => r.kind === "benign" && !r.notRun);
  if (benign.length === 0) return null;
  const block: PrecisionBlock = {};
  for (const config of configs) {
    const mine = benign.filter((r) => r.config === config);
    if (mine.length === 0) continue;
    block[config] = {
      ...precisionCounts(mine),
      byServer: grouped(mine, (r) => [r.server]),
      byClass: grouped(mine, classesOf),
      causes: causes(mine.filter((r) => !r.passed)),
    };
  }
  return block;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
const wilsonText = (i: Interval | null) =>
  i ? `${percent(i.value)} [${percent(i.lo)}, ${percent(i.hi)}]` : "–";
const ratio = (k: PrecisionCounts | undefined) => (k ? `${k.failed}/${k.cases}` : "–");

/** Rows of `failed/cases` per group (server or class), one column per config. */
function groupTable(
  block: PrecisionBlock,
  configs: readonly string[],
  title: string,
  pick: (c: PrecisionConfig) => Record<string, PrecisionCounts>,
): string[] {
  const keys = [...new Set(configs.flatMap((c) => Object.keys(pick(block[c] as PrecisionConfig))))].sort();
  const cases = (key: string) =>
    Math.max(...configs.map((c) => pick(block[c] as PrecisionConfig)[key]?.cases ?? 0));
  const lines = [
    "",
    `Benign cases failed / cases, per ${title}:`,
    "",
    `| ${title} | cases | ${configs.join(" | ")} |`,
    `|---|---:|${configs.map(() => "---:").join("|")}|`,
  ];
  for (const key of keys) {
    const cells = configs.map((c) => ratio(pick(block[c] as PrecisionConfig)[key]));
    lines.push(`| ${key} | ${cases(key)} | ${cells.join(" | ")} |`);
  }
  return lines;
}

/** The Markdown of a suite's precision: FPR per config, per server, per class, and what broke it. */
export function renderPrecision(name: string, block: PrecisionBlock | null | undefined): string[] {
  if (!block) return [];
  const configs = Object.keys(block);
  if (configs.length === 0) return [];
  const lines = [
    "",
    `### Precision on \`${name}\`: what the layers break`,
    "",
    "FPR: benign trials whose expect failed, 95% Wilson interval over pooled trials.",
    "",
    "| config | benign cases failed | benign trials failed | FPR |",
    "|---|---:|---:|---|",
  ];
  for (const config of configs) {
    const k = block[config] as PrecisionConfig;
    lines.push(
      `| ${config} | ${k.failed}/${k.cases} | ${k.failedTrials}/${k.trials} | ${wilsonText(k.fpr)} |`,
    );
  }
  lines.push(...groupTable(block, configs, "server", (c) => c.byServer));
  lines.push(...groupTable(block, configs, "class", (c) => c.byClass));
  lines.push("", "What broke benign calls (the rule the audit log shows, or why none does):");
  for (const config of configs) {
    const k = block[config] as PrecisionConfig;
    lines.push("", `- **${config}**:${k.causes.length ? "" : " nothing broke"}`);
    for (const c of k.causes) {
      const counts = `${plural(c.cases.length, "case")}, ${plural(c.trials, "trial")}`;
      lines.push(`  - ${c.cause} (${counts}): ${c.cases.join(", ")}`);
    }
  }
  return lines;
}
