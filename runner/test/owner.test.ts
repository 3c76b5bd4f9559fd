/** The worlds of killed runs are swept, and nobody else's (src/world/owner.ts). */
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";
import { processStart, sweepDeadRuns } from "../src/world/owner.ts";

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "mcpguard-owner-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const boot = () => readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim();
const pidns = () => statSync("/proc/self/ns/pid").ino;

/** A run folder under `base` whose `.owner` says `owner` (undefined: none written). */
function runDir(base: string, name: string, owner?: unknown): string {
  const dir = join(base, name);
  mkdirSync(join(dir, "template"), { recursive: true });
  if (owner !== undefined) writeFileSync(join(dir, ".owner"), JSON.stringify(owner));
  return dir;
}

describe("sweepDeadRuns", () => {
  it("removes a killed run's worlds, made by the real WorldFactory, and not while it runs", async () => {
    const base = join(scratch, "real");
    const world = pathToFileURL(repoPath("runner", "dist", "world", "world.js")).href;
    const child = spawn(
      process.execPath,
      [
        "-e",
        `import(${JSON.stringify(world)}).then((m) => m.WorldFactory.create({ baseDir: ${JSON.stringify(base)} })).then((f) => { console.log(f.runDir); setInterval(() => {}, 1000); });`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const [line] = (await once(child.stdout, "data")) as [Buffer];
    const made = line.toString().trim();
    expect(existsSync(join(made, "template", "workspace"))).toBe(true);
    expect(sweepDeadRuns(base)).toEqual([]);
    expect(existsSync(made)).toBe(true);
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(sweepDeadRuns(base)).toEqual([made.slice(base.length + 1)]);
    expect(existsSync(made)).toBe(false);
  }, 60_000);

  it("judges by pid and start time in this PID namespace, and leaves what it cannot judge", async () => {
    const base = join(scratch, "cases");
    const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    const pid = sleeper.pid as number;
    const start = processStart(pid) as string;
    expect(start).toMatch(/^\d+$/);
    const live = { boot: boot(), pidns: pidns(), pid, start };
    const kept = [
      runDir(base, "run-alive1", live),
      // Another PID namespace: its pid means another process here.
      runDir(base, "run-otherN", { ...live, pidns: pidns() + 1, pid: 999_999 }),
      // No owner (an older build's run, or one not yet marked), or one this build does not read.
      runDir(base, "run-noOwnr"),
      runDir(base, "run-badOwn", { ...live, pid: "1" }),
      runDir(base, "run-junk00", "not an object"),
      // Not a name WorldFactory makes.
      runDir(base, "worlds-abc", { ...live, pid: 999_999 }),
    ];
    const gone = [
      // This process's pid, another start time: the pid was reused.
      runDir(base, "run-reused", { ...live, pid: process.pid, start: "1" }),
      runDir(base, "run-otherB", { ...live, boot: "another boot" }),
    ];
    // A symbolic link with a run's name is not followed.
    const target = runDir(scratch, "elsewhere", { ...live, boot: "another boot" });
    symlinkSync(target, join(base, "run-link00"));
    try {
      expect(sweepDeadRuns(base).sort()).toEqual(["run-otherB", "run-reused"]);
      for (const dir of kept) expect(existsSync(dir)).toBe(true);
      for (const dir of gone) expect(existsSync(dir)).toBe(false);
      expect(existsSync(join(target, "template"))).toBe(true);
      // The sleeper ends: its run goes at the next sweep.
      sleeper.kill("SIGKILL");
      await once(sleeper, "exit");
      expect(sweepDeadRuns(base)).toEqual(["run-alive1"]);
    } finally {
      sleeper.kill("SIGKILL");
    }
    expect(sweepDeadRuns(join(scratch, "nowhere"))).toEqual([]);
  });
});
