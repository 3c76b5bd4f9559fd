/**
 * What a run does not cover, said beside the paper comparison: the paper's Table 1 is for the full
 * benchmark (the core manifest's cases, every config on every case), so a run on a subset of the
 * cases, with configs that did not run or ran fewer cases or fewer judged trials than the rest, is
 * only indicative; and cases beyond the core set (an extension, an external directory) are reported
 * apart. Computed from the summary and the core manifest, so `mcpguard report` says the same as the run.
 */
import { coreManifest, EXTENSION_SUITE, EXTERNAL_SUITE, suiteOf } from "./coreSet.js";
import type { Summary } from "./summarize.js";

/** The benchmark the paper's numbers are for: the core manifest's counts (runner/core-manifest.json). */
export function fullBenchmark(): { cases: number; attacks: number; benign: number } {
  const { cases, attacks, benign } = coreManifest();
  return { cases, attacks, benign };
}

const list = (items: readonly string[]) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
const ids = (items: readonly string[], max = 8) =>
  `${items.slice(0, max).join(", ")}${items.length > max ? ", …" : ""}`;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * How a run differs from the paper's benchmark, each with its own label: `partial` (fewer core
 * cases, configs or judged trials, or a merge of an incomplete shard set), `configs-not-run` (the
 * host could not enforce them), `extended` (core-category cases beyond the manifest), `external`
 * (case files from outside test_cases/). A run can be several at once.
 */
export type CaveatKind = "partial" | "configs-not-run" | "extended" | "external";

export interface Caveat {
  kind: CaveatKind;
  text: string;
}

/** The label each kind of caveat is printed under (summary.md, index.html, the terminal). */
export const CAVEAT_LABELS: Record<CaveatKind, string> = {
  partial: "Partial run.",
  "configs-not-run": "Configs not run.",
  extended: "Extended run.",
  external: "External cases.",
};

/** Every caveat of a run, in the order they are printed; empty for a full run of the core set. */
export function caveats(summary: Summary): Caveat[] {
  const of = (kind: CaveatKind, texts: string[]) => texts.map((text) => ({ kind, text }));
  // A merge of an incomplete shard set (`bench merge --partial`) says so before anything else.
  const merged = summary.partial ? [`This run was ${summary.partial}.`] : [];
  return [
    ...of("partial", merged),
    ...of("configs-not-run", configsNotRun(summary)),
    ...of("partial", cases(summary)),
    ...of("extended", extension(summary)),
    ...of("external", external(summary)),
  ];
}

/** The caveats' texts alone (see {@link caveats}). */
export function coverageCaveats(summary: Summary): string[] {
  return caveats(summary).map((c) => c.text);
}

/** The distinct labels of a run's caveats, in order ("Partial run. Extended run."), or "". */
export function caveatLabels(list: readonly Caveat[]): string {
  return [...new Set(list.map((c) => CAVEAT_LABELS[c.kind]))].join(" ");
}

/** Configs that ran nothing (the host cannot enforce them, a peer not installed): not run, not zero. */
function configsNotRun(summary: Summary): string[] {
  const byReason = new Map<string, string[]>();
  for (const [config, why] of Object.entries(summary.configsNotRun ?? {}))
    byReason.set(why, [...(byReason.get(why) ?? []), config]);
  return [...byReason].map(
    ([why, configs]) =>
      `${list(configs)} ${configs.length === 1 ? "was" : "were"} not run (${why}); Table 1's ${configs.length === 1 ? "row" : "rows"} for ${configs.length === 1 ? "it has" : "them have"} no result of this run beside ${configs.length === 1 ? "it" : "them"}.`,
  );
}

const casesOf = (summary: Summary, suite: string) => [
  ...new Set(summary.caseResults.filter((r) => suiteOf(r) === suite).map((r) => r.id)),
];

/** Cases of the core categories beyond the manifest: the extension suite, never in the comparison with Table 1. */
function extension(summary: Summary): string[] {
  const extension = casesOf(summary, EXTENSION_SUITE);
  if (extension.length === 0) return [];
  const full = fullBenchmark();
  const known = new Set(coreManifest().entries.map((e) => e.id));
  const changed = extension.filter((id) => known.has(id));
  const added = extension.filter((id) => !known.has(id));
  const parts = [
    ...(added.length ? [`${added.length} not in the core manifest (${ids(added)})`] : []),
    ...(changed.length
      ? [`${changed.length} whose file differs from the core manifest's (${ids(changed)})`]
      : []),
  ];
  return [
    `${plural(extension.length, "case")} of the core categories beyond the paper's ${full.cases} ran: ${parts.join("; ")}. They are the extension suite, with a table of their own, and are left out of the comparison with Table 1.`,
  ];
}

/** Case files from outside test_cases/: the external suite, never in the comparison with Table 1. */
function external(summary: Summary): string[] {
  const external = casesOf(summary, EXTERNAL_SUITE);
  if (external.length === 0) return [];
  return [
    `${plural(external.length, "case")} from outside test_cases/ ran as a suite of their own (external), left out of the comparison with Table 1.`,
  ];
}

function cases(summary: Summary): string[] {
  if (summary.cases === 0) {
    return Object.keys(summary.configs).length
      ? ["No core case ran, so nothing here compares with the paper's Table 1."]
      : [];
  }
  const out: string[] = [];
  const full = fullBenchmark();
  if (summary.cases < full.cases || summary.attacks < full.attacks || summary.benign < full.benign) {
    out.push(
      `This run covers ${summary.cases} of ${full.cases} core cases (${summary.attacks} of ${full.attacks} attacks, ${summary.benign} of ${full.benign} benign); the paper's numbers are for the full benchmark.`,
    );
  }
  if (!Object.hasOwn(summary.configs, "C0")) {
    out.push("C0 is not in this run, so there is no viable set and no V-APR.");
  }
  const core = summary.caseResults.filter((r) => suiteOf(r) === "core");
  for (const config of Object.keys(summary.configs)) {
    const mine = core.filter((r) => r.config === config);
    if (mine.length < summary.cases) {
      out.push(`${config} ran ${mine.length} of the ${summary.cases} core cases of this run.`);
    }
    const short = mine.filter((r) => r.trials < summary.trials);
    if (short.length) {
      out.push(
        `Under ${config}, ${plural(short.length, "case")} (${short
          .map((r) => r.id)
          .slice(0, 8)
          .join(
            ", ",
          )}${short.length > 8 ? ", …" : ""}) had fewer than ${summary.trials} judged trials (trial errors, or cases not run).`,
      );
    }
  }
  return out;
}
