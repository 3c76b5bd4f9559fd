import { describe, expect, it } from "vitest";
import { summarize } from "../src/summarize.ts";
import type { TrialRecord } from "../src/trial.ts";
import { record } from "./records.ts";

/** Three trial runs: A1 fires under C0 always, A2 in one of three runs (not viable), A3 never. */
function run(): TrialRecord[] {
  const records: TrialRecord[] = [];
  for (const trial of [1, 2, 3]) {
    records.push(record({ config: "C0", id: "A1", trial, fired: true }));
    records.push(record({ config: "C0", id: "A2", trial, fired: trial === 1 }));
    records.push(record({ config: "C0", id: "A3", trial, fired: false, visibility: "argument" }));
    records.push(record({ config: "C0", id: "B1", trial, kind: "benign", latencyMs: trial }));
    records.push(
      record({ config: "C-x", id: "A1", trial, fired: trial === 3, stoppedBy: trial === 3 ? null : "L2" }),
    );
    records.push(record({ config: "C-x", id: "A2", trial, fired: false, stoppedBy: "L1" }));
    records.push(record({ config: "C-x", id: "A3", trial, fired: false, visibility: "argument" }));
    records.push(
      record({ config: "C-x", id: "B1", trial, kind: "benign", passed: trial !== 2, latencyMs: 10 * trial }),
    );
    records.push(record({ config: "direct", id: "B1", trial, kind: "benign", latencyMs: 0.5 }));
  }
  records.push(record({ config: "C-x", id: "PE-02", trial: 0, fired: null, notRun: "host sudo usable" }));
  return records;
}

describe("summarize", () => {
  const s = summarize("t", run());

  it("finds the viable set by majority of C0 trials", () => {
    expect(s.viable).toBe(1);
    expect(s.attacks).toBe(3);
    expect(s.benign).toBe(1);
    expect(s.caseResults.find((r) => r.id === "A2" && r.config === "C0")).toMatchObject({
      fired: 1,
      trials: 3,
      viable: false,
    });
  });

  it("computes APR, V-APR and FPR over pooled trials with Wilson intervals", () => {
    const x = s.configs["C-x"]!;
    expect(x.apr?.value).toBeCloseTo(8 / 9, 12);
    expect(x.vapr?.value).toBeCloseTo(2 / 3, 12);
    expect(x.fpr?.value).toBeCloseTo(1 / 3, 12);
    expect(x.apr!.lo).toBeLessThan(8 / 9);
    expect(x.apr!.hi).toBeGreaterThan(8 / 9);
    expect(x).toMatchObject({ attacks: 3, viable: 1, blocked: 2, benign: 1, failed: 1 });
    const c0 = s.configs.C0!;
    expect(c0.apr?.value).toBeCloseTo(5 / 9, 12);
    expect(c0.vapr?.value).toBe(0);
  });

  it("gives per-run t-intervals, attribution, latency and hidden groups", () => {
    const x = s.configs["C-x"]!;
    expect(x.aprRuns).toMatchObject({ value: 8 / 9 });
    expect(x.fprRuns?.value).toBeCloseTo(1 / 3, 12);
    expect(x.stoppedBy).toEqual({ L2: 2, L1: 3, "no decision recorded": 3 });
    expect(s.caseResults.find((r) => r.id === "A1" && r.config === "C-x")?.stoppedBy).toBe("L2");
    expect(x.latencyMs).toMatchObject({ n: 3, p50: 20 });
    expect(s.direct).toMatchObject({ n: 3, p50: 0.5 });
    expect(s.hiddenGroups).toBe(2);
    expect(x.hiddenGroupsBlocked).toBe(1);
    expect(x.byVisibility.argument).toMatchObject({ attacks: 1, blocked: 1 });
  });

  it("reports cases not run and keeps them out of the counts", () => {
    expect(s.notRun).toEqual([{ id: "PE-02", config: "C-x", reason: "host sudo usable" }]);
    expect(s.caseResults.some((r) => r.id === "PE-02")).toBe(false);
    expect(Object.keys(s.configs).sort()).toEqual(["C-x", "C0"]);
  });

  it("keeps suites beside the core out of the paper comparison", () => {
    const corpus = [1, 2, 3].flatMap((trial) => [
      record({ config: "C0", id: "BC-1", trial, kind: "benign", category: "benign_corpus", server: "shell" }),
      record({
        config: "C-x",
        id: "BC-1",
        trial,
        kind: "benign",
        category: "benign_corpus",
        server: "shell",
        passed: false,
      }),
    ]);
    const mixed = summarize("t", [...run(), ...corpus]);
    expect(mixed.configs).toEqual(s.configs);
    expect(mixed.cases).toBe(s.cases);
    expect(mixed.benign).toBe(1);
    expect(mixed.suites.benign_corpus).toMatchObject({ cases: 1, attacks: 0, benign: 1 });
    expect(mixed.suites.benign_corpus?.configs["C-x"]).toMatchObject({ benign: 1, failed: 1 });
    expect(mixed.suites.benign_corpus?.configs["C-x"]?.fpr?.value).toBe(1);
    expect(mixed.suites.benign_corpus?.configs.C0?.byServer.shell).toMatchObject({ benign: 1, failed: 0 });
    expect(mixed.caseResults.filter((r) => r.id === "BC-1")).toHaveLength(2);
    expect(s.suites).toEqual({});
  });

  it("leaves V-APR empty when C0 did not run", () => {
    const without = summarize(
      "t",
      run().filter((r) => r.config !== "C0"),
    );
    expect(without.viable).toBeNull();
    expect(without.configs["C-x"]?.vapr).toBeNull();
  });

  it("times each suite: trials run, their summed and median duration, the core first", () => {
    const timed = summarize("t", [
      ...run().map((r) => ({ ...r, durationMs: r.config === "direct" ? 100 : 300 })),
      record({
        config: "C0",
        id: "BC-1",
        trial: 1,
        kind: "benign",
        category: "benign_corpus",
        durationMs: 50,
      }),
      record({
        config: "C-x",
        id: "BC-1",
        trial: 1,
        kind: "benign",
        category: "benign_corpus",
        durationMs: 70,
      }),
    ]);
    // 3 runs of 4 cases under C0 and C-x at 300 ms, 3 direct trials at 100 ms; PE-02 was not run.
    expect(timed.time).toEqual({
      core: { trials: 27, trialSeconds: 7.5, medianTrialMs: 300 },
      benign_corpus: { trials: 2, trialSeconds: 0.12, medianTrialMs: 60 },
    });
    expect(Object.keys(timed.time ?? {})).toEqual(["core", "benign_corpus"]);
  });
});
