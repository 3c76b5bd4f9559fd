import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** Runs made by the real bench (C0 and C-app, 1 trial), and runs derived from their records. */
describe("compare checks identity before numbers", () => {
  const mcpguard = (...args: string[]) =>
    spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), ...args], {
      cwd: repoPath(),
      encoding: "utf8",
      timeout: 120_000,
    });
  const bench = (out: string, cases: string) => {
    const r = mcpguard(
      "bench",
      "--configs",
      "C0,C-app",
      "--cases",
      cases,
      "--trials",
      "1",
      "--no-direct",
      "--quiet",
      "--run-id",
      basename(out),
      "--out",
      out,
    );
    expect(r.status, r.stderr).toBe(0);
    return join(out, "summary.json");
  };
  const lines = (dir: string) =>
    readFileSync(join(dir, "trials.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as TrialRecord & { caseSha256?: string });
  /** A run made of `records`, its summary as `mcpguard report` would rebuild it. */
  const derived = (name: string, records: TrialRecord[]) => {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "trials.ndjson"), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    writeFileSync(join(dir, "summary.json"), JSON.stringify(summarize(name, records)));
    return join(dir, "summary.json");
  };
  const compare = (...args: string[]) => mcpguard("compare", ...args, "--junit", join(scratch, "cmp.xml"));
  let base: string;
  let subset: string;
  beforeAll(() => {
    base = bench(join(scratch, "base"), "BN-01,FR-05");
    subset = bench(join(scratch, "subset"), "BN-01");
  }, 120_000);

  it("passes a run against itself, identical by id and sha256", () => {
    expect(Object.keys(JSON.parse(readFileSync(base, "utf8")).caseHashes)).toEqual(["BN-01", "FR-05"]);
    const r = compare(base, base);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Same cases (by id and sha256), configs and trials per case in both runs.");
    expect(r.stdout).toContain("4 case results compared (2 cases × 2 configs); 0 flipped.");
  });

  it("refuses a subset, other trials, other case bytes and a missing config in one line, exit 2", () => {
    const one = (r: ReturnType<typeof compare>) => {
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      return r.stderr;
    };
    expect(one(compare(base, subset))).toMatch(
      /^mcpguard compare: the runs do not compare like with like: the current run lacks 1 of the baseline's 2 cases \(FR-05\); pass --allow-subset/,
    );
    const records = lines(join(scratch, "base"));
    const twice = derived("twice", [...records, ...records.map((r) => ({ ...r, trial: 2 }))]);
    expect(one(compare(base, twice))).toMatch(
      /trials per case differ in 4 case results \(BN-01 under C0: 1 in the baseline, 2 in the current run;/,
    );
    const edited = derived(
      "edited",
      records.map((r) => (r.id === "FR-05" ? { ...r, caseSha256: "0".repeat(64) } : r)),
    );
    expect(one(compare(base, edited))).toMatch(
      /1 case differ in content, the sha256 of the scenario file \(FR-05\)/,
    );
    const noApp = derived(
      "no-app",
      records.filter((r) => r.config !== "C-app"),
    );
    expect(one(compare(base, noApp))).toMatch(/the current run lacks config C-app/);
    // --configs compares the configs both runs have.
    expect(compare(base, noApp, "--configs", "C0").status).toBe(0);
    expect(one(compare(base, noApp, "--configs", "C0,C-app"))).toMatch(/the current run has no config C-app/);
  });

  it("with --allow-subset compares the intersection and says what it left out", () => {
    const r = compare(base, subset, "--allow-subset");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Restricted to what both runs ran (--allow-subset): left out 1 of the baseline's cases and 0 of the current run's.",
    );
    expect(r.stdout).toContain("2 case results compared (1 case × 2 configs); 0 flipped.");
    // The rates are the intersection's: no attack left, so no APR on either side.
    expect(r.stdout).toMatch(/\| C-app \| APR \| – \| – \|/);
  });

  it("reports a flipped case with its trials in Markdown and JUnit, and fails on it", () => {
    const records = lines(join(scratch, "base"));
    const broken = derived(
      "broken",
      records.map((r) =>
        r.config === "C-app" && r.id === "BN-01" ? { ...r, passed: false, evidence: [] } : r,
      ),
    );
    const r = compare(base, broken);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain("4 case results compared (2 cases × 2 configs); 1 flipped.");
    expect(r.stdout).toMatch(
      /\| BN-01 \| C-app \| passed \(failed 0\/1\) \| failed \(failed 1\/1\) \| ❌ regression \| current trial 1 failed, oracle saw nothing<br>baseline trial 1 passed, oracle saw response_matches \|/,
    );
    const xml = readFileSync(join(scratch, "cmp.xml"), "utf8");
    expect(xml).toContain(
      '<testcase classname="mcpguard.compare.cases" name="C-app BN-01"><failure message="BN-01 under C-app: passed → failed">',
    );
    expect(xml).toMatch(/<testsuite name="mcpguard compare: cases" tests="4" failures="1">/);
    // The other way round it is an improvement: reported, not failed.
    const back = compare(broken, base, "--max-fpr-rise", "0");
    expect(back.stdout).toMatch(
      /\| BN-01 \| C-app \| failed \(failed 1\/1\) \| passed \(failed 0\/1\) \| flipped \|/,
    );
  });

  it("treats a config not run as not comparable, never as zero", () => {
    const records = lines(join(scratch, "base"));
    const notRun = derived(
      "not-run",
      records.map((r) =>
        r.config === "C-app"
          ? { ...r, trial: 0, fired: null, passed: null, evidence: [], notRun: "no Landlock on this host" }
          : r,
      ),
    );
    const r = compare(base, notRun);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /\| C-app \| V-APR \| [^|]+ \| not run: no Landlock on this host \| – \| not comparable: not run in the current run \(no Landlock on this host\) \|/,
    );
    expect(r.stdout).not.toMatch(/\| C-app \| (APR|FPR) \|/);
    expect(r.stdout).toContain("2 case results compared (2 cases × 1 config); 0 flipped.");
    expect(readFileSync(join(scratch, "cmp.xml"), "utf8")).toMatch(
      /name="C-app V-APR"><skipped message="not comparable: not run in the current run/,
    );
  });
});
