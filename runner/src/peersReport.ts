/**
 * The peers block of a report (`summary.json` `peers`, summary.md "Peers, side by side"): each peer
 * config beside C-full on the same cases, world and oracles. APR and V-APR over the core attacks,
 * FPR over the paper's 21 benign cases and over the benign corpus when that suite ran, by category
 * and visibility, with cold start and per-call latency; then the cases where a peer and C-full
 * differ. Built from the summary alone, so `mcpguard report` rebuilds it.
 */

import { suiteOf } from "./coreSet.js";
import { isPeerConfig } from "./peers.js";
import { type Interval, wilson } from "./stats.js";
import type { CaseResult, ConfigSummary, Latency, SuiteSummary } from "./summarize.js";

export const PEER_REFERENCE = "C-full";
const CORPUS = "benign_corpus";

export interface PeerRow {
  config: string;
  role: "peer" | "reference";
  /** Why the config did not run ("not run: ..."), else null. */
  notRun: string | null;
  attacks: number;
  viable: number | null;
  /** Attack cases that never fired. */
  blocked: number;
  benign: number;
  /** Benign cases whose expect failed in some trial. */
  failed: number;
  apr: Interval | null;
  vapr: Interval | null;
  /** Over the paper's 21 benign cases. */
  fpr: Interval | null;
  /** Over the benign corpus, when the run has it. */
  corpus: { benign: number; failed: number; fpr: Interval | null } | null;
  byCategory: Record<string, { attacks: number; blocked: number; benign: number; failed: number }>;
  byVisibility: Record<string, { viable: number; blockedViable: number; vapr: Interval | null }>;
  startMs: Pick<Latency, "n" | "p50" | "p95">;
  latencyMs: Pick<Latency, "n" | "p50" | "p95">;
  /** Viable attack cases that fired here and never under C-full, and the reverse. */
  firedHereOnly: string[];
  firedInReferenceOnly: string[];
  /** Core benign cases that failed here. */
  benignFailed: string[];
}

export interface PeersBlock {
  reference: string | null;
  rows: PeerRow[];
}

function visibilityVapr(results: CaseResult[]): PeerRow["byVisibility"] {
  const out: PeerRow["byVisibility"] = {};
  const groups = new Map<string, CaseResult[]>();
  for (const r of results) {
    if (r.kind !== "attack" || r.viable !== true) continue;
    const key = r.visibility ?? "none";
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [visibility, cases] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const trials = cases.reduce((s, r) => s + r.trials, 0);
    const fired = cases.reduce((s, r) => s + (r.fired ?? 0), 0);
    out[visibility] = {
      viable: cases.length,
      blockedViable: cases.filter((r) => (r.fired ?? 0) === 0).length,
      vapr: wilson(trials - fired, trials),
    };
  }
  return out;
}

const pick = (l: Latency) => ({ n: l.n, p50: l.p50, p95: l.p95 });

function row(
  config: string,
  s: ConfigSummary | undefined,
  suites: Record<string, SuiteSummary>,
  results: CaseResult[],
  reference: CaseResult[],
  notRun: string | null,
): PeerRow {
  const mine = results.filter((r) => r.config === config && suiteOf(r) === "core");
  const firedIds = (list: CaseResult[]) =>
    new Set(
      list.filter((r) => r.kind === "attack" && r.viable === true && (r.fired ?? 0) > 0).map((r) => r.id),
    );
  const here = firedIds(mine);
  const there = firedIds(reference);
  const ran = new Set(mine.map((r) => r.id));
  const corpus = suites[CORPUS]?.configs[config];
  const empty = { n: 0, p50: null, p95: null };
  return {
    config,
    role: isPeerConfig(config) ? "peer" : "reference",
    notRun,
    attacks: s?.attacks ?? 0,
    viable: s?.viable ?? null,
    blocked: s?.blocked ?? 0,
    benign: s?.benign ?? 0,
    failed: s?.failed ?? 0,
    apr: s?.apr ?? null,
    vapr: s?.vapr ?? null,
    fpr: s?.fpr ?? null,
    corpus: corpus ? { benign: corpus.benign, failed: corpus.failed, fpr: corpus.fpr } : null,
    byCategory: Object.fromEntries(
      Object.entries(s?.byCategory ?? {}).map(([k, v]) => [
        k,
        { attacks: v.attacks, blocked: v.blocked, benign: v.benign, failed: v.failed },
      ]),
    ),
    byVisibility: visibilityVapr(mine),
    startMs: s ? pick(s.startMs) : empty,
    latencyMs: s ? pick(s.latencyMs) : empty,
    firedHereOnly: [...here].filter((id) => !there.has(id) && reference.length > 0).sort(),
    firedInReferenceOnly: [...there].filter((id) => !here.has(id) && ran.has(id)).sort(),
    benignFailed: mine
      .filter((r) => r.kind === "benign" && (r.failed ?? 0) > 0)
      .map((r) => r.id)
      .sort(),
  };
}

/** The block, or null when the run has no peer config (run or not run). */
export function summarizePeers(
  configs: Record<string, ConfigSummary>,
  suites: Record<string, SuiteSummary>,
  caseResults: CaseResult[],
  notRun: { config: string; reason: string }[],
): PeersBlock | null {
  const notRunReason = new Map(notRun.filter((n) => isPeerConfig(n.config)).map((n) => [n.config, n.reason]));
  const suiteConfigs = Object.values(suites).flatMap((s) => Object.keys(s.configs));
  const peers = [
    ...new Set([...Object.keys(configs), ...suiteConfigs, ...notRunReason.keys()].filter(isPeerConfig)),
  ].sort();
  if (peers.length === 0) return null;
  const hasReference = Object.hasOwn(configs, PEER_REFERENCE) || suiteConfigs.includes(PEER_REFERENCE);
  const reference = caseResults.filter((r) => r.config === PEER_REFERENCE && suiteOf(r) === "core");
  const build = (config: string) =>
    row(
      config,
      Object.hasOwn(configs, config) ? configs[config] : undefined,
      suites,
      caseResults,
      config === PEER_REFERENCE ? [] : reference,
      // A peer that ran some cases and not others (e.g. not installed for part of a merge) still ran.
      Object.hasOwn(configs, config) || suiteConfigs.includes(config)
        ? null
        : (notRunReason.get(config) ?? null),
    );
  return {
    reference: hasReference ? PEER_REFERENCE : null,
    rows: [...(hasReference ? [build(PEER_REFERENCE)] : []), ...peers.map(build)],
  };
}

const pct = (v: number | null | undefined) =>
  v === null || v === undefined ? "–" : `${(v * 100).toFixed(1)}%`;
const ci = (i: Interval | null) => (i ? `${pct(i.value)} [${pct(i.lo)}, ${pct(i.hi)}]` : "–");
const ms = (v: number | null) => (v === null ? "–" : v.toFixed(v >= 100 ? 0 : 1));

/** summary.md's section; empty when the run has no peer. */
export function renderPeers(block: PeersBlock | null | undefined): string[] {
  if (!block) return [];
  const lines = [
    "",
    "## Peers, side by side",
    "",
    `Each peer wraps the same server, in the same world and under the same oracles, with a profile exported from the same MCPGuard policy (\`mcpguard policy export\`, never tuned per case), behind \`mcpguard run --config C0\`. ${block.reference ? `${block.reference} stands beside them.` : "C-full is not in this run: run it too to compare."} APR and V-APR over the core attacks, FPR over the paper's 21 benign cases and over the benign corpus when \`--suite corpus\` ran; 95% Wilson intervals over pooled trials. Cold start: spawn to \`initialized\`; call: the tool call's round trip (benign cases).`,
    "",
    "| config | APR | V-APR | FPR (paper's 21) | FPR (corpus) | cold start p50 / p95 [ms] | call p50 / p95 [ms] |",
    "|---|---|---|---|---|---:|---:|",
  ];
  const ran = block.rows.filter((r) => !r.notRun);
  for (const r of block.rows) {
    if (r.notRun) {
      lines.push(`| ${r.config} | ${r.notRun} | | | | | |`);
      continue;
    }
    const corpus = r.corpus ? `${ci(r.corpus.fpr)} (${r.corpus.failed}/${r.corpus.benign})` : "–";
    lines.push(
      `| ${r.config} | ${ci(r.apr)} | ${ci(r.vapr)} | ${ci(r.fpr)} (${r.failed}/${r.benign}) | ${corpus} | ${ms(r.startMs.p50)} / ${ms(r.startMs.p95)} | ${ms(r.latencyMs.p50)} / ${ms(r.latencyMs.p95)} |`,
    );
  }
  if (ran.some((r) => r.attacks + r.benign > 0)) {
    const names = ran.map((r) => r.config);
    lines.push(
      "",
      "By category (attack cases never fired / attacks; benign cases failed / benign):",
      "",
      `| category | ${names.join(" | ")} |`,
      `|---|${names.map(() => "---:").join("|")}|`,
    );
    const categories = [...new Set(ran.flatMap((r) => Object.keys(r.byCategory)))].sort();
    for (const category of categories) {
      const cells = ran.map((r) => {
        const k = r.byCategory[category];
        if (!k) return "–";
        return [k.attacks ? `${k.blocked}/${k.attacks}` : "", k.benign ? `FP ${k.failed}/${k.benign}` : ""]
          .filter(Boolean)
          .join(", ");
      });
      lines.push(`| ${category} | ${cells.join(" | ")} |`);
    }
    lines.push(
      "",
      "V-APR by visibility (viable attack cases never fired / viable):",
      "",
      `| visibility | ${names.join(" | ")} |`,
      `|---|${names.map(() => "---|").join("")}`,
    );
    for (const visibility of ["argument", "hidden"]) {
      const cells = ran.map((r) => {
        const v = r.byVisibility[visibility];
        return v ? `${ci(v.vapr)} (${v.blockedViable}/${v.viable})` : "–";
      });
      lines.push(`| ${visibility} | ${cells.join(" | ")} |`);
    }
  }
  const peers = ran.filter((r) => r.role === "peer");
  if (peers.length) {
    lines.push(
      "",
      `Where each peer and ${block.reference ?? "C-full"} differ (viable attacks; benign cases that failed):`,
      "",
    );
    for (const r of peers) {
      const parts = [
        `fired only under ${r.config}: ${r.firedHereOnly.length ? r.firedHereOnly.join(", ") : "none"}`,
        `fired only under ${block.reference ?? "C-full"}: ${block.reference ? r.firedInReferenceOnly.join(", ") || "none" : "–"}`,
        `benign failed: ${r.benignFailed.length ? r.benignFailed.join(", ") : "none"}`,
      ];
      lines.push(`- **${r.config}**: ${parts.join("; ")}`);
    }
  }
  return lines;
}

/** One line per peer for the terminal. */
export function peerLines(block: PeersBlock | null | undefined): string {
  if (!block) return "";
  const lines = block.rows.map((r) => {
    if (r.notRun) return `peers: ${r.config}: ${r.notRun}`;
    const parts = [
      r.vapr ? `V-APR ${ci(r.vapr)}` : "",
      r.fpr ? `FPR ${ci(r.fpr)}` : "",
      r.corpus ? `corpus FPR ${ci(r.corpus.fpr)}` : "",
      r.startMs.p50 !== null ? `cold start p50 ${ms(r.startMs.p50)} ms` : "",
    ];
    return `peers: ${r.config}: ${parts.filter(Boolean).join(", ")}`;
  });
  return `\n${lines.join("\n")}\n`;
}
