import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareSummaries, DEFAULT_THRESHOLDS, renderJunit } from "../src/compare.ts";
import { repoPath } from "../src/paths.ts";
import { summarize } from "../src/summarize.ts";
import type { TrialRecord } from "../src/trial.ts";
import { record as caseRecord } from "./records.ts";

function record(
  config: string,
  id: string,
  kind: "attack" | "benign",
  ok: boolean,
  latencyMs = 1,
): TrialRecord {
  return caseRecord({
    runId: "r",
    config,
    id,
    kind,
    server: "s",
    trial: 1,
    fired: kind === "attack" ? !ok : null,
    passed: kind === "benign" ? ok : null,
    latencyMs,
  });
}

/** C0 where every attack fires, and C-x that blocks `blocked` of 4 attacks and breaks `broken` of 2 benign cases. */
function run(blocked: number, broken: number, latency = 1) {
  const records: TrialRecord[] = [];
  for (let i = 0; i < 4; i++) {
    records.push(record("C0", `A${i}`, "attack", false));
    records.push(record("C-x", `A${i}`, "attack", i < blocked, latency));
  }
  for (let i = 0; i < 2; i++) {
    records.push(record("C0", `B${i}`, "benign", true));
    records.push(record("C-x", `B${i}`, "benign", i >= broken, latency));
  }
  return summarize("r", records);
}

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-compare-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("compare", () => {
  it("passes on identical inputs", () => {
    const rows = compareSummaries(run(4, 0), run(4, 0), DEFAULT_THRESHOLDS);
    expect(rows.filter((r) => r.regression)).toEqual([]);
    expect(rows.find((r) => r.config === "C-x" && r.metric === "V-APR")).toMatchObject({ delta: "+0.0 pp" });
  });

  it("flags a V-APR drop, an FPR rise and a latency rise beyond the thresholds", () => {
    const rows = compareSummaries(run(4, 0, 1), run(3, 1, 3), DEFAULT_THRESHOLDS);
    const failed = Object.fromEntries(
      rows.filter((r) => r.regression && r.config === "C-x").map((r) => [r.metric, r.regression]),
    );
    expect(failed).toEqual({
      "V-APR": "V-APR dropped 25.0 pp (allowed 0)",
      FPR: "FPR rose 50.0 pp (allowed 0)",
      "p50 ms": "p50 latency rose 200% (allowed 50%)",
    });
    const lenient = compareSummaries(run(4, 0, 1), run(3, 1, 3), {
      maxVaprDrop: 30,
      maxFprRise: 60,
      maxP50Rise: 250,
      maxErrors: 0,
    });
    expect(lenient.filter((r) => r.regression)).toEqual([]);
  });

  it("flags a config missing from the current run", () => {
    const current = run(4, 0);
    delete current.configs["C-x"];
    expect(compareSummaries(run(4, 0), current, DEFAULT_THRESHOLDS).filter((r) => r.regression)).toEqual([
      expect.objectContaining({ config: "C-x", regression: "the config is missing from the current run" }),
    ]);
  });

  it("writes JUnit XML with one failure per regression", () => {
    const xml = renderJunit(compareSummaries(run(4, 0), run(3, 0), DEFAULT_THRESHOLDS));
    expect(xml).toMatch(/<testsuites tests="\d+" failures="1">/);
    expect(xml).toContain(
      '<testcase classname="mcpguard.compare" name="C-x V-APR"><failure message="V-APR dropped 25.0 pp (allowed 0)">',
    );
  });

  it("exits non-zero on a regression through the CLI and prints Markdown", () => {
    const base = join(scratch, "base.json");
    const cur = join(scratch, "cur.json");
    writeFileSync(base, JSON.stringify(run(4, 0)));
    writeFileSync(cur, JSON.stringify(run(2, 0)));
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), "compare", ...args], {
        encoding: "utf8",
      });
    const bad = cli(base, cur, "--junit", join(scratch, "junit.xml"));
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(
      /\| C-x \| V-APR \| 100\.0% .* \| 50\.0% .* \| -50\.0 pp \| ❌ V-APR dropped 50\.0 pp/,
    );
    expect(readFileSync(join(scratch, "junit.xml"), "utf8")).toContain("<failure");
    expect(cli(base, base).status).toBe(0);
    expect(cli(base, cur, "--max-vapr-drop", "60").status).toBe(0);
    expect(cli(base, join(scratch, "nope.json")).stderr).toMatch(/not a summary\.json/);
  });
});
