/**
 * The report page's tables for the suites beside the core: each suite's own FPR and attacks (the
 * benign corpus, the protocol suite when it ran, any other), the precision block of a benign suite
 * (what the layers break, per server, per construct class, and why), the real servers, and the
 * peers beside C-full. None of these is part of the paper comparison.
 */
import type { PeersBlock } from "../peersReport.js";
import type { PrecisionBlock, PrecisionCounts } from "../precision.js";
import type { RealCell, RealServersBlock } from "../realReport.js";
import type { Interval } from "../stats.js";
import { type SuiteSummary, type Summary, sortConfigs } from "../summarize.js";
import { type CellLike, heading, list, numCell, para, rateCell, ratioCell, table } from "./html.js";

const dash: CellLike = { text: "–", sort: null, cls: "na" };

/** Attacks stopped and benign cases broken in one cell ("3/4, FP 1/9"), sorted by the stop rate. */
function countsCell(k: { attacks: number; blocked: number; benign: number; failed: number }): CellLike {
  const parts = [k.attacks ? `${k.blocked}/${k.attacks}` : "", k.benign ? `FP ${k.failed}/${k.benign}` : ""];
  return { text: parts.filter(Boolean).join(", "), sort: k.attacks ? k.blocked / k.attacks : -k.failed };
}

/** A rate with its interval and, after the interval, the counts it is over. */
const rateWith = (i: Interval | null | undefined, counts: string): CellLike => {
  const cell = rateCell(i);
  return { ...cell, note: `${cell.note ?? ""} ${counts}`.trim() };
};

/** A suite's cases per server: attacks never fired / attacks, benign failed / benign. */
function suiteServers(name: string, suite: SuiteSummary, configs: string[]): string {
  const conf = (c: string) => suite.configs[c] as NonNullable<(typeof suite.configs)[string]>;
  const servers = [...new Set(configs.flatMap((c) => Object.keys(conf(c).byServer)))].sort();
  if (servers.length < 2) return "";
  return table({
    caption: `${name}, per server: attack cases never fired / attacks; benign cases failed / benign`,
    head: ["server", ...configs],
    rows: servers.map((server) => [
      server,
      ...configs.map((c): CellLike => {
        const k = conf(c).byServer[server];
        return k ? countsCell(k) : dash;
      }),
    ]),
    sortable: true,
  });
}

/** Which layer caught what: a suite's attack trials that did not fire, by layer and rule, per config. */
function suiteStopped(name: string, suite: SuiteSummary, configs: string[]): string {
  const by = (c: string) => suite.configs[c]?.stoppedByRule ?? {};
  const rules = [...new Set(configs.flatMap((c) => Object.keys(by(c))))].sort();
  if (rules.length === 0) return "";
  return table({
    caption: `${name}: which layer stopped the attacks (attack trials that did not fire, by the layer and rule the audit log shows acting first)`,
    head: ["layer and rule", ...configs],
    rows: rules.map((rule) => [
      { text: rule, cls: "text" },
      ...configs.map((c): CellLike => {
        const n = by(c)[rule];
        return n ? { text: String(n), sort: n } : dash;
      }),
    ]),
    sortable: true,
  });
}

function suiteTables(name: string, suite: SuiteSummary, summary: Summary): string {
  const configs = sortConfigs(Object.keys(suite.configs));
  const conf = (c: string) => suite.configs[c] as NonNullable<(typeof suite.configs)[string]>;
  const precision = suite.precision ?? null;
  const benign = suite.benign > 0;
  const attacks = suite.attacks > 0;
  let out = heading(3, `Suite ${name}`, `suite-${name}`);
  out += table({
    caption: `${name}: ${suite.cases} cases (${suite.attacks} attacks, ${suite.benign} benign), per config`,
    note: [
      benign ? "Benign: cases and trials whose expect failed; FPR over trials (95% Wilson interval)." : "",
      attacks ? "Attacks: cases that never fired / cases; APR over trials (95% Wilson interval)." : "",
      "Latency: the tool call's p50 over benign calls.",
    ]
      .filter(Boolean)
      .join(" "),
    head: [
      "config",
      ...(benign ? ["benign cases failed", "benign trials failed", "FPR"] : []),
      ...(attacks ? ["attack cases never fired", "APR"] : []),
      "latency p50 [ms]",
    ],
    rows: configs.map((c) => {
      const s = conf(c);
      const p = precision?.[c];
      return [
        c,
        ...(benign
          ? [ratioCell(s.failed, s.benign), p ? ratioCell(p.failedTrials, p.trials) : dash, rateCell(s.fpr)]
          : []),
        ...(attacks ? [ratioCell(s.blocked, s.attacks), rateCell(s.apr)] : []),
        numCell(s.latencyMs.p50),
      ];
    }),
    sortable: true,
  });
  // A benign suite's servers are in its precision block, with their case counts.
  if (attacks || !precision) out += suiteServers(name, suite, configs);
  if (attacks) out += suiteStopped(name, suite, configs);
  const failing = new Set(
    summary.caseResults
      .filter((r) => r.category === name && (r.kind === "benign" ? (r.failed ?? 0) : (r.fired ?? 0)) > 0)
      .map((r) => r.id),
  );
  out += para(
    failing.size
      ? `${failing.size} case(s) failed (benign) or fired (attacks) under some config: open them in the Cases table, category ${name}.`
      : "No case failed (benign) or fired (attacks) under any config.",
  );
  out += precisionTables(name, precision);
  return out;
}

const precisionRatio = (k: PrecisionCounts | undefined) => (k ? ratioCell(k.failed, k.cases) : dash);

/** A benign suite's precision: per server and per construct class, and what broke its calls. */
function precisionTables(name: string, block: PrecisionBlock | null | undefined): string {
  if (!block || Object.keys(block).length === 0) return "";
  const configs = Object.keys(block);
  const conf = (c: string) => block[c] as NonNullable<PrecisionBlock[string]>;
  let out = heading(3, `Precision on ${name}: what the layers break`);
  for (const [title, pick] of [
    ["server", (c: string) => conf(c).byServer],
    ["class", (c: string) => conf(c).byClass],
  ] as const) {
    const keys = [...new Set(configs.flatMap((c) => Object.keys(pick(c))))].sort();
    if (keys.length === 0) continue;
    out += table({
      caption: `Benign cases failed / cases, per ${title}`,
      head: [title, "cases", ...configs],
      rows: keys.map((key) => {
        const cases = Math.max(...configs.map((c) => pick(c)[key]?.cases ?? 0));
        return [
          key,
          { text: String(cases), sort: cases },
          ...configs.map((c) => precisionRatio(pick(c)[key])),
        ];
      }),
      sortable: true,
    });
  }
  const causes = configs.flatMap((c) => conf(c).causes.map((cause) => ({ config: c, ...cause })));
  out += causes.length
    ? table({
        caption: "What broke benign calls: the rule the audit log shows, or why none does",
        head: ["config", "cause", "layer", "cases", "trials", "which cases"],
        rows: causes.map((c) => [
          c.config,
          { text: c.cause, cls: "text" },
          c.layer,
          { text: String(c.cases.length), sort: c.cases.length },
          { text: String(c.trials), sort: c.trials },
          { text: c.cases.join(", "), cls: "text ids" },
        ]),
        sortable: true,
      })
    : para("No benign call broke under any config.");
  return out;
}

/** Every suite of the run (benign corpus, protocol, ...), except the real servers, which have their own block. */
export function suitesHtml(summary: Summary): string {
  return Object.entries(summary.suites ?? {})
    .filter(([name]) => !(name === "real" && summary.realServers))
    .map(([name, suite]) => suiteTables(name, suite, summary))
    .join("");
}

const cwdName = (cwd: string) => (cwd === "/" ? "cwd /" : "cwd workspace");

function realCells(c: RealCell | undefined): CellLike[] {
  if (!c) return [dash, dash, dash, dash];
  const e = c.ended;
  return [
    c.viable ? ratioCell(c.viableStopped, c.viable) : dash,
    c.probes
      ? { ...ratioCell(c.stopped, c.probes), note: c.errors ? `+${c.errors} errors` : undefined }
      : dash,
    ratioCell(c.broken, c.benign),
    c.stopped ? { text: `${e.answered} / ${e.refused} / ${e.failed}`, sort: e.answered } : dash,
  ];
}

/** The real servers block: per config and working directory, then per server. */
export function realServersHtml(block: RealServersBlock | null | undefined): string {
  if (!block) return "";
  const configs = sortConfigs(Object.keys(block.configs));
  let out = para(
    `Third-party MCP servers started from node_modules: ${block.attacks} CVE probe cases and ${block.benign} benign operations, each run with the proxy and the server started from the allowed folder (cwd workspace) and from /. Viable probes: those that fire under C0. Benign: trials broken / trials. Endings of the stopped probes: answered / refused / failed.`,
  );
  for (const cwd of block.cwds) {
    out += table({
      caption: `Probes and benign operations, ${cwdName(cwd)}`,
      head: ["config", "viable probes stopped", "all probes stopped", "benign broken", "endings"],
      rows: configs.map((config) => [config, ...realCells(block.configs[config]?.[cwd])]),
      sortable: true,
    });
  }
  const rows: CellLike[][] = [];
  for (const server of Object.keys(block.servers).sort()) {
    for (const cwd of block.cwds) {
      rows.push([
        `${server} (${cwdName(cwd)})`,
        ...configs.map((config): CellLike => {
          const c = block.servers[server]?.[config]?.[cwd];
          if (!c) return dash;
          const parts = [];
          if (c.probes + c.errors)
            parts.push(`probes ${c.stopped}/${c.probes}${c.errors ? ` +${c.errors} err` : ""}`);
          if (c.benign) parts.push(`benign broken ${c.broken}/${c.benign}`);
          return {
            text: parts.join(", "),
            sort: c.probes ? c.stopped / c.probes : c.benign ? -c.broken / c.benign : null,
          };
        }),
      ]);
    }
  }
  out += table({
    caption: "Per server: probes stopped / judged, benign broken / trials",
    head: ["server", ...configs],
    rows,
    sortable: true,
  });
  const startup = Object.keys(block.startup ?? {}).sort();
  if (startup.length) {
    out += table({
      caption: "Start-up per server: spawn to initialize answered, p50 over both working directories [ms]",
      head: ["server", ...configs],
      rows: startup.map((server) => [
        server,
        ...configs.map((config) => numCell(block.startup[server]?.[config]?.p50 ?? null, 0)),
      ]),
      sortable: true,
    });
  }
  return out;
}

/** The peers (and C-full) by category, and their V-APR by visibility. */
function peerBreakdown(ran: PeersBlock["rows"]): string {
  let out = "";
  const categories = [...new Set(ran.flatMap((r) => Object.keys(r.byCategory)))].sort();
  if (categories.length) {
    out += table({
      caption: "By category: attack cases never fired / attacks; benign cases failed / benign",
      head: ["category", ...ran.map((r) => r.config)],
      rows: categories.map((category) => [
        category,
        ...ran.map((r): CellLike => {
          const k = r.byCategory[category];
          return k ? countsCell(k) : dash;
        }),
      ]),
      sortable: true,
    });
  }
  const visibilities = [...new Set(ran.flatMap((r) => Object.keys(r.byVisibility)))].sort();
  if (visibilities.length) {
    out += table({
      caption: "V-APR by visibility, with the viable attack cases never fired / viable",
      head: ["visibility", ...ran.map((r) => r.config)],
      rows: visibilities.map((v) => [
        v,
        ...ran.map((r): CellLike => {
          const k = r.byVisibility[v];
          return k ? rateWith(k.vapr, `${k.blockedViable}/${k.viable}`) : dash;
        }),
      ]),
      sortable: true,
    });
  }
  return out;
}

/** The peers beside C-full. */
export function peersHtml(block: PeersBlock | null | undefined): string {
  if (!block) return "";
  let out = para(
    `Each peer wraps the same server, in the same world and under the same oracles, with a profile exported from the same MCPGuard policy, behind mcpguard run --config C0. ${block.reference ? `${block.reference} stands beside them.` : "C-full is not in this run: run it too to compare."} 95% Wilson intervals over pooled trials.`,
  );
  const ran = block.rows.filter((r) => !r.notRun);
  out += table({
    caption: "Peers beside C-full",
    note: "APR and V-APR over the core attacks; FPR over the paper's 21 benign cases and over the benign corpus (when it ran), with the cases failed / cases.",
    head: [
      "config",
      "APR",
      "V-APR",
      "FPR (paper's 21)",
      "FPR (corpus)",
      "cold start p50 [ms]",
      "call p50 [ms]",
    ],
    rows: block.rows.map((r): CellLike[] =>
      r.notRun
        ? [r.config, { text: r.notRun, cls: "text" }, dash, dash, dash, dash, dash]
        : [
            r.config,
            rateCell(r.apr),
            rateCell(r.vapr),
            rateWith(r.fpr, `${r.failed}/${r.benign}`),
            r.corpus ? rateWith(r.corpus.fpr, `${r.corpus.failed}/${r.corpus.benign}`) : dash,
            numCell(r.startMs.p50, 0),
            numCell(r.latencyMs.p50, 1),
          ],
    ),
    sortable: true,
  });
  out += peerBreakdown(ran);
  const peers = ran.filter((r) => r.role === "peer");
  const ref = block.reference ?? "C-full";
  out += list(
    peers.map(
      (r) =>
        `${r.config}: fired only under ${r.config}: ${r.firedHereOnly.join(", ") || "none"}; fired only under ${ref}: ${block.reference ? r.firedInReferenceOnly.join(", ") || "none" : "–"}; benign failed: ${r.benignFailed.join(", ") || "none"}.`,
    ),
  );
  return out;
}
