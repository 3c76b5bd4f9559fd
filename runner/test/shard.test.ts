/** Sharding a run across CI runners, and merging the shards back into one run. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planTasks, shardTasks } from "../src/bench.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import { loadScenarios } from "../src/scenario.ts";
import { suitePaths } from "../src/select.ts";

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-shard-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const mcpguard = (...args: string[]) =>
  spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 240_000,
  });
const records = (dir: string) =>
  readFileSync(join(dir, "trials.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
const key = (r: { config: string; id: string; trial: number }) => `${r.config} ${r.id} ${r.trial}`;

describe("shards", () => {
  it("are disjoint and cover every trial", () => {
    const { scenarios } = loadScenarios(suitePaths("core"));
    const plan = {
      configs: ["C0", "C-AB", "C-app", "C-ebpf", "C-full", "C-AB+ebpf"],
      scenarios,
      trials: 5,
      direct: true,
    };
    const all = planTasks(plan).map((t) => `${t.config} ${t.scenario.id} ${t.trial}`);
    expect(new Set(all).size).toBe(all.length);
    for (const n of [1, 2, 3, 7]) {
      const slices = Array.from({ length: n }, (_, i) =>
        shardTasks(planTasks(plan), { index: i + 1, count: n }),
      );
      const union = slices.flat().map((t) => `${t.config} ${t.scenario.id} ${t.trial}`);
      expect(union.length, `n=${n}`).toBe(all.length);
      expect(new Set(union)).toEqual(new Set(all));
      // Every shard gets a share of every config, so shards take about as long as each other.
      for (const slice of slices)
        expect(Math.max(...slices.map((s) => s.length)) - slice.length).toBeLessThanOrEqual(1);
    }
  });

  it("run their slice through the CLI and merge into the run an unsharded run would have made", () => {
    const common = [
      "--configs",
      "C0,C-AB",
      "--cases",
      "BN-06,CL-05,EX-03",
      "--trials",
      "2",
      "--run-id",
      "sharded",
      "--quiet",
    ];
    const dirs = [1, 2, 3].map((i) => join(scratch, `shard-${i}`));
    for (const [i, dir] of dirs.entries()) {
      const r = mcpguard("bench", ...common, "--shard", `${i + 1}/3`, "--out", dir);
      expect(r.status, r.stderr).toBe(0);
    }
    const byShard = dirs.map((d) => records(d).map(key));
    const union = byShard.flat();
    expect(new Set(union).size).toBe(union.length);
    expect(union).toHaveLength(3 * 2 * 2 + 2 * 2); // cases x configs x trials + the benign cases direct
    const merged = join(scratch, "merged");
    const m = mcpguard("bench", "merge", "--out", merged, ...dirs);
    expect(m.status, m.stderr).toBe(0);
    expect(records(merged)).toHaveLength(union.length);
    expect(JSON.parse(readFileSync(join(merged, "manifest.json"), "utf8")).mergedFrom).toEqual(dirs);
    expect(
      mcpguard("bench", "merge", "--out", join(scratch, "twice"), dirs[0] as string, dirs[0] as string)
        .stderr,
    ).toMatch(/both hold/);
    // Two of three shards are not the run: refused in one line, nothing written, unless --partial.
    const two = mcpguard(
      "bench",
      "merge",
      "--out",
      join(scratch, "two"),
      dirs[0] as string,
      dirs[1] as string,
    );
    expect(two.status).toBe(2);
    expect(two.stderr).toBe(
      "mcpguard bench: not one whole run: missing shard 3/3 (2 of 3 given); pass --partial to merge what is there (the summary then says it is partial)\n",
    );
    expect(existsSync(join(scratch, "two"))).toBe(false);
    const partial = mcpguard(
      "bench",
      "merge",
      "--partial",
      "--out",
      join(scratch, "two"),
      dirs[0] as string,
      dirs[1] as string,
    );
    expect(partial.status, partial.stderr).toBe(0);
    expect(partial.stdout).toContain("partial: merged from an incomplete shard set: missing shard 3/3");
    expect(JSON.parse(readFileSync(join(scratch, "two", "summary.json"), "utf8")).partial).toBe(
      "merged from an incomplete shard set: missing shard 3/3 (2 of 3 given)",
    );
    expect(readFileSync(join(scratch, "two", "summary.md"), "utf8")).toContain(
      "> **Partial run.** This run was merged from an incomplete shard set: missing shard 3/3 (2 of 3 given).",
    );
    // A shard of other run parameters (here: more trials) does not belong to the run.
    const other = join(scratch, "other-3");
    mkdirSync(other);
    writeFileSync(join(other, "trials.ndjson"), readFileSync(join(dirs[2] as string, "trials.ndjson")));
    const manifest = JSON.parse(readFileSync(join(dirs[2] as string, "manifest.json"), "utf8"));
    writeFileSync(join(other, "manifest.json"), JSON.stringify({ ...manifest, trials: 3 }));
    const mixed = mcpguard(
      "bench",
      "merge",
      "--out",
      join(scratch, "mixed"),
      dirs[0] as string,
      dirs[1] as string,
      other,
    );
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toMatch(
      /^mcpguard bench: not one whole run: the shards ran different trials; pass --partial/,
    );
    // A shard's manifest that is not one: one line naming the file, no stack trace, nothing merged.
    writeFileSync(join(dirs[2] as string, "manifest.json"), '{"wallMs": "soon"}');
    const bad = mcpguard("bench", "merge", "--out", join(scratch, "bad"), ...dirs);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/shard-3\/manifest\.json: not a manifest\.json \(wallMs: /);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(scratch, "bad"))).toBe(false);
  });

  it("merge of 3 shards of the same records equals the unsharded summary", () => {
    const full = join(scratch, "full");
    const r = mcpguard(
      "bench",
      "--configs",
      "C0,C-AB",
      "--cases",
      "BN-06,CL-05,EX-03,CL-07",
      "--trials",
      "2",
      "--run-id",
      "whole",
      "--quiet",
      "--out",
      full,
    );
    expect(r.status, r.stderr).toBe(0);
    const all = records(full);
    // Split the stored records as the shards would have made them, in a scrambled order.
    const tasks = all.map(key);
    const parts = [0, 1, 2].map((i) => join(scratch, `part-${i}`));
    for (const [i, dir] of parts.entries()) {
      mkdirSync(dir);
      const mine = all.filter((rec) => tasks.indexOf(key(rec)) % 3 === i).reverse();
      writeFileSync(join(dir, "trials.ndjson"), mine.map((rec) => `${JSON.stringify(rec)}\n`).join(""));
      // Each part says which shard it is, as a shard's manifest does.
      const manifest = JSON.parse(readFileSync(join(full, "manifest.json"), "utf8"));
      writeFileSync(
        join(dir, "manifest.json"),
        JSON.stringify({ ...manifest, shard: { index: i + 1, count: 3 } }),
      );
    }
    const merged = join(scratch, "merged-same");
    const m = mcpguard("bench", "merge", "--out", merged, ...parts);
    expect(m.status, m.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(merged, "summary.json"), "utf8"))).toEqual(
      JSON.parse(readFileSync(join(full, "summary.json"), "utf8")),
    );
  });
});
