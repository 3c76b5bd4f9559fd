/**
 * The report page, `index.html`: one offline file (the stylesheet, the figures as inline SVG and
 * the page's script inlined, the data embedded through `scriptJson`) built from the summary and
 * the trial records. Tables are HTML (sortable), each figure downloads as SVG or PNG, and the
 * cases table opens every trial of a case under every config.
 */
import { CAVEAT_LABELS, caveatLabels, caveats } from "../caveats.js";
import type { Summary } from "../summarize.js";
import type { TrialRecord } from "../trial.js";
import { DOWNLOAD_SCRIPT, figure, heatMapSvg, latencySvg, paperSvg, ratesSvg } from "./charts.js";
import { PAGE_SCRIPT } from "./client.js";
import { escapeHtml, para, scriptJson } from "./html.js";
import { type PageData, type PaperRow, pageData } from "./model.js";
import {
  endingsTable,
  errorTables,
  heatMap,
  heatRows,
  latencyTables,
  layerTables,
  type SectionContext,
  section,
  tableOne,
} from "./sections.js";
import { PAGE_STYLE } from "./style.js";
import { peersHtml, realServersHtml, suitesHtml } from "./suites.js";

export interface PageInput {
  summary: Summary;
  records: TrialRecord[];
  paperRow: (config: string) => PaperRow | undefined;
  paperLatency: Record<string, number>;
  /** Why our oracles are stricter than the paper's, one paragraph each. */
  stricter: string[];
}

const option = (value: string, text = value) =>
  `<option value="${escapeHtml(value)}">${escapeHtml(text)}</option>`;

/** The cases table's skeleton: filters and headers; the script fills the rows from `data`. */
function casesSection(data: PageData): string {
  const categories = [...new Set(data.cases.map((c) => c[1]))].sort();
  // The core set first, then the other suites by name.
  const suites = [...new Set(data.cases.map((c) => c[12]))].sort(
    (a, b) => Number(b === "core") - Number(a === "core") || a.localeCompare(b),
  );
  const head = ["case", "title", "category", "suite", "kind", "server · tool"]
    .map((h) => `<th scope="col" aria-sort="none"><button type="button">${escapeHtml(h)}</button></th>`)
    .concat(
      data.trialConfigs.map(
        (c) =>
          `<th scope="col" aria-sort="none" data-config="${escapeHtml(c)}"><button type="button">${escapeHtml(c)}</button></th>`,
      ),
    )
    .join("");
  return `${para("Each cell: attacks, trials fired / trials judged (0 is prevented) and the layer that stopped them; benign cases, trials failed / trials. Suite: core is the paper's set (the core manifest); extension and external cases, and the other suites, are never compared with Table 1. Open a case (click its row, or its name and Enter) for its title, note and arguments, the kernel's denials after the call under each config, and its trials under each config: verdict, evidence, the layer and rule that stopped it, how it ended, any error, latency and the response's size and sha256.", "note")}<form class="filters" id="case-filters" role="search" aria-label="Filter the cases">
<label>Category <select id="f-category">${option("", "all")}${categories.map((c) => option(c)).join("")}</select></label>
<label>Suite <select id="f-suite">${option("", "all")}${suites.map((c) => option(c)).join("")}</select></label>
<label>Config <select id="f-config">${option("", "all")}${data.trialConfigs.map((c) => option(c)).join("")}</select></label>
<label>Outcome (some trial) <select id="f-outcome">${option("", "any")}${option("fired", "attack fired")}${option("stopped", "attack stopped")}${option("benign-failed", "benign failed")}${option("error", "trial error")}</select></label>
<label>Search <input type="search" id="f-text" placeholder="case, title, server, tool or tag"></label>
<button type="reset">Clear</button>
<output id="case-count" aria-live="polite"></output>
</form>
<div class="scroll"><table id="cases-table" class="sortable cases"><caption>Cases, per config.</caption>
<thead><tr>${head}</tr></thead><tbody></tbody></table></div>
`;
}

/** The figures (inline SVG, each downloadable), the heat map's table under its figure. */
function chartsSection(ctx: SectionContext, data: PageData, labels: string): string {
  const rows = heatRows(ctx);
  const heat = figure(
    "heat-map",
    "APR and FPR by category × config",
    heatMapSvg(ctx.configs, rows),
    "",
    "wide",
  );
  return `${para("Each figure downloads as SVG (vector, for a paper) or PNG (twice its size). Colours are the Okabe-Ito palette; bar series differ by pattern too, heat-map cells carry their value.", "note")}<div class="charts">
${figure("rates", "APR, V-APR, FPR per config (95% Wilson interval)", ratesSvg(data))}${figure(
  "paper",
  "Ours vs the paper's Table 1 (APR, V-APR)",
  paperSvg(data),
  labels ? para(`${labels} See the caveats above Table 1.`, "note") : "",
)}${figure(
  "latency-cdf",
  "Tool call latency, benign cases (CDF per config)",
  latencySvg(data),
  para("One panel per config on the same axis; the quantiles are in the latency table.", "note"),
  "wide",
)}${heat}${heat ? `<details class="wide"><summary>The heat map as a table</summary>${heatMap(ctx, rows)}</details>` : ""}
</div>
`;
}

/** How the run differs from the paper's benchmark, each caveat under its label (caveats.ts). */
function caveatBox(summary: Summary): string {
  const list = caveats(summary);
  if (list.length === 0) return "";
  const items = list.map(
    (c) =>
      `<p data-caveat="${escapeHtml(c.kind)}"><strong>${escapeHtml(CAVEAT_LABELS[c.kind])}</strong> ${escapeHtml(c.text)}</p>`,
  );
  return `<div class="caveat" role="note">${items.join("\n")}</div>\n`;
}

/** [anchor, label in the contents, heading, body]; a section without a body is left out. */
function sections(input: PageInput, ctx: SectionContext, data: PageData): [string, string, string, string][] {
  const { summary } = input;
  const caveat = caveatBox(summary);
  return [
    [
      "table1",
      "Table 1",
      "Defense effectiveness, beside the paper's Table 1",
      summary.cases
        ? `${caveat}${tableOne(ctx)}<h3>Why these oracles are stricter than the paper's</h3>\n${input.stricter.map((p) => para(p, "note")).join("")}`
        : caveat,
    ],
    ["charts", "Charts", "Charts", chartsSection(ctx, data, caveatLabels(caveats(summary)))],
    ["latency", "Latency", "Latency", latencyTables(ctx)],
    [
      "layers",
      "Layers and endings",
      "Which layer stopped the attacks, and how they ended",
      layerTables(ctx) + endingsTable(ctx),
    ],
    ["cases", "Cases", "Cases", casesSection(data)],
    ["suites", "Suites", "Suites beside the core (not part of the paper comparison)", suitesHtml(summary)],
    [
      "real",
      "Real servers",
      "Real servers (suite real, not part of the paper comparison)",
      realServersHtml(summary.realServers),
    ],
    ["peers", "Peers", "Peers, side by side", peersHtml(summary.peers)],
    ["errors", "Errors", "Trial errors and cases not run", errorTables(summary)],
  ];
}

export function renderPage(input: PageInput): string {
  const { summary } = input;
  const data = pageData(summary, input.records, input.paperRow);
  const ctx: SectionContext = {
    summary,
    records: input.records,
    configs: data.configs,
    paperRow: input.paperRow,
    paperLatency: input.paperLatency,
  };
  const runId = escapeHtml(summary.runId);
  const counts = `${summary.cases} core cases (${summary.attacks} attacks, ${summary.benign} benign), ${summary.trials} trial run(s) per config. Viable attacks (the oracle fires under C0 in most trials): ${summary.viable ?? "– (C0 not in this run)"}. Distinct hidden behaviours (server · tool groups of hidden attacks): ${summary.hiddenGroups}.`;
  const present = sections(input, ctx, data).filter(([, , , body]) => body);
  const toc = present.map(([id, label]) => `<a href="#${id}">${escapeHtml(label)}</a>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MCPGuard benchmark — ${runId}</title>
<style>
${PAGE_STYLE}</style>
</head>
<body>
<header>
<h1>MCPGuard benchmark — run ${runId}</h1>
<p class="lede">${escapeHtml(counts)}</p>
<nav class="toc" aria-label="Contents">${toc}</nav>
</header>
<main>
${present.map(([id, , title, body]) => section(id, title, body)).join("")}</main>
<footer>${para("Built from trials.ndjson by mcpguard report, like summary.md, summary.json and results.csv beside this file.", "note")}</footer>
<script>
const data = ${scriptJson(data)};
${DOWNLOAD_SCRIPT}${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
