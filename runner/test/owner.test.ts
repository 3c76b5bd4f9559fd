/** The worlds of killed runs are swept, and nobody else's (src/world/owner.ts). */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
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
const ns = (kind: string) => statSync(`/proc/self/ns/${kind}`).ino;
/** This machine as owner.ts names it. */
function host(): string {
  try {
    return readFileSync("/etc/machine-id", "latin1").trim() || hostname();
  } catch {
    return hostname();
  }
}

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
    const live = { host: host(), boot: boot(), pidns: ns("pid"), timens: ns("time"), pid, start };
    const dead = { ...live, pid: process.pid, start: "1" };
    const kept = [
      runDir(base, "run-alive1", live),
      // Another PID namespace: its pid means another process here; another time namespace counts
      // start times from another boot time.
      runDir(base, "run-otherN", { ...dead, pidns: ns("pid") + 1 }),
      runDir(base, "run-otherT", { ...dead, timens: ns("time") + 1 }),
      // Another machine sharing the folder, whose boot is not this one's.
      runDir(base, "run-otherH", { ...dead, host: "another machine", boot: "another boot" }),
      // No owner (an older build's run, or one not yet marked), or one this build does not read.
      runDir(base, "run-noOwnr"),
      runDir(base, "run-badOwn", { ...live, pid: "1" }),
      runDir(base, "run-junk00", "not an object"),
      // Not a name WorldFactory makes.
      runDir(base, "worlds-abc", { ...live, pid: 999_999 }),
    ];
    // Another user's, whatever its owner file says.
    chownSync(runDir(base, "run-userXY", dead), 65534, 65534);
    const gone = [
      // This process's pid, another start time: the pid was reused.
      runDir(base, "run-reused", dead),
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

  it("leaves a folder it cannot remove, and goes on with the others", () => {
    const base = join(scratch, "stuck");
    const dead = {
      host: host(),
      boot: boot(),
      pidns: ns("pid"),
      timens: ns("time"),
      pid: process.pid,
      start: "1",
    };
    const stuck = runDir(base, "run-stuck0", dead);
    const mount = join(stuck, "template", "mounted");
    mkdirSync(mount);
    // A mount left inside a killed run's world: its folder cannot be removed (EBUSY).
    execFileSync("mount", ["-t", "tmpfs", "none", mount]);
    try {
      runDir(base, "run-free00", dead);
      expect(sweepDeadRuns(base)).toEqual(["run-free00"]);
      expect(existsSync(stuck)).toBe(true);
    } finally {
      execFileSync("umount", [mount]);
    }
    expect(sweepDeadRuns(base)).toEqual(["run-stuck0"]);
  });
});
