/**
 * Render: `summary.json` -> `summary.md`, `results.csv` and `index.html` (chart.js inlined, works
 * offline). The published paper's Table 1 stands beside ours.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { renderEndings, renderErrors } from "./outcomes.js";
import { renderPeers } from "./peersReport.js";
import { precisionHtml, renderPrecision } from "./precision.js";
import { renderRealServers } from "./realReport.js";
import { isCoreCategory } from "./scenario.js";
import type { Interval } from "./stats.js";
import {
  type ConfigSummary,
  DIRECT,
  type Latency,
  NO_DECISION,
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
  "Nine attacks the paper recorded as intrinsic failures because of oracle artefacts (FR-01 to FR-04, CL-01, EX-04, SE-01, SE-10, CL-04) really work without a defense, so the viable set is 57 here and 48 there: the two V-APR columns have different denominators. Canaries are drawn fresh per trial and carry no marker, so no layer can recognise them by shape.",
];

/** The paper's Table 1 row of a config (a name from the records, so an own property only). */
const paperRow = (name: string) => (Object.hasOwn(PAPER.table1, name) ? PAPER.table1[name] : undefined);

const pct = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined ? "–" : `${(v * 100).toFixed(digits)}%`;
const ci = (i: Interval | null) => (i ? `${pct(i.value)} [${pct(i.lo)}, ${pct(i.hi)}]` : "–");
const ms = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toFixed(3));

function latencyRow(name: string, l: Latency, base: Latency | null): string {
  const rel =
    base?.p50 && l.p50 !== null
      ? `${l.p50 - base.p50 >= 0 ? "+" : ""}${(l.p50 - base.p50).toFixed(3)} ms (${(l.p50 / base.p50).toFixed(2)}×)`
      : "–";
  return `| ${name} | ${l.n} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} | ${ms(l.mean)} ± ${ms(l.sd)} | ${rel} |`;
}

export function renderMarkdown(summary: Summary): string {
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
    if (!isCoreCategory(r.category)) continue;
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
  lines.push(...renderSuites(summary));
  lines.push(...renderRealServers(summary.realServers, sortConfigs));
  lines.push(...renderPeers(summary.peers));
  lines.push(...renderErrors(summary.errors));
  if (summary.notRun.length) {
    lines.push("", "## Not run", "");
    for (const n of summary.notRun) lines.push(`- ${n.id} under ${n.config}: ${n.reason}`);
  }
  return `${lines.join("\n")}\n`;
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

export function renderCsv(summary: Summary): string {
  const rows = summary.caseResults.map((r) => ({
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
  }));
  return stringify(rows, { header: true });
}

function chartJs(): string {
  const entry = createRequire(import.meta.url).resolve("chart.js");
  const source = readFileSync(join(dirname(entry), "chart.umd.min.js"), "utf8");
  // Inlined as is: it must not end its <script> element early or open an HTML comment in it.
  if (/<\/script|<!--/i.test(source)) throw new Error(`${entry}: chart.js cannot be inlined in a <script>`);
  return source;
}

/** Text for HTML content or a quoted attribute value. */
const escapeHtml = (value: string | number) =>
  String(value).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * JSON for a JavaScript literal inside <script>: `<`, `>` and `&` escaped, so no `</script>` or
 * `<!--` in a string can end or change the element, and U+2028/U+2029 escaped for older parsers.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const PAGE_STYLE = `body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
h1, h2 { font-weight: 600; } .charts { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5rem; }
table { border-collapse: collapse; margin: 1rem 0; } th, td { border: 1px solid #ccc; padding: .3rem .6rem; text-align: right; }
th:first-child { text-align: left; } td.na { color: #999; } pre { white-space: pre-wrap; background: #f6f6f6; padding: 1rem; }
canvas { max-height: 22rem; }
`;

/** The charts, drawn from `data` (defined just before this script). */
const CHARTS_SCRIPT = `const whiskers = {
  id: "whiskers",
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((ds, i) => {
      if (!ds.intervals) return;
      const meta = chart.getDatasetMeta(i);
      meta.data.forEach((bar, j) => {
        const iv = ds.intervals[j];
        if (!iv) return;
        const y = chart.scales.y;
        const lo = y.getPixelForValue(iv.lo * 100), hi = y.getPixelForValue(iv.hi * 100);
        ctx.save(); ctx.strokeStyle = "#333"; ctx.lineWidth = 1.2; ctx.beginPath();
        ctx.moveTo(bar.x, lo); ctx.lineTo(bar.x, hi);
        ctx.moveTo(bar.x - 4, lo); ctx.lineTo(bar.x + 4, lo);
        ctx.moveTo(bar.x - 4, hi); ctx.lineTo(bar.x + 4, hi);
        ctx.stroke(); ctx.restore();
      });
    });
  },
};
const pctAxis = { y: { min: 0, max: 100, ticks: { callback: (v) => v + "%" } } };
const series = (key, label, color) => ({
  label, backgroundColor: color,
  data: data.metrics.map((m) => (m[key] ? m[key].value * 100 : null)),
  intervals: data.metrics.map((m) => m[key]),
});
new Chart(document.getElementById("rates"), {
  type: "bar",
  data: { labels: data.configs, datasets: [series("apr", "APR", "#4e79a7"), series("vapr", "V-APR", "#59a14f"), series("fpr", "FPR", "#e15759")] },
  options: { scales: pctAxis, animation: false },
  plugins: [whiskers],
});
new Chart(document.getElementById("paper"), {
  type: "bar",
  data: {
    labels: data.configs,
    datasets: [
      { label: "APR (ours)", backgroundColor: "#4e79a7", data: data.metrics.map((m) => (m.apr ? m.apr.value * 100 : null)) },
      { label: "APR (paper)", backgroundColor: "#a0cbe8", data: data.paper.map((p) => (p ? p.apr * 100 : null)) },
      { label: "V-APR (ours)", backgroundColor: "#59a14f", data: data.metrics.map((m) => (m.vapr ? m.vapr.value * 100 : null)) },
      { label: "V-APR (paper)", backgroundColor: "#8cd17d", data: data.paper.map((p) => (p ? p.vapr * 100 : null)) },
    ],
  },
  options: { scales: pctAxis, animation: false },
});
const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];
new Chart(document.getElementById("latency"), {
  type: "line",
  data: {
    datasets: Object.entries(data.latency).map(([name, xs], i) => ({
      label: name, borderColor: palette[i % palette.length], pointRadius: 0, stepped: true, fill: false,
      data: xs.map((x, k) => ({ x, y: ((k + 1) / xs.length) * 100 })),
    })),
  },
  options: {
    animation: false, parsing: false,
    scales: { x: { type: "logarithmic", title: { display: true, text: "ms" } }, y: { min: 0, max: 100, title: { display: true, text: "% of calls" } } },
  },
});
`;

function latencySamples(records: TrialRecord[]): Record<string, number[]> {
  const samples = new Map<string, number[]>();
  for (const r of records) {
    if (r.kind !== "benign" || r.latencyMs === null || r.notRun) continue;
    samples.set(r.config, [...(samples.get(r.config) ?? []), r.latencyMs]);
  }
  for (const list of samples.values()) list.sort((a, b) => a - b);
  return Object.fromEntries(samples);
}

/** The APR heat map's rows: category × config. */
function heatRows(summary: Summary, configs: string[]): string {
  const categories = [
    ...new Set(configs.flatMap((n) => Object.keys(summary.configs[n]?.byCategory ?? {}))),
  ].sort();
  return categories
    .map((category) => {
      const cells = configs
        .map((n) => {
          const k = summary.configs[n]?.byCategory[category];
          if (!k?.apr) return '<td class="na">–</td>';
          const v = Number(k.apr.value);
          const title = escapeHtml(`${k.blocked}/${k.attacks} attack cases never fired`);
          return `<td style="background:hsl(${Math.round(v * 120)},65%,${80 - v * 25}%)" title="${title}">${escapeHtml(pct(v, 0))}</td>`;
        })
        .join("");
      return `<tr><th>${escapeHtml(category)}</th>${cells}</tr>`;
    })
    .join("\n");
}

export function renderHtml(summary: Summary, records: TrialRecord[], markdown: string): string {
  const configs = sortConfigs(Object.keys(summary.configs));
  const data = {
    configs,
    metrics: configs.map((n) => {
      const s = summary.configs[n] as ConfigSummary;
      return { apr: s.apr, vapr: s.vapr, fpr: s.fpr };
    }),
    paper: configs.map((n) => paperRow(n) ?? null),
    latency: latencySamples(records),
  };
  const runId = escapeHtml(summary.runId);
  const counts = `${summary.cases} cases (${summary.attacks} attacks, ${summary.benign} benign), ${summary.trials} trial run(s), viable attacks: ${summary.viable ?? "–"}.`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>MCPGuard benchmark — ${runId}</title>
<style>
${PAGE_STYLE}</style>
</head>
<body>
<h1>MCPGuard benchmark — run ${runId}</h1>
<p>${escapeHtml(counts)}</p>
<div class="charts">
<div><h2>APR, V-APR, FPR per config (95% Wilson interval)</h2><canvas id="rates"></canvas></div>
<div><h2>Ours vs the paper's Table 1 (APR, V-APR)</h2><canvas id="paper"></canvas></div>
<div><h2>Tool call latency, benign cases (CDF)</h2><canvas id="latency"></canvas></div>
<div><h2>APR by category × config</h2>
<table><tr><th>category</th>${configs.map((n) => `<th>${escapeHtml(n)}</th>`).join("")}</tr>
${heatRows(summary, configs)}
</table></div>
</div>
${Object.entries(summary.suites ?? {})
  .map(([name, suite]) => precisionHtml(name, suite.precision))
  .join("")}<h2>Summary</h2>
<pre>${escapeHtml(markdown)}</pre>
<script>${chartJs()}</script>
<script>
const data = ${scriptJson(data)};
${CHARTS_SCRIPT}</script>
</body>
</html>
`;
}

/** Write summary.json, summary.md, results.csv and index.html into a run directory. */
export function writeReports(dir: string, summary: Summary, records: TrialRecord[]): void {
  const markdown = renderMarkdown(summary);
  writeFileSync(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(dir, "summary.md"), markdown);
  writeFileSync(join(dir, "results.csv"), renderCsv(summary));
  writeFileSync(join(dir, "index.html"), renderHtml(summary, records, markdown));
}
