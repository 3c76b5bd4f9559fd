#!/usr/bin/env node
// The CLI bundled into one file and started from a V8 code cache (dist/mcpguard.cjs, written by
// bundle.mjs at build); the modules it is made of are dist/cli.js and its imports. A CommonJS file
// (bin/package.json): an ES module entry would start Node's ESM loader first, about 5 ms of every
// start.
"use strict";

/**
 * `mcpguard run` moves the server's first process into the server's cgroup before it execs (the
 * held start, containment.ts). Moving a process into a cgroup takes the kernel's cgroup
 * threadgroup lock for writing, and the first writer after a quiet spell waits for an RCU grace
 * period first (10-20 ms on the 2-core VMs measured), while writers within a grace period of the
 * last one do not. So the very first thing `run` does, before the bundle loads, is a move that
 * changes nothing: its own pid into the cgroup2 cgroup it is already in, written from Node's
 * thread pool. That writer waits out the grace period while the bundle loads, and the server's own
 * move a few ms later finds the lock ready. Where the write is not allowed (not root, no cgroup2)
 * it fails at open and nothing happens; either way nothing moves, and nothing waits on it. A start
 * that joins later than one grace period from here (a policy read, the kernel layer started) keeps
 * the lock ready at each of its steps (warmCgroupLock in src/containment.ts).
 */
function startCgroupGracePeriod() {
  const fs = require("node:fs");
  try {
    const self = /^0::(\/.*)$/m.exec(fs.readFileSync("/proc/self/cgroup", "latin1"))?.[1];
    // The cgroup2 mount: field 5 of its mountinfo line, whose filesystem type follows " - ".
    const line = fs
      .readFileSync("/proc/self/mountinfo", "latin1")
      .split("\n")
      .find((l) => l.includes(" - cgroup2 "));
    const fields = line?.split(" ");
    const mount = fields?.[4];
    // Only a mount of the hierarchy's root: a bind mount of a subtree (field 4, its root, not "/")
    // would name another cgroup, and the write would move this process there.
    if (self === undefined || mount === undefined || fields[3] !== "/") return;
    // Outside the cgroup namespace (a path through ".."): the write would move this process.
    if (self.split("/").includes("..")) return;
    const fd = fs.openSync(`${mount}${self === "/" ? "" : self}/cgroup.procs`, fs.constants.O_WRONLY);
    fs.write(fd, String(process.pid), () => fs.close(fd, () => {}));
  } catch {
    // Not root, no cgroup2, or a host that refuses: the server's move waits, as it would anyway.
  }
}

/**
 * Whether the arguments are `run` under C0 (the default config), which starts from the code cache
 * of what C0 alone runs (bundle.mjs): half the full one, read at every start. Options are read up
 * to the server's command (`--`); another config, or arguments it cannot read, take the full cache,
 * which only costs time.
 */
function runsC0(args) {
  if (args[0] !== "run") return false;
  let config = "C0";
  for (let i = 1; i < args.length && args[i] !== "--"; i++) {
    if (args[i] === "--config") config = args[++i];
    else if (args[i].startsWith("--config=")) config = args[i].slice("--config=".length);
  }
  return config === "C0";
}

const args = process.argv.slice(2);
if (args[0] === "run") startCgroupGracePeriod();
require("../dist/mcpguard.cjs")(runsC0(args) ? "c0" : "full");
