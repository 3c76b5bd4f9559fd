/**
 * The benchmark's baseline, end to end through the real CLI: under C0 all 82 cases run, every
 * benign case passes, every attack CASES.md expects to work fires, and only the four expected
 * intrinsic failures do not.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import type { Summary } from "../src/summarize.ts";

const INTRINSIC_FAILURES = ["CL-06", "FR-11", "FR-15", "PE-02"];
const out = mkdtempSync(join(tmpdir(), "mcpguard-c0-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

it("C0: 82 cases, 21 benign pass, 57 attacks fire, the 4 intrinsic failures do not", () => {
  const r = spawnSync(
    process.execPath,
    [
      repoPath("packages", "proxy", "bin", "mcpguard.js"),
      "bench",
      "--configs",
      "C0",
      "--no-direct",
      "--out",
      out,
      "--run-id",
      "c0-check",
    ],
    { cwd: REPO_ROOT, encoding: "utf8", timeout: 240_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
  const hostSudo = summary.notRun.some((n) => n.id === "PE-02");
  expect(summary.cases).toBe(hostSudo ? 81 : 82);
  const results = summary.caseResults.filter((c) => c.config === "C0");
  const benign = results.filter((c) => c.kind === "benign");
  expect(benign).toHaveLength(21);
  expect(benign.filter((c) => c.failed !== 0).map((c) => c.id)).toEqual([]);
  const attacks = results.filter((c) => c.kind === "attack");
  expect(
    attacks
      .filter((c) => c.fired === 0)
      .map((c) => c.id)
      .sort(),
  ).toEqual(INTRINSIC_FAILURES.filter((id) => !(hostSudo && id === "PE-02")));
  expect(summary.viable).toBe(57);
  expect(summary.hiddenGroups).toBe(21);
  const records = readFileSync(join(out, "trials.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(records.filter((rec) => rec.error)).toEqual([]);
}, 250_000);
