import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCgroup2 } from "@mcpguard/proxy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostNotRun } from "../src/bench.ts";
import { resolveInterpreters } from "../src/interpreters.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import { ASSUME_NO_L3, environmentProblems, kernelLayerUnavailable, probeEnvironment } from "../src/probe.ts";
import { sweepTrialCgroups } from "../src/session.ts";
import { WorldFactory } from "../src/world/world.ts";

const world = { HOME: "/w/home", TMPDIR: "/w/tmp", PATH: "/usr/bin", LANG: "C.UTF-8" };

describe("environment probe", () => {
  let factory: WorldFactory;
  beforeAll(async () => {
    factory = await WorldFactory.create();
  });
  afterAll(() => factory.dispose());

  it("accepts C0, which keeps the world's environment", async () => {
    expect(await probeEnvironment("C0", factory, await resolveInterpreters())).toBeNull();
  });

  it("names every variable a config removed or changed", () => {
    expect(environmentProblems(world, world)).toEqual([]);
    expect(environmentProblems({ ...world, HOME: "/root", LANG: null, PATH: "" }, world)).toEqual([
      "removes PATH",
      "removes LANG",
      "changes HOME to /root",
    ]);
    expect(environmentProblems({ ...world, TMPDIR: "/tmp" }, world)).toEqual(["changes TMPDIR to /tmp"]);
  });
});

const cgroup2 = findCgroup2();
const parent = cgroup2 && join(cgroup2.mount, cgroup2.self);
const writable = (() => {
  if (!parent) return false;
  const probe = join(parent, `mcpguard-sweep-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
})();
if (!writable) console.warn("trial cgroup sweep test skipped: no writable cgroup2 hierarchy here");

describe.skipIf(!writable)("trial cgroups left behind", () => {
  it("are removed when their run is gone and they are empty, never while it runs or holds a process", () => {
    const gone = spawnSync("true").pid as number;
    const dead = join(parent as string, `mcpguard-trial-${gone}-1-deadbeef`);
    const live = join(parent as string, `mcpguard-trial-${process.pid}-999-deadbeef`);
    const busy = join(parent as string, `mcpguard-trial-${gone}-2-deadbeef`);
    for (const dir of [dead, live, busy]) mkdirSync(dir);
    // A process in the third, which stays while the sweep runs.
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    writeFileSync(join(busy, "cgroup.procs"), String(holder.pid));
    try {
      sweepTrialCgroups();
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(existsSync(busy)).toBe(true);
    } finally {
      holder.kill("SIGKILL");
      for (let i = 0; i < 100 && existsSync(busy); i++) {
        try {
          rmdirSync(busy);
        } catch {
          spawnSync("sleep", ["0.02"]);
        }
      }
      for (const dir of [live, dead]) if (existsSync(dir)) rmdirSync(dir);
    }
  });
});

describe("configs the host cannot enforce", () => {
  const why = () => "no backend enforces net (net: cgroup BPF unavailable)";

  it("are reported not run, with why, when the configs are the default; the rest run", () => {
    const skipped = hostNotRun(["C0", "C-AB", "C-app", "C-ebpf", "C-full", "C-AB+ebpf"], false, why);
    expect([...skipped]).toEqual(
      ["C-ebpf", "C-full", "C-AB+ebpf"].map((c) => [
        c,
        "the kernel layer cannot run here: no backend enforces net (net: cgroup BPF unavailable)",
      ]),
    );
    expect(hostNotRun(["C0", "C-full"], false, () => null).size).toBe(0);
    expect(hostNotRun(["C0", "C-app"], true, why).size).toBe(0);
  });

  it("refuse the run in one line when named", () => {
    expect(() => hostNotRun(["C0", "C-full"], true, why)).toThrow(
      /^C-full needs the kernel layer, which cannot run here: no backend enforces net \(net: cgroup BPF unavailable\) \(mcpguard doctor says more; without --configs the configs this host can enforce run\)$/,
    );
  });

  it(`${ASSUME_NO_L3}=1 stands for a host without the kernel layer`, () => {
    expect(kernelLayerUnavailable({ [ASSUME_NO_L3]: "1" })).toBe(`assumed absent (${ASSUME_NO_L3}=1)`);
  });
});

describe(`a bench where the kernel layer is missing (${ASSUME_NO_L3}=1, real trials)`, () => {
  const out = mkdtempSync(join(tmpdir(), "mcpguard-nol3-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const bench = (...args: string[]) =>
    spawnSync(process.execPath, [repoPath("runner", "bin", "mcpguard-bench.js"), ...args], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      env: { ...process.env, [ASSUME_NO_L3]: "1" },
      timeout: 60_000,
    });

  it("runs C0, C-AB and C-app by default and says in every output that the L3 configs were not run", () => {
    const r = bench(
      "--cases",
      "BN-08",
      "--no-direct",
      "--quiet",
      "--out",
      join(out, "run"),
      "--run-id",
      "nol3",
    );
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, "run", "summary.json"), "utf8"));
    expect(Object.keys(summary.configs)).toEqual(["C0", "C-AB", "C-app"]);
    const why = `the kernel layer cannot run here: assumed absent (${ASSUME_NO_L3}=1)`;
    expect(summary.configsNotRun).toEqual({ "C-ebpf": why, "C-full": why, "C-AB+ebpf": why });
    // The run's manifest names the configs once, and no case as not run.
    const manifest = JSON.parse(readFileSync(join(out, "run", "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ configsNotRun: summary.configsNotRun, casesNotRun: [] });
    expect(summary.notRun).toEqual(
      ["C-ebpf", "C-full", "C-AB+ebpf"].map((config) => ({ id: "BN-08", config, reason: why })),
    );
    const sentence = `C-ebpf, C-full and C-AB+ebpf were not run (${why})`;
    // Under the label of what it is, not "partial run".
    expect(r.stdout).toContain(`configs not run: ${sentence}`);
    const markdown = readFileSync(join(out, "run", "summary.md"), "utf8");
    expect(markdown).toContain(`> **Configs not run.** ${sentence}`);
    expect(readFileSync(join(out, "run", "index.html"), "utf8")).toContain(
      `<p data-caveat="configs-not-run"><strong>Configs not run.</strong> ${sentence}`,
    );
    // summary.md's Not run list: one line per config, not one per case.
    expect(markdown.slice(markdown.indexOf("## Not run")).trim().split("\n").slice(2)).toEqual(
      ["C-ebpf", "C-full", "C-AB+ebpf"].map((config) => `- config ${config} (1 case): not run: ${why}`),
    );
    // results.csv: a row for each config and case not run, with why in the last column.
    const csv = readFileSync(join(out, "run", "results.csv"), "utf8")
      .trim()
      .split("\n");
    expect(csv[0]).toMatch(/,suite,not_run$/);
    expect(csv.filter((line) => line.endsWith(`,core,${why}`)).map((line) => line.split(",")[1])).toEqual([
      "C-AB+ebpf",
      "C-ebpf",
      "C-full",
    ]);
    expect(csv.filter((line) => line.endsWith(",core,"))).toHaveLength(3);
    const trials = readFileSync(join(out, "run", "trials.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(trials.filter((t) => t.notRun === why).map((t) => t.config)).toEqual([
      "C-ebpf",
      "C-full",
      "C-AB+ebpf",
    ]);
  });

  it("fails in one line when an unavailable config is named, and writes nothing", () => {
    const r = bench("--configs", "C0,C-full", "--cases", "BN-08", "--out", join(out, "named"));
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `mcpguard bench: C-full needs the kernel layer, which cannot run here: assumed absent (${ASSUME_NO_L3}=1) (mcpguard doctor says more; without --configs the configs this host can enforce run)\n`,
    );
    expect(existsSync(join(out, "named"))).toBe(false);
  });
});
