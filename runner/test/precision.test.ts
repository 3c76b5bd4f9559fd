import { describe, expect, it } from "vitest";
import { compareSummaries, DEFAULT_THRESHOLDS } from "../src/compare.ts";
import { causeOf, NO_DECISION_RECORDED, NO_DENY_RECORD_L3, renderPrecision } from "../src/precision.ts";
import { renderMarkdown } from "../src/render.ts";
import { summarize } from "../src/summarize.ts";
import type { TrialRecord } from "../src/trial.ts";
import { record } from "./records.ts";

/** A benign corpus trial. */
const corpus = (partial: Partial<TrialRecord> & Pick<TrialRecord, "config" | "id">) =>
  record({ trial: 1, kind: "benign", category: "benign_corpus", server: "sqlite", ...partial });
const L3 = { file: "landlock", exec: "landlock", net: "cgroup-bpf" };

describe("causeOf", () => {
  it("names what the records show, in order: an error, the rule, the layer, else why none", () => {
    expect(
      causeOf(corpus({ config: "C-app", id: "a", passed: false, error: "cannot start sqlite\nmore" })),
    ).toEqual({
      cause: "trial error: cannot start sqlite",
      layer: "error",
    });
    expect(
      causeOf(corpus({ config: "C-app", id: "a", passed: false, stoppedBy: "L1", stoppedRule: "l1.sql" })),
    ).toEqual({ cause: "L1: l1.sql", layer: "L1" });
    expect(causeOf(corpus({ config: "C-app", id: "a", passed: false, stoppedBy: "sanitizer" }))).toEqual({
      cause: "sanitizer",
      layer: "sanitizer",
    });
    expect(causeOf(corpus({ config: "C-ebpf", id: "a", passed: false, l3: L3 }))).toEqual({
      cause: NO_DENY_RECORD_L3,
      layer: "L3",
    });
    expect(causeOf(corpus({ config: "C-app", id: "a", passed: false }))).toEqual({
      cause: NO_DECISION_RECORDED,
      layer: "none",
    });
  });
});

describe("the precision of the benign corpus", () => {
  const records: TrialRecord[] = [
    // C-app: two SQL cases refused by L1, one redacted by the sanitizer, one fine.
    ...[1, 2].flatMap((trial) => [
      corpus({
        config: "C-app",
        id: "BC-SQ-025",
        trial,
        tags: ["sql.pragma"],
        passed: false,
        stoppedBy: "L1",
        stoppedRule: "l1.sql",
      }),
      corpus({
        config: "C-app",
        id: "BC-SQ-038",
        trial,
        tags: ["sql.ddl"],
        passed: false,
        stoppedBy: "L1",
        stoppedRule: "l1.sql",
      }),
      corpus({
        config: "C-app",
        id: "BC-FS-010",
        trial,
        server: "filesystem",
        tags: ["app.files", "data.integrity"],
        passed: false,
        stoppedBy: "sanitizer",
        stoppedRule: "l2.result.token",
      }),
      corpus({ config: "C-app", id: "BC-SQ-001", trial, tags: ["sql.select", "sql.order"] }),
    ]),
    // C-ebpf: one trial of one case broken by the kernel with no deny record.
    ...[1, 2].flatMap((trial) => [
      corpus({ config: "C-ebpf", id: "BC-SQ-025", trial, tags: ["sql.pragma"], l3: L3 }),
      corpus({ config: "C-ebpf", id: "BC-SQ-038", trial, tags: ["sql.ddl"], l3: L3 }),
      corpus({
        config: "C-ebpf",
        id: "BC-FS-010",
        trial,
        server: "filesystem",
        tags: ["app.files"],
        l3: L3,
        passed: trial === 1,
      }),
      corpus({ config: "C-ebpf", id: "BC-SQ-001", trial, tags: ["sql.select"], l3: L3 }),
    ]),
  ];
  const summary = summarize("t", records);
  const precision = summary.suites.benign_corpus?.precision;

  it("gives the FPR per config with its Wilson interval over pooled trials", () => {
    expect(precision?.["C-app"]).toMatchObject({ cases: 4, failed: 3, trials: 8, failedTrials: 6 });
    expect(precision?.["C-app"]?.fpr?.value).toBe(0.75);
    expect(precision?.["C-app"]?.fpr?.lo).toBeLessThan(0.75);
    expect(precision?.["C-ebpf"]).toMatchObject({ cases: 4, failed: 1, trials: 8, failedTrials: 1 });
  });

  it("counts per server and per construct class, a case in every class it has a tag of", () => {
    expect(precision?.["C-app"]?.byServer).toMatchObject({
      filesystem: { cases: 1, failed: 1 },
      sqlite: { cases: 3, failed: 2 },
    });
    expect(precision?.["C-app"]?.byClass).toMatchObject({
      sql: { cases: 3, failed: 2 },
      app: { cases: 1, failed: 1 },
      data: { cases: 1, failed: 1 },
    });
    // A case with two tags of one class counts once in it.
    expect(precision?.["C-app"]?.byClass.sql?.trials).toBe(6);
  });

  it("lists the rules that broke benign calls with their cases, most cases first", () => {
    expect(precision?.["C-app"]?.causes).toEqual([
      { cause: "L1: l1.sql", layer: "L1", trials: 4, cases: ["BC-SQ-025", "BC-SQ-038"] },
      { cause: "sanitizer: l2.result.token", layer: "sanitizer", trials: 2, cases: ["BC-FS-010"] },
    ]);
    expect(precision?.["C-ebpf"]?.causes).toEqual([
      { cause: NO_DENY_RECORD_L3, layer: "L3", trials: 1, cases: ["BC-FS-010"] },
    ]);
  });

  it("keeps the core out of it, and has no block for a suite without benign cases", () => {
    expect(summary.benign).toBe(0);
    const attacksOnly = summarize("t", [
      record({ config: "C0", id: "R-1", trial: 1, category: "real", fired: true }),
    ]);
    expect(attacksOnly.suites.real?.precision).toBeNull();
  });

  it("renders the tables and the causes in Markdown", () => {
    const md = renderPrecision("benign_corpus", precision).join("\n");
    expect(md).toContain("| C-app | 3/4 | 6/8 | 75.0% [");
    expect(md).toMatch(/\| sql \| 3 \| 2\/3 \| 0\/3 \|/);
    expect(md).toContain("  - L1: l1.sql (2 cases, 4 trials): BC-SQ-025, BC-SQ-038");
    expect(renderMarkdown(summary)).toContain("### Precision on `benign_corpus`");
  });
});

describe("mcpguard compare on suites", () => {
  const corpusRun = (broken: number) =>
    summarize(
      "r",
      [0, 1, 2, 3].map((i) => corpus({ config: "C-app", id: `BC-${i}`, passed: i >= broken })),
    );

  it("compares the FPR of a suite both runs measured, and flags a rise", () => {
    const rows = compareSummaries(corpusRun(2), corpusRun(1), DEFAULT_THRESHOLDS).filter((r) =>
      r.metric.startsWith("FPR benign_corpus"),
    );
    expect(rows).toEqual([
      expect.objectContaining({
        config: "C-app",
        metric: "FPR benign_corpus",
        delta: "-25.0 pp",
        regression: null,
      }),
    ]);
    const worse = compareSummaries(corpusRun(1), corpusRun(3), DEFAULT_THRESHOLDS);
    expect(worse.find((r) => r.metric === "FPR benign_corpus")?.regression).toMatch(/rose 50\.0 pp/);
  });

  it("leaves out a suite the baseline did not run", () => {
    const core = summarize("r", [record({ config: "C-app", id: "A", trial: 1 })]);
    expect(
      compareSummaries(core, corpusRun(1), DEFAULT_THRESHOLDS).some((r) => r.metric.startsWith("FPR ")),
    ).toBe(false);
  });
});
