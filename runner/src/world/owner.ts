/**
 * Which process a run's worlds belong to, so that the worlds of a run that was killed (SIGKILL, an
 * OOM kill, a closed terminal's lost group) do not pile up under the world base, which is tmpfs
 * (memory) by default. Each run's folder holds `.owner`: the machine, its boot, the inodes of the
 * owner's PID and time namespaces, its pid and its start time (clock ticks after boot, field 22 of
 * /proc/PID/stat).
 *
 * A new run removes the folders whose owner is gone, judged as the kernel names a process: this
 * machine's, and of another boot, or in this process's PID and time namespaces with no process of
 * that pid and start time. A folder of another machine (a base on a shared filesystem), of another
 * PID or time namespace (a container sharing the base), of another user, or without a readable
 * `.owner` (an older build's, or one whose owner has not written it yet) is left alone; so is
 * everything where /proc is not this process's own (a PID namespace without its /proc mounted).
 * The sweep is best effort: a folder it cannot remove stays, and no run fails for it.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";

const Owner = z.strictObject({
  host: z.string(),
  boot: z.string(),
  pidns: z.number().int().nonnegative(),
  timens: z.number().int().nonnegative(),
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

/** The machine: its machine id where there is one, else its host name. */
function machine(): string {
  try {
    return readFileSync("/etc/machine-id", "latin1").trim() || hostname();
  } catch {
    return hostname();
  }
}

/** The inode of one of this process's namespaces, 0 where the kernel has none of that kind. */
function namespace(kind: "pid" | "time"): number {
  try {
    return statSync(`/proc/self/ns/${kind}`).ino;
  } catch {
    return 0;
  }
}

function thisOwner(): Owner | undefined {
  try {
    // A /proc of another PID namespace would name other processes by these pids.
    if (readlinkSync("/proc/self") !== String(process.pid)) return undefined;
    return Owner.parse({
      host: machine(),
      boot: readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
      pidns: namespace("pid"),
      timens: namespace("time"),
      pid: process.pid,
      start: processStart("self"),
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
  if (owner.host !== self.host) return false;
  if (owner.boot !== self.boot) return true;
  if (owner.pidns !== self.pidns || owner.timens !== self.timens) return false;
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
  const uid = process.geteuid?.();
  const removed: string[] = [];
  for (const name of names) {
    if (!RUN_DIR.test(name)) continue;
    const dir = join(base, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      const owner = Owner.parse(JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")));
      if (!ownerGone(owner, self)) continue;
      // Its owner file last: a folder that cannot be removed whole is judged again by the next run.
      for (const entry of readdirSync(dir))
        if (entry !== OWNER_FILE) rmSync(join(dir, entry), { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // No owner written (yet), or not one this build reads: not ours to judge. Or a folder that
      // cannot be removed (a mount left in it, a directory without write permission): it stays.
    }
  }
  return removed;
}
