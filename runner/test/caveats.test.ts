import { describe, expect, it } from "vitest";
import { CAVEAT_LABELS, caveatLabels, caveats, coverageCaveats } from "../src/caveats.ts";
import { summarize } from "../src/summarize.ts";
import type { TrialRecord } from "../src/trial.ts";
import { record } from "./records.ts";

/** The paper's 82 core cases (61 attacks, 21 benign) under `configs`, `trials` runs each. */
function fullRun(configs: string[], trials = 1): TrialRecord[] {
  const ids = [
    ...Array.from({ length: 61 }, (_, i) => ({ id: `FR-${i + 1}`, kind: "attack" as const })),
    ...Array.from({ length: 21 }, (_, i) => ({ id: `BN-${i + 1}`, kind: "benign" as const })),
  ];
  return configs.flatMap((config) =>
    ids.flatMap(({ id, kind }) =>
      Array.from({ length: trials }, (_, t) =>
        record({ config, id, kind, trial: t + 1, fired: kind === "attack" ? config === "C0" : null }),
      ),
    ),
  );
}

describe("the caveat of a partial run", () => {
  it("says nothing about a full run", () => {
    expect(coverageCaveats(summarize("r", fullRun(["C0", "C-full"], 2)))).toEqual([]);
  });

  it("says how many of the 82 core cases a subset covers", () => {
    const records = fullRun(["C0", "C-full"]).filter((r) => r.id === "FR-1" || r.id === "BN-1");
    expect(coverageCaveats(summarize("r", records))).toEqual([
      "This run covers 2 of 82 core cases (1 of 61 attacks, 1 of 21 benign); the paper's numbers are for the full benchmark.",
    ]);
  });

  it("names a config that ran fewer cases or judged fewer trials, and a run without C0", () => {
    const records = fullRun(["C-app", "C-full"], 2)
      .filter((r) => !(r.config === "C-app" && r.id === "BN-3"))
      .map((r) =>
        r.config === "C-full" && r.id === "FR-7" && r.trial === 2
          ? { ...r, fired: null, error: "the session never started" }
          : r,
      );
    expect(coverageCaveats(summarize("r", records))).toEqual([
      "C0 is not in this run, so there is no viable set and no V-APR.",
      "C-app ran 81 of the 82 core cases of this run.",
      "Under C-full, 1 case (FR-7) had fewer than 2 judged trials (trial errors, or cases not run).",
    ]);
  });

  it("says that a run of the suites alone has nothing to compare with the paper", () => {
    const records = [
      record({ config: "C-full", id: "BC-1", trial: 1, kind: "benign", category: "benign_corpus" }),
    ];
    expect(coverageCaveats(summarize("r", records))).toEqual([
      "No core case ran, so nothing here compares with the paper's Table 1.",
    ]);
  });

  it("labels each caveat by what it is: configs not run, a partial run, an extended run, external cases", () => {
    const why = "the kernel layer cannot run here";
    const full = fullRun(["C0", "C-full"]);
    const notRun = ["C-ebpf", "C-AB+ebpf"].flatMap((config) =>
      fullRun([config]).map((r) => ({ ...r, trial: 0, fired: null, notRun: why })),
    );
    // Every core case under the configs that ran: only the configs not run are a caveat.
    const configsOnly = caveats(summarize("r", [...full, ...notRun]));
    expect(configsOnly).toEqual([
      {
        kind: "configs-not-run",
        text: `C-ebpf and C-AB+ebpf were not run (${why}); Table 1's rows for them have no result of this run beside them.`,
      },
    ]);
    expect(caveatLabels(configsOnly)).toBe("Configs not run.");
    // A full core run with an extension case and an external one is extended, not partial.
    const extra = [
      record({ config: "C0", id: "FR-99", trial: 1, suite: "extension" }),
      record({ config: "C0", id: "XX-01", trial: 1, suite: "external" }),
    ];
    const extended = caveats(summarize("r", [...full, ...extra]));
    expect(extended.map((c) => c.kind)).toEqual(["extended", "external"]);
    expect(caveatLabels(extended)).toBe("Extended run. External cases.");
    // A subset, and a merge of an incomplete shard set, are partial.
    const subset = summarize(
      "r",
      full.filter((r) => r.id === "FR-1"),
    );
    subset.partial = "merged from an incomplete shard set: missing shard 2/2 (1 of 2 given)";
    expect(caveats(subset).map((c) => c.kind)).toEqual(["partial", "partial"]);
    expect(caveatLabels(caveats(subset))).toBe(CAVEAT_LABELS.partial);
  });
});
