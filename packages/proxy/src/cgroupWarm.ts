/**
 * Keeping the kernel's fast path for cgroup moves open while a start is under way.
 *
 * The process that becomes the server joins its cgroups before it execs (the held start's shell,
 * or the L3 launcher), and each join takes the kernel's cgroup threadgroup lock for writing. That
 * lock's first writer after a quiet spell waits for an RCU grace period, while a writer that
 * comes within about one grace period of the last one does not: measured on this project's 2-core
 * VMs (kernel 6.18), a move after 20 ms or more of quiet takes 6-16 ms, one within 10 ms of the
 * last 0.2 ms. bin/mcpguard.js makes one move that changes nothing before the bundle loads; this
 * goes on from there until the server's start is released: every few ms, this process's own pid
 * into the cgroup2 cgroup it is already in, written from Node's thread pool, so a grace period is
 * waited for there and never by the server's start. Nothing moves. Each write holds the lock for
 * microseconds (forks elsewhere wait that long); there are about a hundred of them in a start, and
 * none after it (at most {@link WARM_MS}). Where the write is not allowed (not root, no cgroup2,
 * a bind-mounted subtree) nothing happens. A host whose cgroup2 is mounted with `favordynmods`
 * never waits a grace period, and this costs it nothing but the writes.
 */
import { close, constants, openSync, readFileSync, write } from "node:fs";

/** A start that takes longer than this stops warming: it no longer pays for anything. */
const WARM_MS = 3000;
/** Between one write's end and the next one's start: well within a grace period. */
const INTERVAL_MS = 3;

/** This process's cgroup2 `cgroup.procs`, when cgroup2 is mounted from its root. */
function ownCgroupProcs(): string | undefined {
  const self = /^0::(\/.*)$/m.exec(readFileSync("/proc/self/cgroup", "latin1"))?.[1];
  // The cgroup2 mount: field 5 of its mountinfo line, whose filesystem type follows " - ".
  const fields = readFileSync("/proc/self/mountinfo", "latin1")
    .split("\n")
    .find((line) => line.includes(" - cgroup2 "))
    ?.split(" ");
  // Only a mount of the hierarchy's root: a subtree's would name another cgroup, and move this process.
  if (self === undefined || fields?.[4] === undefined || fields[3] !== "/") return undefined;
  return `${fields[4]}${self === "/" ? "" : self}/cgroup.procs`;
}

/** Start warming; the returned function stops it (idempotent). */
export function keepCgroupMovesFast(): () => void {
  let fd: number;
  try {
    const procs = ownCgroupProcs();
    if (procs === undefined) return () => {};
    fd = openSync(procs, constants.O_WRONLY);
  } catch {
    // Not root, no cgroup2, or a host that refuses: the server's join waits, as it would anyway.
    return () => {};
  }
  const pid = String(process.pid);
  const until = Date.now() + WARM_MS;
  let stopped = false;
  let writing = false;
  let timer: NodeJS.Timeout | undefined;
  const done = () => {
    if (!writing) close(fd, () => {});
  };
  const next = () => {
    timer = undefined;
    if (stopped || Date.now() > until) {
      stopped = true;
      done();
      return;
    }
    writing = true;
    write(fd, pid, (error) => {
      writing = false;
      if (error) stopped = true;
      if (stopped) return done();
      timer = setTimeout(next, INTERVAL_MS);
      // Never what keeps the proxy alive.
      timer.unref();
    });
  };
  next();
  return () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    done();
  };
}
