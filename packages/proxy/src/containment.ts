/**
 * Keeps track of every process a server starts, so that none outlives the proxy.
 *
 * Where the cgroup v2 hierarchy is writable (root on these machines), the server runs in a leaf
 * cgroup of its own, created beneath the proxy's cgroup: a child that starts its own session
 * (setsid) or double-forks is still found, and `cgroup.kill` ends them all. The cgroup carries the
 * server's limits (see limits.ts). Elsewhere the server is the leader of a new process group and
 * clean-up signals that group.
 *
 * What the proxy does here ends with the proxy. What must outlive it (a proxy killed with SIGKILL,
 * crashed, or taken by the OOM killer) is the reaper's job (see reaper.ts): `supervise()` starts it
 * before the server, `release()` lets it go after the clean-up.
 */
import {
  close,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmdirSync,
  statSync,
  write,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { underMountRoot } from "./cgroupMount.js";
import { applyLimits, fileSizeWords, type Limits, type LimitsInfo, noLimits } from "./limits.js";
import { Reaper } from "./reaper.js";

export interface Containment {
  readonly kind: "cgroup" | "process-group";
  /** Absolute path of the server's cgroup directory, when there is one. */
  readonly cgroupPath: string | undefined;
  /** Its cgroup id (the directory's inode), as the kernel names it to BPF programs. */
  readonly cgroupId: number | undefined;
  /** The cgroup-v1 cgroups of the server's limits, which it joins beside cgroupPath. */
  readonly v1Paths: readonly string[];
  /** The limits asked for, and what enforces each (undefined when none were asked for). */
  readonly limits: LimitsInfo | undefined;
  /**
   * The argv to spawn so that the process joins the containment before the server's code runs.
   * With `newSession`, the process also starts a session of its own (for spawners that cannot
   * detach, such as the SDK's stdio transport). With `gate` (cgroup containment only), the process
   * joins the containment at once but execs the server only once a line `go` arrives on its fd 3,
   * which it closes first; at end of file (the proxy gone) or anything else, it exits, and the
   * server never runs.
   */
  wrap(argv: readonly string[], options?: { newSession?: boolean; gate?: boolean }): string[];
  /** SIGKILL every process of the server, then wait (bounded) until none is left. */
  killAll(pid: number): Promise<void>;
  /** SIGKILL every process of the server now, synchronously (for a crash handler). */
  killNow(): void;
  /**
   * SIGKILL every process of the server and wait, blocking (bounded), until none is left: for a
   * path where nothing asynchronous may run any more (a process's `exit`).
   */
  killSync(pid: number | undefined, timeoutMs?: number): void;
  /**
   * Wait (bounded), without a signal, until no process of the server is left, as when it stops on
   * its own; false if one still runs.
   */
  settled(pid: number, timeoutMs: number): Promise<boolean>;
  /** Stop every process of the server where it stands, without a signal it could handle (v2 only). */
  freeze(): void;
  /** Remove what the containment created. Safe to call more than once. */
  dispose(): void;
  /**
   * Spawn the reaper, which ends the server when the proxy ends, however it ends, from its spawn
   * on (reaper.ts); resolves once it says it is armed. `onLost` is called if it exits first after
   * that; before, the promise rejects.
   */
  supervise(binary: string, onLost: (how: string) => void): Promise<void>;
  /** The server was just spawned as a child of this process (process-group containment needs its pid). */
  serverStarted(): void;
  /** After dispose(): let the reaper go (it removes what is left, and exits). */
  release(): Promise<void>;
}

let sequence = 0;

/** The cgroup2 mount point and this process's own cgroup path in it, or undefined. */
export function findCgroup2(): { mount: string; self: string } | undefined {
  let mountinfo: string;
  let selfCgroup: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    selfCgroup = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    // No /proc: no cgroup v2 to find.
    return undefined;
  }
  const self = selfCgroup
    .split("\n")
    .find((l) => l.startsWith("0::"))
    ?.slice(3);
  if (self === undefined) return undefined;
  for (const line of mountinfo.split("\n")) {
    const sep = line.indexOf(" - ");
    if (sep === -1) continue;
    const fstype = line.slice(sep + 3).split(" ")[0];
    if (fstype !== "cgroup2") continue;
    const fields = line.split(" ");
    const mount = fields[4];
    const relative = underMountRoot(self, fields[3] ?? "");
    if (mount && relative !== undefined) return { mount, self: relative };
  }
  return undefined;
}

/** When warmCgroupLock() last sent a move. */
let warmedAt = Number.NEGATIVE_INFINITY;
/** Whether each cgroup2 directory warmCgroupLock() found is a domain (a move of the process there is safe). */
const domains = new Map<string, boolean>();

/**
 * Keep the kernel's cgroup threadgroup lock ready for the held process's join. Moving a process
 * into a cgroup takes that lock for writing, and the first writer after a quiet spell waits for an
 * RCU grace period (10-20 ms on the 2-core VMs measured), while writers within a grace period of
 * the last one do not. bin/mcpguard.js starts one grace period before the bundle loads, which
 * covers a start that joins soon after (C0); a start that reads a policy or starts the kernel
 * layer joins later, when that one has lapsed, and its held process waited out another after the
 * release (measured: the server's exec 8-12 ms after the release under C-app, 1 ms under C0). So
 * each step of such a start calls this: a move that changes nothing, this process into the cgroup2
 * cgroup it is in, written from Node's thread pool, at most one every 8 ms (the main thread, busy
 * with the start, cannot see when one is done).
 *
 * What it costs: a move that finds the lock cold waits out the grace period holding cgroup_mutex,
 * so a cgroup made meanwhile (the server's, on the main thread) or a BPF program attached (the
 * loader) waits too; the held process's join would have waited as long. Moves that queue behind
 * one grace period hold a thread of the pool each (4), so a grace period over 24 ms can delay other
 * work of the pool (a policy's host lookups) by as much. What it never does: move this process
 * elsewhere. The cgroup is read again at each call, and skipped where the move would not be the
 * no-op it is meant to be: a path outside the cgroup namespace (`/..`), or a cgroup that is not a
 * plain domain (a threaded one would gather every thread of the process). One thing is left: a
 * move of this process by someone else between a call and its write on the pool is undone by the
 * write, as bin/mcpguard.js's is (whoever starts the proxy moves it, if at all, before it runs).
 * Where the write is not allowed (not root, no cgroup2, a cgroup with controllers for its
 * children) it fails, and nothing happens.
 */
export function warmCgroupLock(): void {
  const now = performance.now();
  if (now - warmedAt < 8) return;
  warmedAt = now;
  const cg = findCgroup2();
  if (!cg || cg.self.split("/").includes("..")) return;
  const dir = join(cg.mount, cg.self);
  let domain = domains.get(dir);
  if (domain === undefined) {
    try {
      domain = readFileSync(join(dir, "cgroup.type"), "latin1").trim() === "domain";
    } catch {
      // The root cgroup has no cgroup.type, and is a domain; anything else unreadable is skipped.
      domain = cg.self === "/";
    }
    domains.set(dir, domain);
  }
  if (!domain) return;
  let fd: number;
  try {
    fd = openSync(join(dir, "cgroup.procs"), constants.O_WRONLY);
  } catch {
    // Not root, or a cgroup this process may not write: the join waits, as it would anyway.
    return;
  }
  write(fd, String(process.pid), () => close(fd, () => {}));
}

/** Signal the server's process group (the server is its leader: it runs in a session of its own). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Shared by both kinds: the reaper's life. */
abstract class Supervised {
  #reaper: Reaper | undefined;

  protected abstract reaperTargets(): { cgroup?: string; v1?: readonly string[] };

  supervise(binary: string, onLost: (how: string) => void): Promise<void> {
    let reaper: Reaper;
    try {
      reaper = Reaper.spawn({ binary, ...this.reaperTargets(), onLost });
    } catch (error) {
      return Promise.reject(error);
    }
    this.#reaper = reaper;
    return reaper.ready.catch((error: unknown) => {
      // Killed: nothing to tell it any more.
      if (this.#reaper === reaper) this.#reaper = undefined;
      throw error;
    });
  }

  protected tellReaper(line: string): void {
    this.#reaper?.tell(line);
  }

  async release(): Promise<void> {
    await this.#reaper?.release();
  }
}

class ProcessGroupContainment extends Supervised implements Containment {
  readonly kind = "process-group";
  readonly cgroupPath = undefined;
  readonly cgroupId = undefined;
  readonly v1Paths: readonly string[] = [];
  #group: number | undefined;

  constructor(readonly limits: LimitsInfo | undefined) {
    super();
  }

  protected reaperTargets() {
    return {};
  }

  /** `gate` is not offered here (no cgroup to join ahead): the relay spawns when the start is released. */
  wrap(argv: readonly string[], options: { newSession?: boolean; gate?: boolean } = {}): string[] {
    const command = options.newSession ? ["setsid", ...argv] : [...argv];
    const cap = fileSizeWords(this.limits?.fileMaxBytes);
    return cap ? ["/bin/sh", "-c", `${cap}exec "$@"`, "sh", ...command] : command;
  }

  async killAll(pid: number): Promise<void> {
    signalGroup(pid, "SIGKILL");
  }

  killNow(): void {
    if (this.#group) signalGroup(this.#group, "SIGKILL");
  }

  /** Not waited for: a child of this process stays a zombie until the event loop reaps it. */
  killSync(pid: number | undefined): void {
    const group = pid ?? this.#group;
    if (group) signalGroup(group, "SIGKILL");
  }

  async settled(pid: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (groupAlive(pid)) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  freeze(): void {
    if (this.#group) signalGroup(this.#group, "SIGSTOP");
  }

  /** The newest child of this process that leads a process group of its own is the server. */
  serverStarted(): void {
    const group = newestGroupLeaderChild();
    if (group === undefined) return;
    this.#group = group;
    this.tellReaper(`pgid ${group}`);
  }

  dispose(): void {}
}

/** Whether a process of the group still runs (a zombie counts until its parent reaps it). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Children of this process (the main thread spawns them) that lead their own process group. */
function newestGroupLeaderChild(): number | undefined {
  try {
    const children = readFileSync(`/proc/self/task/${process.pid}/children`, "utf8").trim().split(/\s+/);
    const leaders = children.map(Number).filter((pid) => {
      try {
        // Fields after the command name (which may hold spaces): state, ppid, pgrp.
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pid;
      } catch {
        // Exited since it was listed: not a leader.
        return false;
      }
    });
    return leaders.length ? Math.max(...leaders) : undefined;
  } catch {
    // The cgroup is gone: no leader.
    return undefined;
  }
}

class CgroupContainment extends Supervised implements Containment {
  readonly kind = "cgroup";
  #disposed = false;

  constructor(
    readonly cgroupPath: string,
    readonly cgroupId: number,
    readonly v1Paths: readonly string[],
    readonly limits: LimitsInfo | undefined,
  ) {
    super();
  }

  protected reaperTargets() {
    return { cgroup: this.cgroupPath, v1: this.v1Paths };
  }

  wrap(argv: readonly string[], options: { newSession?: boolean; gate?: boolean } = {}): string[] {
    // The shell writes its own pid into the cgroups and then becomes the server (same pid), so
    // not a single instruction of the server runs outside them. $0 is the v2 cgroup.procs, $1..
    // the v1 ones, shifted away before the server's argv. Joining a cgroup waits for the kernel
    // (an RCU grace period, 10-20 ms here), which a gated start does while the proxy is busy.
    const v1 = this.v1Paths.map((_, i) => ` && echo $$ > "$${i + 1}"`).join("");
    const shift = this.v1Paths.length ? ` && shift ${this.v1Paths.length}` : "";
    const gate = options.gate ? ' && read -r go <&3 && [ "$go" = go ]' : "";
    const closeGate = options.gate ? " 3<&-" : "";
    const exec = `${gate} && exec ${options.newSession ? "setsid " : ""}"$@"${closeGate}`;
    return [
      "/bin/sh",
      "-c",
      `${fileSizeWords(this.limits?.fileMaxBytes)}echo $$ > "$0"${v1}${shift}${exec}`,
      join(this.cgroupPath, "cgroup.procs"),
      ...this.v1Paths.map((dir) => join(dir, "cgroup.procs")),
      ...argv,
    ];
  }

  async killAll(pid: number): Promise<void> {
    try {
      writeFileSync(join(this.cgroupPath, "cgroup.kill"), "1");
    } catch {
      // No cgroup.kill (an older kernel): the process group is killed instead.
      signalGroup(pid, "SIGKILL");
    }
    const deadline = Date.now() + 2000;
    while (this.#populated() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  killNow(): void {
    try {
      writeFileSync(join(this.cgroupPath, "cgroup.kill"), "1");
    } catch {
      // Gone already, or a kernel without cgroup.kill: the reaper goes on from here.
    }
  }

  killSync(pid: number | undefined, timeoutMs = 2000): void {
    try {
      writeFileSync(join(this.cgroupPath, "cgroup.kill"), "1");
    } catch {
      // No cgroup.kill (an older kernel): the process group is killed instead.
      if (pid) signalGroup(pid, "SIGKILL");
    }
    const deadline = Date.now() + timeoutMs;
    while (this.#populated() && Date.now() < deadline) sleepSync(5);
  }

  async settled(_pid: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#populated()) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  freeze(): void {
    try {
      writeFileSync(join(this.cgroupPath, "cgroup.freeze"), "1");
    } catch {
      // Without a freezer, the kill that follows is what stops the server.
    }
  }

  serverStarted(): void {}

  dispose(): void {
    if (this.#disposed) return;
    let removed = removeCgroupTree(this.cgroupPath);
    for (const dir of this.v1Paths) removed = removeCgroupTree(dir) && removed;
    this.#disposed = removed;
  }

  #populated(): boolean {
    try {
      return /^populated 1$/m.test(readFileSync(join(this.cgroupPath, "cgroup.events"), "utf8"));
    } catch {
      // The cgroup is gone: not populated.
      return false;
    }
  }
}

/** Block this thread for `ms` (the processes a kill ends are reaped by the kernel meanwhile). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Remove a cgroup and the cgroups nested in it (a proxy killed with SIGKILL leaves its server's
 * cgroup behind inside the caller's), deepest first. False if one is still populated.
 */
export function removeCgroupTree(path: string): boolean {
  let ok = true;
  try {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) ok = removeCgroupTree(join(path, entry.name)) && ok;
    }
    rmdirSync(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" && ok;
  }
  return ok;
}

/** A name for the next server cgroup of this process, unique within it. */
export function containmentName(): string {
  return `mcpguard-${process.pid}-${++sequence}-${randomHex(6)}`;
}

/**
 * `bytes` random bytes as hex, from the kernel (node:crypto would add its load to every start): a
 * cgroup name nobody can predict, so nobody who may write the parent cgroup can make it first.
 */
function randomHex(bytes: number): string {
  const buffer = Buffer.alloc(bytes);
  const fd = openSync("/dev/urandom", "r");
  try {
    readSync(fd, buffer, 0, bytes, null);
  } finally {
    closeSync(fd);
  }
  return buffer.toString("hex");
}

/** The inode of the directory at `path`, or undefined when there is none. */
function aheadId(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    // Gone: not the one made.
    return undefined;
  }
}

/** The server's cgroup could not be made, for a reason other than not being allowed to. */
export class ContainmentError extends Error {
  override readonly name = "ContainmentError";
}

/** Why mkdir of a cgroup failed where the host simply gives this process none: the fallback. */
const NOT_ALLOWED = new Set(["EACCES", "EPERM", "EROFS", "ENOENT"]);

/**
 * The directory createContainment({ name }) will make the server's cgroup, when this host has a
 * cgroup2 hierarchy (whether it can be created there is known only then).
 */
export function plannedCgroupPath(name: string): string | undefined {
  const cg = findCgroup2();
  return cg ? join(cg.mount, cg.self, name) : undefined;
}

/** A cgroup2 directory made ahead of its containment: its path, and its inode (the cgroup's id). */
export interface CgroupAhead {
  path: string;
  id: number;
}

/**
 * The cgroup2 directory of the planned cgroup `name` made now, ahead of its containment (the L3
 * loader attaches its programs to it while the proxy still loads the layers), or undefined where
 * it cannot be made here (createContainment then says why, or falls back).
 */
export function makeCgroupAhead(name: string): CgroupAhead | undefined {
  const path = plannedCgroupPath(name);
  if (path === undefined) return undefined;
  try {
    mkdirSync(path);
    return { path, id: statSync(path).ino };
  } catch {
    // Not allowed, or taken: createContainment() meets the same and decides.
    return undefined;
  }
}

/**
 * A cgroup when one can be created here, otherwise a process group. With `limits`, the cgroup
 * enforces them where the kernel can (limits.ts). `madeAhead`: the cgroup2 directory that
 * makeCgroupAhead() made for `name`, taken over when it is still the one made (the same inode at
 * the same path: not one put there since by someone who may write the parent cgroup).
 */
export function createContainment(
  options: { name?: string; limits?: Limits; madeAhead?: CgroupAhead } = {},
): Containment {
  const cg = findCgroup2();
  const name = options.name ?? containmentName();
  if (cg) {
    const parent = join(cg.mount, cg.self);
    const path = join(parent, name);
    const ahead = options.madeAhead?.path === path ? options.madeAhead : undefined;
    if (ahead && aheadId(path) !== ahead.id)
      throw new ContainmentError(
        `the server's cgroup ${path}, made ahead, is gone or is not the one made (the BPF loader removes it when it fails)`,
      );
    let created = ahead !== undefined;
    try {
      if (!created) mkdirSync(path);
      created = true;
    } catch (error) {
      // Not writable (no root, or not delegated): fall through. Anything else (the name taken,
      // no room for another cgroup) is not a host without cgroups: the start fails, and says why.
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (!NOT_ALLOWED.has(code))
        throw new ContainmentError(`cannot create the server's cgroup ${path}: ${(error as Error).message}`);
    }
    if (created) {
      const id = statSync(path).ino;
      if (!options.limits) return new CgroupContainment(path, id, [], undefined);
      const { info, v1 } = applyLimits(parent, path, name, options.limits);
      return new CgroupContainment(path, id, v1, info);
    }
  }
  const why = "no cgroup of its own: not root, or no writable cgroup2 hierarchy";
  return new ProcessGroupContainment(options.limits && noLimits(options.limits, why));
}
