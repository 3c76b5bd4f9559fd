#!/usr/bin/env node
/**
 * The floor of any Node.js stdio proxy that contains its server as `mcpguard run` must (for
 * `scripts/cold-starts.mjs`, docs/PERFORMANCE.md): pipeRelay.cjs, plus the server in a cgroup2
 * cgroup of its own, with a pids and a memory limit, joined before its first instruction (a shell
 * writes its pid there and execs the server), and a reaper (bpf/reaper.c) spawned first that ends
 * the cgroup when this process ends. The cgroup threadgroup lock is made ready as the proxy makes
 * it at its first line (a move of this process into its own cgroup), or the join would wait out an
 * RCU grace period. Nothing of mcpguard's code is loaded: what a proxy adds above this path is its
 * own work, and what this path adds above `pipe` is what containment itself costs. Run as root on a
 * host with cgroup2 (`bench latency` leaves the path out elsewhere); anything else is refused in one
 * line, never run uncontained.
 */
"use strict";
const fs = require("node:fs");
const { join } = require("node:path");
const { spawn } = require("node:child_process");
const { constants } = require("node:os");

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: pipeContained.cjs <command> [args...]\n");
  process.exit(2);
}

const mountinfo = fs.readFileSync("/proc/self/mountinfo", "latin1").split("\n");
const own = fs.readFileSync("/proc/self/cgroup", "latin1").split("\n");

/**
 * This process's cgroup directory in the hierarchy of `fstype` (with `controller` for v1), or
 * undefined; `rootOnly`: only through a mount of the hierarchy's root. A mount of a subtree holds it
 * below that subtree, or not at all, as the proxy reads it (packages/proxy/src/cgroupMount.ts).
 */
function ownCgroup(fstype, controller, rootOnly = false) {
  const self = own
    .map((line) => line.split(":"))
    .find(([id, names]) => (fstype === "cgroup2" ? id === "0" : names?.split(",").includes(controller)))?.[2];
  const fields = mountinfo
    .find((line) => {
      const [type, , options] = line.split(" - ")[1]?.split(" ") ?? [];
      return type === fstype && (fstype === "cgroup2" || options?.split(",").includes(controller));
    })
    ?.split(" ");
  const root = fields?.[3];
  if (self === undefined || root === undefined || (rootOnly && root !== "/")) return undefined;
  const relative =
    root === "/"
      ? self
      : self === root
        ? "/"
        : self.startsWith(`${root}/`)
          ? self.slice(root.length)
          : undefined;
  return relative === undefined ? undefined : `${fields[4]}${relative === "/" ? "" : relative}`;
}

/** The cgroups made so far, removed again when the start is refused. */
const made = [];

function fail(line) {
  for (const dir of made.reverse()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // Gone already.
    }
  }
  process.stderr.write(`pipeContained: ${line}\n`);
  process.exit(2);
}

const parent = ownCgroup("cgroup2");
if (!parent) fail("this process's cgroup2 cgroup is not mounted here");
// As bin/mcpguard.js, through a mount of the root only (a subtree's would name another cgroup).
if (ownCgroup("cgroup2", undefined, true)) {
  const procs = join(parent, "cgroup.procs");
  try {
    const fd = fs.openSync(procs, fs.constants.O_WRONLY);
    fs.write(fd, String(process.pid), () => fs.close(fd, () => {}));
  } catch (error) {
    fail(`cannot write ${procs}: ${error.message}`);
  }
}
const name = `pipe-contained-${process.pid}`;
const cgroup = join(parent, name);
// The limits the proxy gives a server by default, where the kernel has them: in cgroup2 where its
// controllers are, else in the cgroup-v1 hierarchies of a hybrid host, as the proxy does.
const limits = { pids: ["pids.max", "1024"], memory: ["memory.max", String(4 * 1024 ** 3)] };
const v1 = [];
try {
  fs.mkdirSync(cgroup);
  made.push(cgroup);
  const controllers = fs.readFileSync(join(parent, "cgroup.controllers"), "latin1").split(/\s+/);
  for (const [controller, [file, value]] of Object.entries(limits)) {
    if (controllers.includes(controller)) {
      try {
        fs.writeFileSync(join(parent, "cgroup.subtree_control"), `+${controller}`);
      } catch {
        // A parent that holds processes cannot enable it (EBUSY): the proxy then goes without it.
        continue;
      }
      fs.writeFileSync(join(cgroup, file), value);
      continue;
    }
    const hierarchy = ownCgroup("cgroup", controller);
    // No hierarchy has it: the proxy goes without it too.
    if (!hierarchy) continue;
    const dir = join(hierarchy, name);
    fs.mkdirSync(dir);
    made.push(dir);
    v1.push(dir);
    fs.writeFileSync(join(dir, controller === "pids" ? "pids.max" : "memory.limit_in_bytes"), value);
  }
} catch (error) {
  fail(`cannot make the server's cgroups: ${error.message}`);
}
const reaperBinary = join(__dirname, "..", "..", "bpf", ".output", "mcpguard-reaper");
const reaperArgs = [
  "--proxy",
  String(process.pid),
  "--cgroup",
  cgroup,
  ...v1.flatMap((dir) => ["--v1", dir]),
];
const reaper = spawn(reaperBinary, reaperArgs, {
  stdio: ["pipe", "ignore", "inherit"],
  detached: true,
});
reaper.on("error", (error) => fail(`cannot start the reaper: ${error.message}`));
reaper.unref();
reaper.stdin.unref();
// The shell joins every cgroup of the server, then becomes it (the same pid).
const joins = [cgroup, ...v1].map((_, i) => `echo $$ > "$${i}"`).join(" && ");
const shift = v1.length ? ` && shift ${v1.length}` : "";
const argv = [`${joins}${shift} && exec "$@"`, ...[cgroup, ...v1].map((dir) => join(dir, "cgroup.procs"))];
const child = spawn("/bin/sh", ["-c", ...argv, command, ...args], {
  stdio: ["pipe", "pipe", "inherit"],
  detached: true,
});
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on("error", () => {});
child.on("error", (error) => {
  process.stderr.write(`pipeContained: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
