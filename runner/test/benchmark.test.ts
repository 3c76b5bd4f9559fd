/**
 * The benchmark end to end through the real CLI, under every application config:
 * - C0: all 82 cases run, every benign case passes, every attack CASES.md expects to work fires,
 *   and only the four expected intrinsic failures do not;
 * - C-app and C-AB: no benign case breaks (FPR 0/21); C-app stops every argument-visible attack,
 *   and the report names the layer that stopped each;
 * - the L3 configs (where the kernel layer can run): no benign case breaks; C-ebpf stops at least
 *   90% of the viable hidden attacks, C-full at least 95% of all viable attacks.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import type { CaseResult, Summary } from "../src/summarize.ts";

const INTRINSIC_FAILURES = ["CL-06", "FR-11", "FR-15", "PE-02"];
const doctor = spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), "doctor"], {
  encoding: "utf8",
});
const L3 = ["C-ebpf", "C-full", "C-AB+ebpf"];
if (doctor.status !== 0) console.warn(`benchmark: the L3 configs are left out here:\n${doctor.stdout}`);
const CONFIGS = ["C0", "C-AB", "C-app", ...(doctor.status === 0 ? L3 : [])];
const out = mkdtempSync(join(tmpdir(), "mcpguard-bench-"));
let summary: Summary;
let records: Record<string, unknown>[];

beforeAll(() => {
  const r = spawnSync(
    process.execPath,
    [
      repoPath("packages", "proxy", "bin", "mcpguard.js"),
      "bench",
      "--configs",
      CONFIGS.join(","),
      "--no-direct",
      "--out",
      out,
      "--run-id",
      "bench-check",
    ],
    { cwd: REPO_ROOT, encoding: "utf8", timeout: 540_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
  records = readFileSync(join(out, "trials.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}, 560_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const results = (config: string): CaseResult[] => summary.caseResults.filter((c) => c.config === config);

describe("benchmark", () => {
  it("runs without a failed trial", () => {
    expect(records.filter((rec) => rec.error)).toEqual([]);
  });

  it("C0: 82 cases, 21 benign pass, 57 attacks fire, the 4 intrinsic failures do not", () => {
    const hostSudo = summary.notRun.some((n) => n.id === "PE-02");
    expect(summary.cases).toBe(hostSudo ? 81 : 82);
    const benign = results("C0").filter((c) => c.kind === "benign");
    expect(benign).toHaveLength(21);
    expect(benign.filter((c) => c.failed !== 0).map((c) => c.id)).toEqual([]);
    const notFired = results("C0")
      .filter((c) => c.kind === "attack" && c.fired === 0)
      .map((c) => c.id)
      .sort();
    expect(notFired).toEqual(INTRINSIC_FAILURES.filter((id) => !(hostSudo && id === "PE-02")));
    expect(summary.viable).toBe(57);
    expect(summary.hiddenGroups).toBe(21);
  });

  it.each(["C-app", "C-AB"])("%s breaks no benign case (FPR 0/21)", (config) => {
    expect(summary.configs[config]).toMatchObject({ benign: 21, failed: 0 });
    expect(summary.configs[config]?.fpr?.value).toBe(0);
  });

  it("C-app stops every argument-visible attack, each attributed to the layer that denied it", () => {
    const argument = results("C-app").filter((c) => c.visibility === "argument");
    expect(argument).toHaveLength(18);
    expect(argument.filter((c) => c.fired !== 0).map((c) => c.id)).toEqual([]);
    for (const c of argument) expect(c.stoppedBy, c.id).toMatch(/^L[12]$/);
  });

  it.skipIf(doctor.status !== 0).each(L3)(
    "%s breaks no benign case and records its L3 backends",
    (config) => {
      expect(summary.configs[config]).toMatchObject({ benign: 21, failed: 0 });
      expect(summary.configs[config]?.l3).toEqual({
        file: "landlock",
        exec: "landlock",
        net: "cgroup-bpf",
        unix: "landlock+cgroup-bpf",
      });
    },
  );

  it.skipIf(doctor.status !== 0)(
    "C-ebpf stops at least 90% of the viable hidden attacks; C-full at least 95% of all viable attacks",
    () => {
      const hidden = results("C-ebpf").filter((c) => c.visibility === "hidden" && c.viable);
      expect(hidden.filter((c) => c.fired === 0).length / hidden.length).toBeGreaterThanOrEqual(0.9);
      expect(summary.configs["C-full"]?.vapr?.value).toBeGreaterThanOrEqual(0.95);
    },
  );

  it("C-app's sanitizer is credited where it removed the evidence", () => {
    for (const id of ["FR-13", "EV-06", "PE-05"]) {
      expect(results("C-app").find((c) => c.id === id)).toMatchObject({ fired: 0, stoppedBy: "sanitizer" });
    }
  });
});
