/**
 * What a run does not cover, said beside the paper comparison: the paper's Table 1 is for the full
 * benchmark (82 cases, every config on every case), so a run on a subset of the cases, or with
 * configs that ran fewer cases or fewer judged trials than the rest, is only indicative. Computed
 * from the summary alone, so `mcpguard report` says the same as the run.
 */
import { isCoreCategory } from "./scenario.js";
import type { Summary } from "./summarize.js";

/** The benchmark the paper's numbers are for. */
export const FULL_BENCHMARK = { cases: 82, attacks: 61, benign: 21 };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** One sentence per gap in the run's coverage of the core cases; empty for a full run. */
export function coverageCaveats(summary: Summary): string[] {
  // A merge of an incomplete shard set (`bench merge --partial`) says so before anything else.
  const merged = summary.partial ? [`This run was ${summary.partial}.`] : [];
  return [...merged, ...cases(summary)];
}

function cases(summary: Summary): string[] {
  if (summary.cases === 0) {
    return Object.keys(summary.configs).length
      ? ["No core case ran, so nothing here compares with the paper's Table 1."]
      : [];
  }
  const out: string[] = [];
  const full = FULL_BENCHMARK;
  if (summary.cases < full.cases || summary.attacks < full.attacks || summary.benign < full.benign) {
    out.push(
      `This run covers ${summary.cases} of ${full.cases} core cases (${summary.attacks} of ${full.attacks} attacks, ${summary.benign} of ${full.benign} benign); the paper's numbers are for the full benchmark.`,
    );
  }
  if (!Object.hasOwn(summary.configs, "C0")) {
    out.push("C0 is not in this run, so there is no viable set and no V-APR.");
  }
  const core = summary.caseResults.filter((r) => isCoreCategory(r.category));
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
