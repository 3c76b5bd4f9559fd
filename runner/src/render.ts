/**
 * Render: `summary.json` -> `summary.md`, `results.csv` and `index.html` (one self-contained file,
 * its figures inline SVG: works offline). The published paper's Table 1 stands beside ours.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { CAVEAT_LABELS, caveats } from "./caveats.js";
import { suiteOf } from "./coreSet.js";
import { renderEndings, renderErrors } from "./outcomes.js";
import { renderPage } from "./page/index.js";
import { renderPeers } from "./peersReport.js";
import { renderPrecision } from "./precision.js";
import { renderRealServers } from "./realReport.js";
import type { Interval } from "./stats.js";
import {
  type ConfigSummary,
  DIRECT,
  type Latency,
  NO_DECISION,
  notRunEntries,
  type Summary,
  sortConfigs,
} from "./summarize.js";
import type { TrialRecord } from "./trial.js";

/** Table 1 of the published MCPGuard paper, and its latency table (median / p95, milliseconds). */
export const PAPER = {
  table1: {
    C0: { apr: 0.213, vapr: 0.0, fpr: "0/21" },
    "C-AB": { apr: 0.377, vapr: 0.208, fpr: "0/21" },
    "C-app": { apr: 0.426, vapr: 0.271, fpr: "0/21" },
    "C-ebpf": { apr: 0.607, vapr: 0.5, fpr: "0/21" },
    "C-full": { apr: 0.689, vapr: 0.604, fpr: "0/21" },
    "C-AB+ebpf": { apr: 0.672, vapr: 0.583, fpr: "0/21" },
  } as Record<string, { apr: number; vapr: number; fpr: string }>,
  viable: 48,
  latencyMedianMs: {
    C0: 0.362,
    "C-AB": 0.459,
    "C-app": 0.88,
    "C-ebpf": 0.52,
    "C-full": 0.85,
    "C-AB+ebpf": 0.74,
  } as Record<string, number>,
  cFullOverC0MedianMs: 0.488,
  cFullP95Ms: 1.141,
};

export const STRICTER_ORACLES = [
  "The oracles here judge effects, from the state of the world after the call: fresh random canaries found in the response, at the sink or in a written file; file content and mode; a table gone from the database. The published oracles mostly checked that a path exists, that a listener got a connection, or that a call returned without an error.",
  'So an empty file, a call that succeeds but leaks nothing, or an echoed argument is not an attack success here; and a benign case passes only when the tool worked (the expected content or effect is there), so a layer that breaks a benign tool is a false positive even when nothing was "blocked".',
  "Nine attacks the paper recorded as intrinsic failures because of oracle artefacts (FR-01 to FR-04, CL-01, EX-04, SE-01, SE-10, CL-04) really work without a defense, so a full core run's viable set here (this run's is counted above, from its C0 trials) is larger than the paper's 48: the two V-APR columns have different denominators. Canaries are drawn fresh per trial and carry no marker, so no layer can recognise them by shape.",
];

/** The paper's Table 1 row of a config (a name from the records, so an own property only). */
const paperRow = (name: string) => (Object.hasOwn(PAPER.table1, name) ? PAPER.table1[name] : undefined);

const pct = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined ? "–" : `${(v * 100).toFixed(digits)}%`;
const ci = (i: Interval | null) => (i ? `${pct(i.value)} [${pct(i.lo)}, ${pct(i.hi)}]` : "–");
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const ms = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toFixed(3));

function latencyRow(name: string, l: Latency, base: Latency | null): string {
  const rel =
    base?.p50 && l.p50 !== null
      ? `${l.p50 - base.p50 >= 0 ? "+" : ""}${(l.p50 - base.p50).toFixed(3)} ms (${(l.p50 / base.p50).toFixed(2)}×)`
      : "–";
  return `| ${name} | ${l.n} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} | ${ms(l.mean)} ± ${ms(l.sd)} | ${rel} |`;
}

/** Each suite's trials and how long they took (summaries written before this was recorded have none). */
function renderTime(summary: Summary): string[] {
  const suites = Object.entries(summary.time ?? {});
  if (suites.length === 0) return [];
  return [
    "",
    "Time per suite: every trial run, direct trials and trial errors included. Trials run in parallel (`--jobs`), so trial time adds up to more than the run's wall time, which `manifest.json` records (`wallMs`); a suite's share of the wall time is about its share of trial time.",
    "",
    "| suite | trials | trial time [s] | median trial [ms] |",
    "|---|---:|---:|---:|",
    ...suites.map(
      ([name, t]) => `| ${name} | ${t.trials} | ${t.trialSeconds.toFixed(1)} | ${ms(t.medianTrialMs)} |`,
    ),
  ];
}

export function renderMarkdown(summary: Summary, records: readonly TrialRecord[] = []): string {
  const configs = sortConfigs(Object.keys(summary.configs));
  const c = (name: string) => summary.configs[name] as ConfigSummary;
  const lines: string[] = [];
  lines.push(`# MCPGuard benchmark — run ${summary.runId}`, "");
  lines.push(
    `${summary.cases} cases (${summary.attacks} attacks, ${summary.benign} benign), ${summary.trials} trial run(s) per config. ` +
      `Viable attacks (oracle fires under C0 in most trials): ${summary.viable ?? "– (C0 not in this run)"}. ` +
      `Distinct hidden behaviours (server · tool groups of hidden attacks): ${summary.hiddenGroups}.`,
    "",
  );
  // Each caveat under the label of what it is: a partial run, configs not run, an extended run, external cases.
  for (const caveat of caveats(summary)) lines.push(`> **${CAVEAT_LABELS[caveat.kind]}** ${caveat.text}`, "");
  lines.push("## Defense effectiveness, beside the paper's Table 1", "");
  lines.push(
    "APR: attacks whose oracle did not fire / attacks. V-APR: the same over the viable attacks. FPR: benign trials whose expect failed. Brackets: 95% Wilson interval over pooled trials.",
    "",
  );
  lines.push(
    "| config | APR | V-APR | FPR | benign failed | hidden groups with no firing | paper APR | paper V-APR | paper FPR |",
    "|---|---|---|---|---:|---:|---:|---:|---:|",
  );
  for (const name of configs) {
    const s = c(name);
    const paper = paperRow(name);
    lines.push(
      `| ${name} | ${ci(s.apr)} | ${ci(s.vapr)} | ${ci(s.fpr)} | ${s.failed}/${s.benign} | ${s.hiddenGroupsBlocked}/${summary.hiddenGroups} | ${pct(paper?.apr)} | ${pct(paper?.vapr)} | ${paper?.fpr ?? "–"} |`,
    );
  }
  if (summary.trials > 1) {
    lines.push(
      "",
      "Across trial runs (mean ± 95% t-interval):",
      "",
      "| config | APR | V-APR | FPR |",
      "|---|---|---|---|",
    );
    for (const name of configs) {
      const s = c(name);
      lines.push(`| ${name} | ${ci(s.aprRuns)} | ${ci(s.vaprRuns)} | ${ci(s.fprRuns)} |`);
    }
  }
  lines.push("", "### Why these oracles are stricter than the paper's", "");
  for (const p of STRICTER_ORACLES) lines.push(p, "");

  lines.push("## Latency of the tool call as the client sees it (benign cases, ms)", "");
  lines.push(
    "| config | n | p50 | p95 | p99 | mean ± sd | p50 vs C0 |",
    "|---|---:|---:|---:|---:|---:|---:|",
  );
  const c0 = summary.configs.C0?.latencyMs ?? null;
  if (summary.direct) lines.push(latencyRow(`${DIRECT} (no proxy)`, summary.direct, c0));
  for (const name of configs)
    lines.push(latencyRow(name, c(name).latencyMs, name === "C0" ? summary.direct : c0));
  lines.push(
    "",
    `Paper (median): ${Object.entries(PAPER.latencyMedianMs)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(", ")}; C-full +${PAPER.cFullOverC0MedianMs} ms over C0, p95 ${PAPER.cFullP95Ms} ms. ` +
      "These are whole trial calls (fresh server per trial); `mcpguard bench latency` measures a long-lived session.",
    "",
  );
  lines.push(
    "Server start-up (spawn to initialized), ms:",
    "",
    "| config | n | p50 | p95 | p99 |",
    "|---|---:|---:|---:|---:|",
  );
  for (const name of configs) {
    const l = c(name).startMs;
    lines.push(`| ${name} | ${l.n} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} |`);
  }

  lines.push(...renderTime(summary));

  lines.push("", "## Per category (attack cases never fired / attacks; benign cases failed / benign)", "");
  const categories = [...new Set(configs.flatMap((n) => Object.keys(c(n).byCategory)))].sort();
  lines.push(`| category | ${configs.join(" | ")} |`, `|---|${configs.map(() => "---:").join("|")}|`);
  for (const category of categories) {
    const cells = configs.map((n) => {
      const k = c(n).byCategory[category];
      if (!k) return "–";
      const parts = [];
      if (k.attacks) parts.push(`${k.blocked}/${k.attacks}`);
      if (k.benign) parts.push(`FP ${k.failed}/${k.benign}`);
      return parts.join(", ");
    });
    lines.push(`| ${category} | ${cells.join(" | ")} |`);
  }
  lines.push("", "## Per visibility (attack cases never fired / attacks)", "");
  lines.push(`| visibility | ${configs.join(" | ")} |`, `|---|${configs.map(() => "---:").join("|")}|`);
  for (const visibility of ["argument", "hidden"]) {
    lines.push(
      `| ${visibility} | ${configs
        .map((n) => {
          const k = c(n).byVisibility[visibility];
          return k ? `${k.blocked}/${k.attacks}` : "–";
        })
        .join(" | ")} |`,
    );
  }
  lines.push(
    "",
    "## Which layer stopped the attacks (from the proxy's audit log; success judged only by the oracle)",
    "",
    `Attack trials that did not fire, by the layer that denied the call or, failing that, changed its result. "${NO_DECISION}": no layer acted on the call itself; the attack failed on its own or lacked what it wanted (a secret withheld at spawn, a kernel deny).`,
    "",
  );
  for (const name of configs) {
    const entries = Object.entries(c(name).stoppedBy).sort((a, b) => b[1] - a[1]);
    lines.push(
      `- **${name}**: ${entries.length ? entries.map(([k, v]) => `${k} ${v}`).join(", ") : "nothing stopped"}`,
    );
  }
  lines.push(...renderKernel(summary, configs));
  lines.push(...renderEndings(summary.endings, configs));
  const l3 = configs.filter((n) => c(n).l3);
  if (l3.length) {
    lines.push("", "## L3 backends", "");
    for (const name of l3) {
      lines.push(
        `- **${name}**: ${Object.entries(c(name).l3 ?? {})
          .map(([k, v]) => `${k} → ${v}`)
          .join(", ")}`,
      );
    }
  }
  lines.push(
    "",
    "## Cases",
    "",
    "Attacks: trials fired / trials (0 is prevented). Benign: trials failed / trials.",
    "",
  );
  lines.push(`| case | kind | ${configs.join(" | ")} |`, `|---|---|${configs.map(() => "---:").join("|")}|`);
  const byCase = new Map<string, Map<string, (typeof summary.caseResults)[number]>>();
  for (const r of summary.caseResults) {
    // The core set only: extension and external cases have tables of their own, never beside Table 1.
    if (suiteOf(r) !== "core") continue;
    if (!byCase.has(r.id)) byCase.set(r.id, new Map());
    byCase.get(r.id)?.set(r.config, r);
  }
  for (const [id, perConfig] of [...byCase].sort(([a], [b]) => a.localeCompare(b))) {
    const any = [...perConfig.values()][0];
    const kind =
      any?.kind === "attack" ? `${any.visibility}${any.viable === false ? ", not viable" : ""}` : "benign";
    const cells = configs.map((n) => {
      const r = perConfig.get(n);
      if (!r) return "–";
      const count = r.kind === "attack" ? r.fired : r.failed;
      const by = r.kind === "attack" && r.stoppedBy ? ` (${r.stoppedBy})` : "";
      return `${count}/${r.trials}${by}`;
    });
    lines.push(`| ${id} | ${kind} | ${cells.join(" | ")} |`);
  }
  lines.push(...renderCaseList(caseTexts(records)));
  lines.push(...renderSuites(summary));
  lines.push(...renderRealServers(summary.realServers, sortConfigs));
  lines.push(...renderPeers(summary.peers));
  lines.push(...renderErrors(summary.errors));
  const notRun = notRunEntries(summary);
  if (notRun.configs.length || notRun.cases.length) {
    lines.push("", "## Not run", "");
    // A config the host could not enforce is one line, not one per case.
    for (const n of notRun.configs)
      lines.push(`- config ${n.config} (${plural(n.cases, "case")}): not run: ${n.reason}`);
    for (const n of notRun.cases) lines.push(`- ${n.id} under ${n.config}: ${n.reason}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The kernel's denials after the call beside the credited layers, per config (core trials). */
function renderKernel(summary: Summary, configs: string[]): string[] {
  const withKernel = configs.filter((n) => summary.configs[n]?.kernel);
  if (!withKernel.some((n) => summary.configs[n]?.kernel?.trials)) return [];
  const lines = [
    "",
    "Kernel denials after the call (core trials): trials with one; of them, the kernel denial decided, a decision record decided beside it, or every denial was survived (start-up target, runtime probe, the call's outcome held).",
    "",
    "| config | trials with a denial | decided by the kernel | beside a decision | all survived |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const name of withKernel) {
    const k = summary.configs[name]?.kernel as NonNullable<ConfigSummary["kernel"]>;
    lines.push(`| ${name} | ${k.trials} | ${k.decided} | ${k.besideDecision} | ${k.survived} |`);
  }
  return lines;
}

/** Markdown inline code of any text: a fence longer than any run of backticks in it. */
function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Markdown text on one line: no line breaks, and the characters that would start markup escaped. */
const mdText = (text: string) => text.replace(/\s+/g, " ").replace(/([\\`*_[\]<>|#])/g, "\\$1");

/** What each case of the run is: its title, server and tool, the arguments it calls with, its note. */
function renderCaseList(texts: Map<string, CaseText>): string[] {
  if (texts.size === 0) return [];
  const lines = [
    "",
    "### What each case is",
    "",
    "Every case of this run (the suites' too): its title, server · tool, and the arguments (or a protocol case's steps) as the case file writes them (placeholders such as `{{workspace}}` are filled per trial).",
    "",
  ];
  for (const [id, t] of [...texts].sort(([a], [b]) => a.localeCompare(b))) {
    const args = t.steps
      ? ` Protocol steps: ${code(t.steps)}.`
      : t.arguments
        ? ` Arguments: ${code(t.arguments)}.`
        : "";
    const note = t.note ? ` ${mdText(t.note)}` : "";
    lines.push(
      `- **${mdText(id)}**: ${mdText(t.title)} (${code(t.server)} · ${code(t.tool)}).${args}${note}`,
    );
  }
  return lines;
}

/**
 * Suites beside the core (the benign corpus, ...): their own FPR per config, never mixed into the
 * paper comparison above, then the cases that failed under some config.
 */
function renderSuites(summary: Summary): string[] {
  const lines: string[] = [];
  for (const [name, suite] of Object.entries(summary.suites ?? {})) {
    const configs = sortConfigs(Object.keys(suite.configs));
    lines.push(
      "",
      `## Suite \`${name}\` (not part of the paper comparison)`,
      "",
      `${suite.cases} cases (${suite.attacks} attacks, ${suite.benign} benign). FPR: benign trials whose expect failed, 95% Wilson interval over pooled trials.`,
      "",
      "| config | benign failed | FPR | attacks never fired | latency p50 [ms] |",
      "|---|---:|---|---:|---:|",
    );
    for (const config of configs) {
      const s = suite.configs[config] as NonNullable<(typeof suite.configs)[string]>;
      lines.push(
        `| ${config} | ${s.benign ? `${s.failed}/${s.benign}` : "–"} | ${ci(s.fpr)} | ${s.attacks ? `${s.blocked}/${s.attacks}` : "–"} | ${ms(s.latencyMs.p50)} |`,
      );
    }
    lines.push(...renderSuiteStopped(suite, configs));
    const servers = [
      ...new Set(configs.flatMap((c) => Object.keys(suite.configs[c]?.byServer ?? {}))),
    ].sort();
    lines.push(
      "",
      "Benign cases failed / benign cases, per server:",
      "",
      `| server | ${configs.join(" | ")} |`,
      `|---|${configs.map(() => "---:").join("|")}|`,
    );
    for (const server of servers) {
      const cells = configs.map((c) => {
        const k = suite.configs[c]?.byServer[server];
        return k?.benign ? `${k.failed}/${k.benign}` : "–";
      });
      lines.push(`| ${server} | ${cells.join(" | ")} |`);
    }
    const failing = new Map<string, string[]>();
    for (const r of summary.caseResults) {
      if (r.category !== name) continue;
      const bad = r.kind === "benign" ? (r.failed ?? 0) > 0 : (r.fired ?? 0) > 0;
      if (!bad) continue;
      failing.set(r.id, [
        ...(failing.get(r.id) ?? []),
        `${r.config} ${r.kind === "benign" ? r.failed : r.fired}/${r.trials}`,
      ]);
    }
    lines.push(
      "",
      failing.size
        ? `Cases that failed (benign) or fired (attacks) under some config (${failing.size}):`
        : "No case failed (benign) or fired (attacks) under any config.",
    );
    if (failing.size) {
      lines.push("");
      for (const [id, where] of [...failing].sort(([a], [b]) => a.localeCompare(b)))
        lines.push(`- ${id}: ${where.join(", ")}`);
    }
    lines.push(...renderPrecision(name, suite.precision));
  }
  return lines;
}

/**
 * Which layer caught what on a suite with attacks: the attack trials that did not fire, per config,
 * by the layer and rule the audit log shows acting first.
 */
function renderSuiteStopped(suite: Summary["suites"][string], configs: string[]): string[] {
  if (suite.attacks === 0 || !configs.some((c) => suite.configs[c]?.stoppedByRule)) return [];
  const lines = [
    "",
    `Which layer stopped the attacks: attack trials that did not fire, by the layer and rule the audit log shows acting first (a deny, else a change). "${NO_DECISION}": no layer acted.`,
    "",
  ];
  for (const config of configs) {
    const entries = Object.entries(suite.configs[config]?.stoppedByRule ?? {}).sort(
      (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
    );
    lines.push(
      `- **${config}**: ${entries.length ? entries.map(([k, v]) => `${k} ${v}`).join(", ") : "nothing stopped"}`,
    );
  }
  return lines;
}

/** What the records say of each case: its title, note and arguments (the first record that has them). */
export function caseTexts(records: readonly TrialRecord[]): Map<string, CaseText> {
  const out = new Map<string, CaseText>();
  for (const r of records) {
    if (out.has(r.id) || r.title === undefined) continue;
    out.set(r.id, {
      title: r.title,
      note: r.note ?? "",
      arguments: r.arguments && !r.steps ? JSON.stringify(r.arguments) : "",
      steps: r.steps ? JSON.stringify(r.steps) : "",
      server: r.server,
      tool: r.tool,
    });
  }
  return out;
}

export interface CaseText {
  title: string;
  note: string;
  /** The tool call's arguments as compact JSON, placeholders unexpanded ("" for a case with steps). */
  arguments: string;
  /** A protocol case's steps as compact JSON ("" for a tool call). */
  steps: string;
  server: string;
  tool: string;
}

/**
 * One row per case and config. The columns after `stopped_rule` were added later, at the end so
 * that readers of the earlier columns keep working: the case's title, note and arguments (JSON;
 * empty for a protocol case, which has steps), empty for runs recorded before the trial records
 * kept them; then its suite (`core`, `extension`, `external`, or its category) and `not_run`. A
 * case that did not run under a config (a config the host could not enforce, a case not run for its
 * own reason) has a row too: `trials` 0, the verdict columns empty, and why in `not_run`, which is
 * empty on every row that ran.
 */
export function renderCsv(summary: Summary, records: readonly TrialRecord[] = []): string {
  const texts = caseTexts(records);
  const text = (id: string) => ({
    title: texts.get(id)?.title ?? "",
    note: texts.get(id)?.note ?? "",
    arguments: texts.get(id)?.arguments ?? "",
  });
  const ran = summary.caseResults.map((r) => ({
    run_id: summary.runId,
    config: r.config,
    id: r.id,
    category: r.category,
    kind: r.kind,
    visibility: r.visibility ?? "",
    trials: r.trials,
    fired: r.fired ?? "",
    failed: r.failed ?? "",
    viable: r.viable === undefined || r.viable === null ? "" : r.viable,
    stopped_by: r.stoppedBy ?? "",
    stopped_rule: r.stoppedRule ?? "",
    ...text(r.id),
    suite: suiteOf(r),
    not_run: "",
  }));
  // The case's facts from its not-run record, else from a result of the same case under another config.
  const notRun = summary.notRun.map((n) => {
    const rec = records.find((r) => r.notRun && r.config === n.config && r.id === n.id);
    const other = summary.caseResults.find((r) => r.id === n.id);
    const facts = rec ?? other;
    return {
      run_id: summary.runId,
      config: n.config,
      id: n.id,
      category: facts?.category ?? "",
      kind: facts?.kind ?? "",
      visibility: facts?.visibility ?? "",
      trials: 0,
      fired: "",
      failed: "",
      viable: "",
      stopped_by: "",
      stopped_rule: "",
      ...text(n.id),
      suite: facts ? suiteOf(facts) : "",
      not_run: n.reason,
    };
  });
  const rows = [...ran, ...notRun].sort(
    (a, b) => a.config.localeCompare(b.config) || a.id.localeCompare(b.id),
  );
  return stringify(rows, { header: true });
}

export { scriptJson } from "./page/html.js";

/** index.html: the report page (page/), from the summary and the records alone. */
export function renderHtml(summary: Summary, records: TrialRecord[]): string {
  return renderPage({
    summary,
    records,
    paperRow,
    paperLatency: PAPER.latencyMedianMs,
    stricter: STRICTER_ORACLES,
  });
}

/** Write summary.json, summary.md, results.csv and index.html into a run directory. */
export function writeReports(dir: string, summary: Summary, records: TrialRecord[]): void {
  const markdown = renderMarkdown(summary, records);
  writeFileSync(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(dir, "summary.md"), markdown);
  writeFileSync(join(dir, "results.csv"), renderCsv(summary, records));
  writeFileSync(join(dir, "index.html"), renderHtml(summary, records));
}
