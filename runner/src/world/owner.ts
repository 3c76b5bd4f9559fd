/**
 * Which process a run's worlds belong to, so that the worlds of a run that was killed (SIGKILL, an
 * OOM kill, a closed terminal's lost group) do not pile up under the world base, which is tmpfs
 * (memory) by default. Each run's folder holds `.owner`: the boot, the inode of the owner's PID
 * namespace, its pid and its start time (clock ticks after boot, field 22 of /proc/PID/stat).
 *
 * A new run removes the folders whose owner is gone, judged as the kernel names a process: another
 * boot's, or in this process's PID namespace with no process of that pid and start time. A folder
 * of another PID namespace (a container sharing the base) is left alone, as is one without a
 * readable `.owner` (an older build's, or one whose owner has not written it yet).
 */
import { lstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const Owner = z.strictObject({
  boot: z.string(),
  pidns: z.number().int().nonnegative(),
  pid: z.number().int().positive(),
  start: z.string().regex(/^\d+$/),
});
type Owner = z.infer<typeof Owner>;

const OWNER_FILE = ".owner";
/** The folders WorldFactory makes: mkdtemp's `run-` and six characters. */
const RUN_DIR = /^run-[A-Za-z0-9]{6}$/;

/** The start time of `pid` in clock ticks after boot, or undefined when there is no such process. */
export function processStart(pid: number | "self"): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ")": fields follow the last ")".
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

function thisOwner(): Owner | undefined {
  const start = processStart("self");
  try {
    return Owner.parse({
      boot: readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
      pidns: statSync("/proc/self/ns/pid").ino,
      pid: process.pid,
      start,
    });
  } catch {
    // No /proc: no owner to write, and none to judge by.
    return undefined;
  }
}

/** Mark `runDir` as this process's. */
export function writeOwner(runDir: string): void {
  const owner = thisOwner();
  if (owner) writeFileSync(join(runDir, OWNER_FILE), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

/** Whether the owner a run folder names is gone for certain (see the module's comment). */
function ownerGone(owner: Owner, self: Owner): boolean {
  if (owner.boot !== self.boot) return true;
  if (owner.pidns !== self.pidns) return false;
  return processStart(owner.pid) !== owner.start;
}

/** Remove the run folders under `base` whose owner is gone; returns their names. */
export function sweepDeadRuns(base: string): string[] {
  const self = thisOwner();
  if (!self) return [];
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!RUN_DIR.test(name)) continue;
    const dir = join(base, name);
    let owner: Owner;
    try {
      if (!lstatSync(dir).isDirectory()) continue;
      owner = Owner.parse(JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")));
    } catch {
      // No owner written (yet), or not one this build reads: not ours to judge.
      continue;
    }
    if (!ownerGone(owner, self)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
