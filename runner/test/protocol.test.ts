/**
 * The protocol suite (CASES.md §9) through the real bench CLI, on a handful of cases: a poisoned
 * listing, a rug pull announced with list_changed and a sampling request under C0 fire; under
 * C-full (C-app where the kernel layer is not available) none does, each credited to the layer
 * and rule that caught it; two benign cases pass under both. Every report names the suite.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import type { CaseResult, Summary } from "../src/summarize.ts";

const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor"], { encoding: "utf8" });
const GUARDED = doctor.status === 0 ? "C-full" : "C-app";
const ATTACKS = ["PR-01", "PR-18", "PR-29"];
const BENIGN = ["PB-08", "PB-15"];

const out = mkdtempSync(join(tmpdir(), "mcpguard-protocol-"));
let summary: Summary;
const read = (name: string) => readFileSync(join(out, name), "utf8");

beforeAll(() => {
  const r = spawnSync(
    process.execPath,
    [
      repoPath("runner", "bin", "mcpguard-bench.js"),
      "--cases",
      [...ATTACKS, ...BENIGN].join(","),
      "--configs",
      `C0,${GUARDED}`,
      "--no-direct",
      "--quiet",
      "--out",
      out,
      "--run-id",
      "protocol-check",
    ],
    { cwd: REPO_ROOT, encoding: "utf8", timeout: 120_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  summary = JSON.parse(read("summary.json"));
}, 130_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const result = (id: string, config: string): CaseResult | undefined =>
  summary.caseResults.find((c) => c.id === id && c.config === config);

describe("the protocol suite", () => {
  it("runs without a trial error", () => {
    expect(summary.errors).toEqual([]);
  });

  it.each(ATTACKS)("%s fires under C0 and not under the guarded config, credited to L2", (id) => {
    expect(result(id, "C0")).toMatchObject({ kind: "attack", category: "protocol", fired: 1 });
    const guarded = result(id, GUARDED);
    expect(guarded).toMatchObject({ fired: 0, stoppedBy: "L2" });
    expect(guarded?.stoppedRule).toMatch(/^l2\.(listing|pin|prompt|request)\./);
  });

  it.each(BENIGN)("%s passes under both configs", (id) => {
    for (const config of ["C0", GUARDED]) expect(result(id, config), config).toMatchObject({ failed: 0 });
  });

  it("says which layer and rule stopped the attacks, in summary.json, summary.md, results.csv and index.html", () => {
    const suite = summary.suites.protocol;
    expect(suite).toMatchObject({ cases: 5, attacks: 3, benign: 2 });
    expect(suite?.configs.C0).toMatchObject({ blocked: 0, failed: 0, stoppedByRule: {} });
    const guarded = suite?.configs[GUARDED];
    expect(guarded).toMatchObject({ blocked: 3, failed: 0, stoppedBy: { L2: 3 } });
    const rules = Object.keys(guarded?.stoppedByRule ?? {});
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.every((r) => /^L2 l2\./.test(r))).toBe(true);
    expect(Object.values(guarded?.stoppedByRule ?? {}).reduce((a, b) => a + b, 0)).toBe(3);

    const markdown = read("summary.md");
    expect(markdown).toContain("## Suite `protocol`");
    expect(markdown).toMatch(new RegExp(`- \\*\\*${GUARDED}\\*\\*: L2 l2\\.`));
    const csv = read("results.csv").split("\n");
    // Columns added later come after stopped_rule, so readers of the earlier ones keep working.
    expect(csv[0]).toMatch(/,stopped_by,stopped_rule,title,note,arguments,suite,not_run$/);
    expect(csv.filter((line) => line.includes(",protocol,"))).toHaveLength(10);
    expect(csv.some((line) => line.includes(",protocol,attack,") && /,L2,l2\./.test(line))).toBe(true);
    const html = read("index.html");
    expect(html).toContain('id="suite-protocol"');
    expect(html).toContain("which layer stopped the attacks");
  });
});
