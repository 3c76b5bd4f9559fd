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

  it("does not fail a p50 rise that the runs' own spread explains, and still fails one beyond it", () => {
    /** 21 benign first calls around `p50`, spread as on a machine running four trials on two cores. */
    const spread = (p50: number, sd: number) => {
      const summary = run(4, 0);
      (summary.configs["C-x"] as { latencyMs: object }).latencyMs = {
        n: 21,
        p50,
        sd,
        mean: p50,
        p95: 3 * p50,
        p99: 4 * p50,
      };
      return summary;
    };
    const noisy = compareSummaries(spread(8.2, 10.5), spread(14.3, 15.9), DEFAULT_THRESHOLDS);
    const row = noisy.find((r) => r.config === "C-x" && r.metric === "p50 ms");
    expect(row?.regression).toBeNull();
    expect(row?.delta).toMatch(/^\+74% \(noise ±\d+\.\d ms\)$/);
    const real = compareSummaries(spread(8.2, 2), spread(14.3, 2), DEFAULT_THRESHOLDS);
    expect(real.find((r) => r.config === "C-x" && r.metric === "p50 ms")?.regression).toBe(
      "p50 latency rose 74% (allowed 50%)",
    );
  });

  it("compares latencies across machines of different speed through the runs' direct trials", () => {
    /** A run whose direct trials and C-x have these p50s, spread as 21 first calls on a busy machine. */
    const on = (direct: number, cx: number, spread = 0.25) => {
      const summary = run(4, 0);
      const latency = (p50: number) => ({
        n: 21,
        p50,
        sd: p50 * spread,
        mean: p50,
        p95: 2 * p50,
        p99: 3 * p50,
      });
      (summary.configs["C-x"] as { latencyMs: object }).latencyMs = latency(cx);
      summary.direct = latency(direct);
      return summary;
    };
    const p50 = (rows: ReturnType<typeof compareSummaries>, config: string) =>
      rows.find((r) => r.config === config && r.metric === "p50 ms");
    // The same build on a machine 2.6 times slower: everything moved with the direct trials.
    const slower = compareSummaries(on(4.2, 12), on(11, 31), DEFAULT_THRESHOLDS);
    expect(slower.filter((r) => r.regression)).toEqual([]);
    expect(p50(slower, "direct")?.delta).toMatch(/a slower machine, .* ×2\.62$/);
    expect(p50(slower, "C-x")?.baseline).toBe("12.000 ×2.62 = 31.429");
    // A proxy that got slower on that machine is still caught.
    expect(p50(compareSummaries(on(4.2, 12), on(11, 60), DEFAULT_THRESHOLDS), "C-x")?.regression).toBe(
      "p50 latency rose 91% over the baseline's ×2.62 (a slower machine) (allowed 50%)",
    );
    // First calls with a heavy tail (sd three times the p50, as with a few slow starts among 21):
    // the direct p50s' noise band is wide, but a ratio past the threshold still tells the machines apart.
    expect(p50(compareSummaries(on(4.2, 12, 3), on(11, 31, 3), DEFAULT_THRESHOLDS), "C-x")?.baseline).toBe(
      "12.000 ×2.62 = 31.429",
    );
    // On a faster machine the baseline is not scaled down: that would be stricter than without the control.
    const faster = compareSummaries(on(11, 31), on(4.2, 20), DEFAULT_THRESHOLDS);
    expect(p50(faster, "C-x")).toMatchObject({ baseline: "31.000", regression: null });
    // Direct trials within their noise: nothing is scaled, so a regression is judged as before.
    const same = compareSummaries(on(4.2, 12), on(4.4, 30), DEFAULT_THRESHOLDS);
    expect(p50(same, "direct")?.delta).not.toMatch(/slower machine/);
    expect(p50(same, "C-x")?.regression).toBe("p50 latency rose 150% (allowed 50%)");
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
    // A negative latency would turn the direct trials' machine scale upside down: refused.
    const negative = join(scratch, "negative.json");
    writeFileSync(negative, JSON.stringify({ ...run(4, 0), direct: { n: 21, p50: -5, sd: 1 } }));
    const refused = cli(negative, cur);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/negative\.json: not a summary\.json \(direct\.p50: /);
  });
});
