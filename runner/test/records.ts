/** Trial records for tests of the stages after the run: a hidden attack or a benign case, all measurements set. */
import type { TrialRecord } from "../src/trial.ts";

export function record(
  partial: Partial<TrialRecord> & Pick<TrialRecord, "config" | "id" | "trial">,
): TrialRecord {
  const attack = partial.kind !== "benign";
  return {
    runId: "t",
    category: attack ? "file_read" : "benign",
    kind: attack ? "attack" : "benign",
    visibility: attack ? "hidden" : null,
    server: "malicious",
    tool: partial.id,
    fired: attack ? false : null,
    passed: attack ? null : true,
    evidence: [],
    stoppedBy: null,
    isError: false,
    latencyMs: 1,
    startMs: 10,
    durationMs: 20,
    responseBytes: 0,
    responseSha256: "",
    sinkContacts: 0,
    sinkBytes: 0,
    sinkSha256: "",
    containment: "cgroup",
    error: null,
    notRun: null,
    l3: null,
    ...partial,
  };
}
