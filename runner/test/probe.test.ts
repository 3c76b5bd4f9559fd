import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findCgroup2 } from "@mcpguard/proxy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { environmentProblems, probeEnvironment } from "../src/probe.ts";
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
