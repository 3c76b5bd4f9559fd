/**
 * The report page's static sections, as HTML tables built from the summary (the same numbers as
 * summary.md): the paper's Table 1 beside ours, latency, the layers that stopped attacks and how
 * the attacks ended, the heat map, the trial errors and the cases not run. Every value goes through
 * the cells of html.ts.
 */
import { wilson } from "../stats.js";
import { type ConfigSummary, DIRECT, NO_DECISION, notRunEntries, type Summary } from "../summarize.js";
import type { TrialRecord } from "../trial.js";
import {
  type CellLike,
  escapeHtml,
  heading,
  ms,
  numCell,
  para,
  pct,
  rateCell,
  ratioCell,
  table,
} from "./html.js";
import type { PaperRow } from "./model.js";
import { type HeatCell, type HeatRow, heatColour } from "./svg.js";

export interface SectionContext {
  summary: Summary;
  records: TrialRecord[];
  /** The core summary's configs, in the design's order. */
  configs: string[];
  paperRow: (config: string) => PaperRow | undefined;
  paperLatency: Record<string, number>;
}

const conf = (ctx: SectionContext, name: string) => ctx.summary.configs[name] as ConfigSummary;

/** Our APR, V-APR and FPR with their intervals, beside the paper's Table 1. */
export function tableOne(ctx: SectionContext): string {
  const { summary } = ctx;
  const rows = ctx.configs.map((name): CellLike[] => {
    const s = conf(ctx, name);
    const paper = ctx.paperRow(name);
    return [
      name,
      rateCell(s.apr),
      rateCell(s.vapr),
      rateCell(s.fpr),
      ratioCell(s.failed, s.benign),
      ratioCell(s.hiddenGroupsBlocked, summary.hiddenGroups),
      paper ? { text: pct(paper.apr), sort: paper.apr } : { text: "–", sort: null, cls: "na" },
      paper ? { text: pct(paper.vapr), sort: paper.vapr } : { text: "–", sort: null, cls: "na" },
      paper ? { text: paper.fpr, sort: 0 } : { text: "–", sort: null, cls: "na" },
    ];
  });
  let out = table({
    caption: "Ours (pooled trials) beside the paper's Table 1",
    note: "APR: attacks whose oracle did not fire / attacks. V-APR: the same over the viable attacks. FPR: benign trials whose expect failed. Small brackets: 95% Wilson interval over pooled trials.",
    head: [
      "config",
      "APR",
      "V-APR",
      "FPR",
      "benign cases failed",
      "hidden groups with no firing",
      "paper APR",
      "paper V-APR",
      "paper FPR",
    ],
    rows,
    sortable: true,
    id: "ours-vs-paper",
  });
  if (summary.trials > 1) {
    out += table({
      caption: "Across trial runs: mean ± 95% t-interval",
      head: ["config", "APR", "V-APR", "FPR"],
      rows: ctx.configs.map((name) => {
        const s = conf(ctx, name);
        return [name, rateCell(s.aprRuns), rateCell(s.vaprRuns), rateCell(s.fprRuns)];
      }),
      sortable: true,
    });
  }
  return out;
}

/**
 * The heat map's rows, category × config: APR of the attack cases, and for the categories with
 * benign cases their FPR (benign trials failed), so that no row is blank.
 */
export function heatRows(ctx: SectionContext): HeatRow[] {
  const { summary, configs } = ctx;
  // The attack categories, then the benign one.
  const categories = [
    ...new Set(configs.flatMap((n) => Object.keys(summary.configs[n]?.byCategory ?? {}))),
  ].sort((a, b) => Number(a === "benign") - Number(b === "benign") || a.localeCompare(b));
  const rows: HeatRow[] = [];
  const none: HeatCell = { text: "–", good: null, title: "" };
  for (const category of categories) {
    const counts = configs.map((n) => summary.configs[n]?.byCategory[category]);
    if (counts.some((k) => k?.attacks)) {
      rows.push({
        label: category,
        metric: "APR",
        cells: counts.map((k) => {
          if (!k?.apr) return none;
          const v = Number(k.apr.value);
          return {
            text: pct(v, 0),
            good: v,
            title: `${k.blocked}/${k.attacks} attack cases never fired; APR ${pct(v)} over trials`,
          };
        }),
      });
    }
    if (counts.some((k) => k?.benign)) {
      rows.push({
        label: category,
        metric: category === "benign" ? "FPR" : "FPR of its benign cases",
        cells: configs.map((n) => {
          const benign = ctx.records.filter(
            (r) => r.config === n && r.category === category && r.kind === "benign" && !r.notRun,
          );
          const failed = benign.filter((r) => !r.passed).length;
          const fpr = wilson(failed, benign.length);
          if (!fpr) return none;
          return {
            text: pct(fpr.value, 0),
            good: 1 - fpr.value,
            title: `${failed}/${benign.length} benign trials failed; FPR ${pct(fpr.value)} [${pct(fpr.lo)}, ${pct(fpr.hi)}]`,
          };
        }),
      });
    }
  }
  return rows;
}

/** The heat map as a table (the figure's numbers, for screen readers and copying). */
export function heatMap(ctx: SectionContext, rows: HeatRow[]): string {
  const body = rows.map((row) => {
    const cells = row.cells.map((cell) => {
      if (cell.good === null) return '<td class="na">–</td>';
      const { fill, ink } = heatColour(cell.good);
      return `<td style="background:${fill};color:${ink}" title="${escapeHtml(cell.title)}">${escapeHtml(cell.text)}</td>`;
    });
    return `<tr><th scope="row">${escapeHtml(row.label)} <small>${escapeHtml(row.metric)}</small></th>${cells.join("")}</tr>`;
  });
  return `<div class="scroll"><table class="heat"><caption>APR of the attack cases (higher is better) and FPR of the benign cases (lower is better), per category and config. Hover a cell for the counts.</caption>
<thead><tr><th scope="col">category</th>${ctx.configs.map((n) => `<th>${escapeHtml(n)}</th>`).join("")}</tr></thead>
<tbody>
${body.join("\n")}
</tbody></table></div>
`;
}

/** The tool call's latency per config (benign cases) and the servers' start-up. */
export function latencyTables(ctx: SectionContext): string {
  const { summary } = ctx;
  const c0 = summary.configs.C0?.latencyMs ?? null;
  const rel = (p50: number | null, base: number | null | undefined): CellLike =>
    base && p50 !== null
      ? {
          text: `${p50 - base >= 0 ? "+" : ""}${(p50 - base).toFixed(3)} ms`,
          note: `${(p50 / base).toFixed(2)}×`,
          sort: p50 - base,
        }
      : { text: "–", sort: null, cls: "na" };
  const row = (name: string, l: ConfigSummary["latencyMs"], base: number | null | undefined): CellLike[] => [
    name,
    { text: String(l.n), sort: l.n },
    numCell(l.p50),
    numCell(l.p95),
    numCell(l.p99),
    l.mean === null
      ? { text: "–", cls: "na", sort: null }
      : { text: `${ms(l.mean)} ± ${ms(l.sd)}`, sort: l.mean },
    rel(l.p50, base),
    numCell(Object.hasOwn(ctx.paperLatency, name) ? ctx.paperLatency[name] : null),
  ];
  const rows: CellLike[][] = [];
  if (summary.direct) rows.push(row(`${DIRECT} (no proxy)`, summary.direct, c0?.p50));
  for (const name of ctx.configs)
    rows.push(row(name, conf(ctx, name).latencyMs, name === "C0" ? summary.direct?.p50 : c0?.p50));
  return `${table({
    caption: "Tool call latency, benign cases [ms]",
    note: "The tool call's round trip as the client sees it. These are whole trial calls (a fresh server per trial, JIT and all); mcpguard bench latency measures a long-lived session. The paper's column is its median.",
    head: ["config", "n", "p50", "p95", "p99", "mean ± sd", "p50 vs C0", "paper median"],
    rows,
    sortable: true,
  })}${table({
    caption: "Server start-up, spawn to initialized [ms]",
    head: ["config", "n", "p50", "p95", "p99"],
    rows: ctx.configs.map((name) => {
      const l = conf(ctx, name).startMs;
      return [name, { text: String(l.n), sort: l.n }, numCell(l.p50), numCell(l.p95), numCell(l.p99)];
    }),
    sortable: true,
  })}`;
}

/** Attack cases never fired per visibility, the layers that stopped attacks, and the L3 backends. */
export function layerTables(ctx: SectionContext): string {
  const { configs } = ctx;
  const visibility = table({
    caption: "Per visibility: attack cases never fired / attack cases, and APR over trials",
    head: ["config", "argument", "APR (argument)", "hidden", "APR (hidden)"],
    rows: configs.map((name) => {
      const v = conf(ctx, name).byVisibility;
      return [
        name,
        ratioCell(v.argument?.blocked, v.argument?.attacks),
        rateCell(v.argument?.apr),
        ratioCell(v.hidden?.blocked, v.hidden?.attacks),
        rateCell(v.hidden?.apr),
      ];
    }),
    sortable: true,
  });
  const layers = [...new Set(configs.flatMap((n) => Object.keys(conf(ctx, n).stoppedBy)))].sort((a, b) =>
    a === NO_DECISION ? 1 : b === NO_DECISION ? -1 : a.localeCompare(b),
  );
  const stopped = layers.length
    ? table({
        caption: "Attack trials that did not fire, by the layer that stopped them",
        note: `The layer whose decision the audit log shows for the call; success is judged only by the oracle. "${NO_DECISION}": no layer acted on the call; the attack failed on its own or lacked what it wanted (a secret withheld at spawn, a kernel deny).`,
        head: ["config", ...layers],
        rows: configs.map((name) => [
          name,
          ...layers.map((layer): CellLike => {
            const n = conf(ctx, name).stoppedBy[layer];
            return n ? { text: String(n), sort: n } : { text: "0", sort: 0, cls: "zero" };
          }),
        ]),
        sortable: true,
      })
    : "";
  const l3 = configs.filter((n) => conf(ctx, n).l3);
  const backends = l3.length
    ? table({
        caption: "L3 backends per capability",
        head: ["config", "backends"],
        rows: l3.map((name) => [
          name,
          {
            text: Object.entries(conf(ctx, name).l3 ?? {})
              .map(([k, v]) => `${k} → ${v}`)
              .join(", "),
            cls: "text",
          },
        ]),
      })
    : "";
  return visibility + stopped + kernelTable(ctx) + backends;
}

/** The kernel's denials after the call beside the credited layers (summary.json configs.<c>.kernel). */
function kernelTable(ctx: SectionContext): string {
  const configs = ctx.configs.filter((n) => conf(ctx, n).kernel);
  if (!configs.some((n) => conf(ctx, n).kernel?.trials)) return "";
  const count = (n: number): CellLike =>
    n ? { text: String(n), sort: n } : { text: "0", sort: 0, cls: "zero" };
  return table({
    caption: "Kernel denials after the call (core trials)",
    note: "Trials in which the kernel layer denied something after the call, beside the layer credited above: the kernel denial decided (no decision record did, and the runtime did not survive it); a decision record decided and the kernel denied something the runtime did not survive as well; or every denial was survived (a start-up target, a runtime probe, or the call's outcome held). Each case's denials are in its drill-down under Cases.",
    head: ["config", "trials with a denial", "decided by the kernel", "beside a decision", "all survived"],
    rows: configs.map((name) => {
      const k = conf(ctx, name).kernel ?? { trials: 0, decided: 0, besideDecision: 0, survived: 0 };
      return [name, count(k.trials), count(k.decided), count(k.besideDecision), count(k.survived)];
    }),
    sortable: true,
    id: "kernel-denials",
  });
}

/** How the prevented attack trials ended, per config. */
export function endingsTable(ctx: SectionContext): string {
  const endings = ctx.summary.endings ?? {};
  const configs = ctx.configs.filter((c) => Object.hasOwn(endings, c));
  if (configs.length === 0) return "";
  const unknown = configs.some((c) => endings[c]?.unknown);
  return table({
    caption: "How the prevented attacks ended (trials)",
    note: "Attack trials whose oracle did not fire, by how the call ended: answered (the tool answered, without the effect; a sanitized answer counts here), refused (a layer refused the call), failed (the server or the call failed: an error result, a kernel EACCES/EPERM, a timeout). A config that stops attacks by breaking servers shows it in the last column.",
    head: ["config", "answered", "refused", "failed", ...(unknown ? ["unknown"] : [])],
    rows: configs.map((name) => {
      const e = endings[name] ?? { answered: 0, refused: 0, failed: 0, unknown: 0 };
      const total = e.answered + e.refused + e.failed + e.unknown;
      const cell = (n: number): CellLike => ({
        text: String(n),
        note: total ? pct(n / total, 0) : undefined,
        sort: n,
        cls: n ? undefined : "zero",
      });
      return [name, cell(e.answered), cell(e.refused), cell(e.failed), ...(unknown ? [cell(e.unknown)] : [])];
    }),
    sortable: true,
  });
}

/** Every trial that ended in an error, with its reason, and the cases not run. */
export function errorTables(summary: Summary): string {
  let out = "";
  const errors = summary.errors ?? [];
  if (errors.length) {
    const unjudged = errors.filter((e) => e.counted === "not judged").length;
    out += para(
      `A session that never started, a server that exited before answering, or a trial out of time proves nothing about a defense. ${unjudged} attack trial(s) were not judged and are left out of APR and V-APR; a benign trial with an error counts as failed; an attack whose effect was seen anyway counts as fired.`,
    );
    out += table({
      caption: `Trial errors (${errors.length})`,
      head: ["config", "case", "trial", "kind", "counted", "reason"],
      rows: errors.map((e) => [
        e.config,
        e.id,
        { text: String(e.trial), sort: e.trial },
        e.kind,
        e.counted,
        { text: e.reason.replace(/\s+/g, " ").slice(0, 400), cls: "text" },
      ]),
      sortable: true,
      cls: "errors",
    });
  } else {
    out += para("No trial ended in an error.");
  }
  const notRun = notRunEntries(summary);
  if (notRun.configs.length) {
    out += table({
      caption: `Configs not run (${notRun.configs.length})`,
      note: "Configs this host could not enforce: they ran no trial, and are not zero in any table.",
      head: ["config", "cases", "reason"],
      rows: notRun.configs.map((n) => [
        n.config,
        { text: String(n.cases), sort: n.cases },
        { text: n.reason, cls: "text" },
      ]),
      sortable: true,
      id: "configs-not-run",
    });
  }
  if (notRun.cases.length) {
    out += table({
      caption: `Cases not run (${notRun.cases.length})`,
      head: ["config", "case", "reason"],
      rows: notRun.cases.map((n) => [n.config, n.id, { text: n.reason, cls: "text" }]),
      sortable: true,
    });
  }
  return out;
}

/** The heading of a section, with the anchor the contents link to. */
export const section = (id: string, title: string, body: string) =>
  body ? `<section id="${escapeHtml(id)}">\n${heading(2, title)}${body}</section>\n` : "";
