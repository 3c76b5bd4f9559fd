/**
 * Issue 31, a private procfs: under the L3 configs the launcher starts the server in PID and mount
 * namespaces of its own with a /proc mounted in them (bpf/launcher.c, --isolate pid), so the
 * ruleset grants /proc read-only: the server lists its own processes only, reads its own entries
 * (which a runtime reads at start), and writes none. MCPGUARD_NO_PRIVATE_PROC=1 (for measurement
 * only) is the baseline that shows the same reads denied, so each test can fail.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  children,
  eventually,
  FIXTURE,
  isAlive,
  MCPGUARD,
  RawProxy,
  readNdjson,
  workspaceWithPolicy,
} from "./helpers.ts";

const BPF = join(import.meta.dirname, "..", "..", "..", "bpf", ".output");
const HELPER = join(BPF, "mcpguard-test-helper");
const LAUNCHER = join(BPF, "mcpguard-exec");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const probe = existsSync(LAUNCHER) ? spawnSync(LAUNCHER, ["--probe"], { encoding: "utf8" }).stdout : "";
const pidNamespace = /"pidNamespace":true/.test(probe);
const l3Ready = doctor.status === 0 && pidNamespace;
if (!l3Ready)
  console.warn(
    `private /proc tests skipped: L3 cannot run here, or the launcher cannot make a PID namespace:\n${doctor.stdout}${probe}`,
  );

let scratch: string;
let work: string;
let policy: string;
beforeEach(() => {
  ({ scratch, work, policy } = workspaceWithPolicy("mcpguard-proc-", {
    run: { args: { argv: "scalar" }, exec: [HELPER] },
    read: { args: { path: "path.read" } },
  }));
});
afterEach(() => spawnSync("rm", ["-rf", scratch]));

const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

/** The processes below `pid`, as the host numbers them. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  for (let queue = children(pid); queue.length > 0; ) {
    const next = queue.shift() as number;
    found.push(next);
    queue.push(...children(next));
  }
  return found;
}

/** The cgroup2 directory of a process (its "0::" line), under the unified mount of this host. */
function cgroupOf(pid: number): string | undefined {
  const line = readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("0::"));
  const mount = readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .find((f) => f[2] === "cgroup2")?.[1];
  return line && mount ? join(mount, line.slice(3)) : undefined;
}

/** One run of the helper's `procfs` through the fixture's `run` tool, and the start record. */
async function procfsUnder(config: string, env: NodeJS.ProcessEnv = process.env) {
  const log = join(scratch, `audit-${config}.ndjson`);
  const proxy = new RawProxy(
    ["--config", config, "--policy", policy, "--audit-log", log, "--", process.execPath, FIXTURE],
    { cwd: work, env },
  );
  await proxy.initialize();
  proxy.request(1, "tools/call", {
    name: "run",
    arguments: { argv: [HELPER, "procfs", join(scratch, "outside.txt")] },
  });
  const seen = JSON.parse(JSON.parse(text(await proxy.next())).stdout);
  proxy.request(2, "tools/call", { name: "read", arguments: { path: "/proc/self/status" } });
  const status = await proxy.next();
  proxy.child.stdin.end();
  expect((await proxy.exited).code).toBe(0);
  const start = readNdjson(log).find((r) => r.type === "lifecycle" && r.event === "start");
  return { seen, status, start, proxyPid: proxy.child.pid as number };
}

describe.skipIf(!l3Ready)("a /proc of the server's own under L3", () => {
  it("C-full: /proc lists the server's processes only, its own entries read, none written, nothing outside through it", async () => {
    const { seen, start, proxyPid } = await procfsUnder("C-full");
    // The init (1), the Node.js server (2) and the helper it ran: no process of the host.
    expect(seen.pids).toEqual(expect.arrayContaining([1, 2, seen.self]));
    expect(seen.pids.length).toBeLessThanOrEqual(4);
    expect(seen.pids).not.toContain(proxyPid);
    expect(seen.init).toBe("comm:mcpguard-exec");
    // Not written: the mount namespace's mounts are read-only but the write grants (EROFS before
    // Landlock's EACCES).
    expect(seen).toMatchObject({ status: "ok", maps: "ok", oomScoreAdj: "EROFS", comm: "EROFS" });
    // /proc/self/root leads to the host's /, where the ruleset still decides: outside.txt is not granted.
    expect(seen.viaRoot).toBe("EACCES");
    expect(start.l3Hardening).toMatchObject({ procfs: "pid-namespace" });
    expect(start.l3Notes).toContainEqual(expect.stringMatching(/a \/proc of its own/));
  });

  it("C-full without it (MCPGUARD_NO_PRIVATE_PROC=1): /proc is denied whole, as before, and the start record says so", async () => {
    const { seen, start } = await procfsUnder("C-full", { ...process.env, MCPGUARD_NO_PRIVATE_PROC: "1" });
    expect(seen).toMatchObject({
      pids: "EACCES",
      init: "EACCES",
      status: "EACCES",
      maps: "EACCES",
      oomScoreAdj: "EACCES",
      comm: "EACCES",
      viaRoot: "EACCES",
    });
    expect(start.l3Hardening).toMatchObject({ procfs: "landlock" });
  });

  it("C-ebpf: the Node.js runtime reads its own /proc/self/status (it is the namespace's second process)", async () => {
    const { status } = await procfsUnder("C-ebpf");
    expect(text(status)).toMatch(/^Pid:\s+2$/m);
    const denied = await procfsUnder("C-ebpf", { ...process.env, MCPGUARD_NO_PRIVATE_PROC: "1" });
    expect(text(denied.status)).toMatch(/EACCES/);
  });

  it("C-full: the server's exit status is the proxy's; SIGTERM to the proxy ends the server; no process or cgroup is left", async () => {
    const crashing = new RawProxy(
      [
        "--config",
        "C-full",
        "--policy",
        policy,
        "--",
        process.execPath,
        FIXTURE,
        "--crash-on",
        "run",
        "--pid-file",
        "/dev/null",
      ],
      { cwd: work },
    );
    await crashing.initialize();
    const crashingTree = descendants(crashing.child.pid as number);
    crashing.request(1, "tools/call", { name: "run", arguments: { argv: [HELPER] } });
    expect(await crashing.next()).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/exited with status 3/) },
    });
    expect((await crashing.exited).code).toBe(3);
    expect(await eventually(() => crashingTree.every((pid) => !isAlive(pid)))).toBe(true);

    const proxy = new RawProxy(["--config", "C-full", "--policy", policy, "--", process.execPath, FIXTURE], {
      cwd: work,
    });
    await proxy.initialize();
    const tree = descendants(proxy.child.pid as number);
    const launcher = tree.find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(LAUNCHER));
    expect(launcher).toBeDefined();
    const cgroup = cgroupOf(launcher as number) as string;
    expect(cgroup).toMatch(/\/mcpguard-\d+-\d+-[0-9a-f]{12}$/);
    // The waiter, the init and the server: three processes in the server's cgroup.
    expect(readFileSync(join(cgroup, "cgroup.procs"), "utf8").trim().split("\n")).toHaveLength(3);
    proxy.child.kill("SIGTERM");
    await proxy.exited;
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)) && !existsSync(cgroup), 5000)).toBe(
      true,
    );
  });
});

describe.skipIf(!l3Ready)("the launcher with --isolate pid", () => {
  const launch = (...command: string[]) =>
    spawnSync(LAUNCHER, ["--isolate", "pid", "--", ...command], { encoding: "utf8", input: "piped in\n" });

  it("ends as the server ended: its exit status, or its signal; stdin reaches the server and its end ends it", () => {
    expect(launch("/bin/sh", "-c", "exit 3").status).toBe(3);
    expect(launch("/bin/sh", "-c", "kill -TERM $$").signal).toBe("SIGTERM");
    expect(launch("/bin/cat").stdout).toBe("piped in\n");
    expect(launch("/bin/sh", "-c", "echo $$; cat /proc/1/comm").stdout).toBe("2\nmcpguard-exec\n");
  });

  it.skipIf(!existsSync("/usr/bin/setpriv"))(
    "without CAP_SYS_ADMIN the probe says no PID namespace, and a launcher asked for one refuses to start (126)",
    () => {
      const nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", LAUNCHER];
      const probed = JSON.parse(
        spawnSync("/usr/bin/setpriv", [...nobody, "--probe"], { encoding: "utf8" }).stdout,
      );
      expect(probed).toMatchObject({
        pidNamespace: false,
        pidNamespaceError: expect.stringMatching(/CLONE_NEWPID/),
      });
      const refused = spawnSync("/usr/bin/setpriv", [...nobody, "--isolate", "pid", "--", "/bin/true"], {
        encoding: "utf8",
      });
      expect(refused.status).toBe(126);
      expect(refused.stderr).toBe(
        "mcpguard-exec: cannot give the server namespaces of its own: Operation not permitted\n",
      );
    },
  );

  it("holds no copy of the server's output: a server that closes it is seen doing so while it runs", async () => {
    const child = spawn(LAUNCHER, ["--isolate", "pid", "--", "/bin/sh", "-c", "exec >&-; sleep 1"]);
    const events: string[] = [];
    child.stdout.on("end", () => events.push("end"));
    child.stdout.resume();
    await new Promise((resolve) => child.once("exit", resolve));
    events.push("exit");
    expect(events).toEqual(["end", "exit"]);
  });

  /** A ruleset (bpf/launcher.c's records) that lets the server run a shell and write files anywhere. */
  const RULESET = ["mcpguard-ruleset\x001\0", "fs\0execute,read_file,read_dir,write_file,make_reg\0/\0"]
    .map((record) => `${record}\0`)
    .join("");

  /** A held launcher (its ruleset on fd 3) over a server that leaves `marker` behind when it runs. */
  function held(marker: string, prefix: string[] = []) {
    const argv = [
      "--ruleset",
      "/dev/fd/3",
      "--isolate",
      "pid",
      "--",
      "/bin/sh",
      "-c",
      `echo ran > ${marker}`,
    ];
    const command = [...prefix, LAUNCHER, ...argv];
    const child = spawn(command[0] as string, command.slice(1), {
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // "close": its stderr read to the end.
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("close", (code, signal) => resolve({ code, signal })),
    );
    // A launcher that ended before its release (a signal) leaves nothing to write to.
    (child.stdio[3] as NodeJS.WritableStream).on("error", () => {});
    const release = () => (child.stdio[3] as NodeJS.WritableStream).end(RULESET);
    return { child, exited, release, stderr: () => stderr };
  }

  it("held, makes its namespaces while it waits, and a SIGTERM meanwhile ends it at once, its namespace's init with it", async () => {
    const marker = join(scratch, "ran");
    const launcher = held(marker);
    const pid = launcher.child.pid as number;
    // The init of the server's PID namespace exists while the launcher waits for its ruleset.
    expect(await eventually(() => children(pid).length === 1)).toBe(true);
    const init = children(pid)[0] as number;
    // As the launcher that waited first: ended by the signal, without a release.
    launcher.child.kill("SIGTERM");
    expect(await launcher.exited).toEqual({ code: null, signal: "SIGTERM" });
    expect(await eventually(() => !isAlive(init))).toBe(true);
    expect(existsSync(marker)).toBe(false);
    expect(launcher.stderr()).toBe("");

    // The same start released without a signal runs the server.
    const plain = held(marker);
    expect(await eventually(() => children(plain.child.pid as number).length === 1)).toBe(true);
    plain.release();
    expect(await plain.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
  });

  it("held: a SIGTERM sent just before the release, as a stopped proxy's, never lets the server run (20 starts)", async () => {
    for (let i = 0; i < 20; i++) {
      const marker = join(scratch, `ran-${i}`);
      const launcher = held(marker);
      // At a random point of its own start: before, while or after it makes its namespaces.
      await new Promise((resolve) => setTimeout(resolve, i % 5));
      launcher.child.kill("SIGTERM");
      launcher.release();
      expect(await launcher.exited).toEqual({ code: null, signal: "SIGTERM" });
      expect(existsSync(marker), `start ${i}`).toBe(false);
    }
  });

  it("held, started ignoring SIGTERM (as a shell's `trap '' TERM` leaves it): a SIGTERM meanwhile stops nothing", async () => {
    const marker = join(scratch, "ran");
    // The launcher's own disposition, from its parent: the start goes on, as before the release.
    const launcher = held(marker, ["/bin/sh", "-c", `trap '' TERM; exec "$@"`, "sh"]);
    const pid = launcher.child.pid as number;
    expect(await eventually(() => children(pid).length === 1)).toBe(true);
    launcher.child.kill("SIGTERM");
    launcher.release();
    expect(await launcher.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
  });

  it.skipIf(!existsSync("/usr/bin/setpriv"))(
    "held, without CAP_SYS_ADMIN: waits for its ruleset all the same, and says it cannot isolate the server once released (126)",
    async () => {
      const marker = join(scratch, "ran");
      const launcher = held(marker, ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]);
      // Failing to make the namespaces ends nothing while held: the proxy's release decides when.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(launcher.child.exitCode).toBeNull();
      launcher.release();
      expect(await launcher.exited).toEqual({ code: 126, signal: null });
      expect(launcher.stderr()).toBe(
        "mcpguard-exec: cannot give the server namespaces of its own: Operation not permitted\n",
      );
      expect(existsSync(marker)).toBe(false);
    },
  );

  it("passes SIGUSR1 on to the server, once; SIGKILL of the launcher takes every process of the namespace", async () => {
    const script =
      "n=0; trap 'n=$((n+1))' USR1; echo ready; while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.3; exit $((10+n))";
    const child = spawn(LAUNCHER, ["--isolate", "pid", "--", "/bin/sh", "-c", script], { detached: true });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    expect(await eventually(() => out.startsWith("ready"))).toBe(true);
    // To the launcher's process group, as the proxy signals it: the server gets it once.
    process.kill(-(child.pid as number), "SIGUSR1");
    expect(await exited).toBe(11);

    const sleeper = spawn(LAUNCHER, [
      "--isolate",
      "pid",
      "--",
      "/bin/sh",
      "-c",
      "sleep 300 & sleep 300 & echo ready; wait",
    ]);
    let said = "";
    sleeper.stdout.on("data", (chunk: Buffer) => {
      said += chunk.toString();
    });
    expect(await eventually(() => said.startsWith("ready"))).toBe(true);
    const tree = descendants(sleeper.pid as number);
    expect(tree.length).toBeGreaterThanOrEqual(4); // the init, sh and its two sleeps
    sleeper.kill("SIGKILL");
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  });
});
