/**
 * Containment that outlives the proxy: whatever ends `mcpguard run` (SIGKILL, a crash, running out
 * of heap), the server and everything it started end too, its cgroups go, and under L3 not one
 * datagram the policy refuses leaves before that. Plus the server's pids and memory limits.
 */
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { underMountRoot } from "../src/cgroupMount.ts";
import {
  ContainmentError,
  containmentName,
  createContainment,
  plannedCgroupPath,
} from "../src/containment.ts";
import {
  eventually,
  FIXTURE,
  hostPid,
  isAlive,
  MCPGUARD,
  RawProxy,
  readNdjson,
  workspaceWithPolicy,
} from "./helpers.ts";

const BPF = join(import.meta.dirname, "..", "..", "..", "bpf", ".output");
const HELPER = join(BPF, "mcpguard-test-helper");
const LIFECYCLE = join(import.meta.dirname, "..", "dist", "lifecycle.js");

const root = process.getuid?.() === 0;
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const report = doctor.stdout ? JSON.parse(doctor.stdout) : {};
const cgroupReady = root && report.containment?.kind === "cgroup" && existsSync(join(BPF, "mcpguard-reaper"));
const l3Ready = cgroupReady && doctor.status === 0;
if (!cgroupReady)
  console.warn(
    `containment tests skipped: needs root, a writable cgroup2 hierarchy and make -C bpf (doctor: ${doctor.stdout}${doctor.stderr})`,
  );
else if (!l3Ready)
  console.warn(`L3 containment tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

let scratch: string;
let work: string;
let policy: string;
beforeEach(() => {
  ({ scratch, work, policy } = workspaceWithPolicy("mcpguard-contain-", {
    echo: { args: { text: "text" } },
    sleep: { args: { ms: "scalar" } },
    daemon: { args: { port: "scalar" } },
    run: { args: { argv: "scalar" }, exec: [HELPER] },
    read: { args: { path: "path.read" }, read: ["{{cwd}}/**"] },
  }));
});
afterEach(() => spawnSync("rm", ["-rf", scratch]));

const configArgs = (config: string) =>
  config === "C0" ? ["--config", "C0"] : ["--config", config, "--policy", policy];

/** A loopback UDP listener that counts what arrives. */
async function udpListener() {
  const socket = createSocket("udp4");
  let count = 0;
  socket.on("message", () => count++);
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { port: socket.address().port, count: () => count, close: () => socket.close() };
}

/** The cgroup2 directory and the cgroup-v1 pids and memory directories a process is in. */
function cgroupsOf(pid: number): string[] {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  const mountOf = (fstype: string, option?: string) =>
    mounts
      .find((l) => {
        const [, tail] = l.split(" - ");
        const [type, , options] = tail?.split(" ") ?? [];
        return type === fstype && (!option || options?.split(",").includes(option));
      })
      ?.split(" ")[4];
  return readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .trim()
    .split("\n")
    .flatMap((line) => {
      const [id, names, path] = line.split(":");
      if (id === "0") return [join(mountOf("cgroup2") as string, path as string)];
      const controller = ["pids", "memory"].find((c) => names?.split(",").includes(c));
      const mount = controller && mountOf("cgroup", controller);
      return mount && path?.includes("mcpguard-") ? [join(mount, path)] : [];
    });
}

const text = (message: Record<string, unknown>) =>
  (message.result as { content: { text: string }[] }).content[0]?.text as string;

/** A proxy mid-call whose server started a UDP-sending daemon: what it is made of. */
async function guardedDaemon(config: string, port: number) {
  const log = join(scratch, `audit-${config}.ndjson`);
  const proxy = new RawProxy([...configArgs(config), "--audit-log", log, "--", process.execPath, FIXTURE], {
    cwd: work,
  });
  await proxy.initialize();
  proxy.request(1, "tools/call", { name: "daemon", arguments: { port } });
  const daemon = hostPid(Number(text(await proxy.next())), proxy.child.pid as number);
  const cgroups = cgroupsOf(daemon);
  const procs = readFileSync(join(cgroups[0] as string, "cgroup.procs"), "utf8")
    .trim()
    .split("\n")
    .map(Number);
  proxy.request(2, "tools/call", { name: "sleep", arguments: { ms: 60_000 } });
  return { proxy, daemon, cgroups, procs, log };
}

/** A daemon started by a C0 server through `proxy`: the server's processes and its cgroups then. */
async function startDaemon(proxy: RawProxy): Promise<{ procs: number[]; cgroups: string[] }> {
  proxy.request(1, "tools/call", { name: "daemon", arguments: { port: 9 } });
  const cgroups = cgroupsOf(Number(text(await proxy.next())));
  const procs = readFileSync(join(cgroups[0] as string, "cgroup.procs"), "utf8")
    .trim()
    .split("\n")
    .map(Number);
  return { procs, cgroups };
}

/** Everything of the server gone: processes and cgroups (v2 and v1). */
const allGone = (procs: number[], cgroups: string[]) => () =>
  procs.every((pid) => !isAlive(pid)) && cgroups.every((dir) => !existsSync(dir));

describe.skipIf(!cgroupReady)("when the proxy dies", () => {
  for (const config of ["C0", "C-full"]) {
    it.skipIf(config !== "C0" && !l3Ready)(
      `${config}: SIGKILL of mcpguard run mid-call leaves no server process and no cgroup; under L3 no datagram gets out`,
      async () => {
        const udp = await udpListener();
        try {
          const { proxy, procs, cgroups } = await guardedDaemon(config, udp.port);
          // The v2 cgroup, and on hybrid hosts such as these the v1 pids and memory cgroups.
          expect(cgroups[0]).toMatch(/\/mcpguard-\d+-\d+-[0-9a-f]{12}$/);
          await eventually(() => (config === "C0" ? udp.count() > 0 : false), 200);
          const before = udp.count();
          proxy.child.kill("SIGKILL");
          expect(await eventually(allGone(procs, cgroups), 5000)).toBe(true);
          // Datagrams sent before the kill may still be in the listener's queue: let them land (the
          // cgroup is gone, so nothing of the server is left to send more).
          let after = udp.count();
          for (let i = 0; i < 20; i++) {
            await new Promise((resolve) => setTimeout(resolve, 25));
            if (udp.count() === after) break;
            after = udp.count();
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(udp.count()).toBe(after); // nothing left sending
          if (config === "C0") expect(before).toBeGreaterThan(0);
          else expect(after).toBe(0); // refused before the kill, and after it
        } finally {
          udp.close();
        }
      },
    );
  }

  it("a proxy that runs out of heap (V8 aborts, no handler runs) still takes its server along", async () => {
    const proxy = new RawProxy(["--config", "C0", "--", process.execPath, FIXTURE], {
      cwd: work,
      env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=24" },
    });
    proxy.child.stdin.on("error", () => {});
    await proxy.initialize();
    const { procs, cgroups } = await startDaemon(proxy);
    proxy.request(2, "tools/call", { name: "echo", arguments: { text: "x".repeat(40 << 20) } });
    // V8 aborts: Node.js 20 and 22 end by SIGABRT, Node.js 24 exits with 134 (128 + SIGABRT) itself.
    const exited = await proxy.exited;
    expect([exited.signal, exited.code], JSON.stringify(exited)).toSatisfy(
      ([signal, code]: [string | null, number | null]) => signal === "SIGABRT" || code === 134,
    );
    expect(await eventually(allGone(procs, cgroups), 5000)).toBe(true);
  });

  it("an uncaught exception: one line, the cgroup killed before exit, an exit record, status 70", async () => {
    // The handlers of `mcpguard run` (built), in a process that really throws, around a real cgroup.
    const log = join(scratch, "crash.ndjson");
    const program = `
      const { installCrashHandlers } = await import(${JSON.stringify(LIFECYCLE)});
      const { createContainment } = await import(${JSON.stringify(join(LIFECYCLE, "..", "containment.js"))});
      const { appendFileSync } = await import("node:fs");
      const audit = { write: (e) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(e) + "\\n") };
      const containment = createContainment();
      const { spawn } = await import("node:child_process");
      const [cmd, ...args] = containment.wrap(["sleep", "300"]);
      const child = spawn(cmd, args, { detached: true, stdio: "ignore" });
      child.unref();
      process.stdout.write(JSON.stringify({ cgroup: containment.cgroupPath, pid: child.pid }) + "\\n");
      installCrashHandlers({ config: "C0", containment, audit, server: () => "s" });
      setTimeout(() => { throw new Error("something broke\\nsecond line"); }, 300);
    `;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", program], { encoding: "utf8" });
    const { cgroup, pid } = JSON.parse(run.stdout);
    expect(run.status).toBe(70);
    expect(run.stderr).toBe("mcpguard: internal error: something broke\n");
    expect(isAlive(pid)).toBe(false); // killed synchronously, before the process exited
    expect(readNdjson(log).at(-1)).toMatchObject({
      type: "lifecycle",
      event: "exit",
      status: 70,
      reason: "internal error: something broke",
    });
    writeFileSync(join(cgroup, "cgroup.kill"), "1");
    expect(await eventually(() => spawnSync("rmdir", [cgroup]).status === 0 || !existsSync(cgroup))).toBe(
      true,
    );
  });

  it("stops the server, saying why, when its reaper is killed (fail closed)", async () => {
    const proxy = new RawProxy(["--config", "C0", "--", process.execPath, FIXTURE], { cwd: work });
    await proxy.initialize();
    const reaper = readFileSync(`/proc/${proxy.child.pid}/task/${proxy.child.pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("mcpguard-reaper"));
    expect(reaper).toBeDefined();
    // Armed: it has said so, and let go of its stdout (without L3 the server may start before).
    expect(await eventually(() => readlinkSync(`/proc/${reaper}/fd/1`) === "/dev/null", 5000)).toBe(true);
    process.kill(Number(reaper), "SIGTERM"); // ignored: only the proxy's end may start it
    proxy.request(1, "tools/call", { name: "echo", arguments: { text: "still here" } });
    expect(text(await proxy.next())).toBe("still here");
    process.kill(Number(reaper), "SIGKILL");
    expect((await proxy.exited).code).toBe(137);
    expect(proxy.stderr).toMatch(
      /^mcpguard: stopping the server: the reaper \(mcpguard-reaper\) was killed by SIGKILL, so the server would outlive the proxy$/m,
    );
  });

  /**
   * A reaper that waits for the file `go` before it runs the real one (same pid, same parent), in
   * a folder of its own given as MCPGUARD_BPF_DIR, with the kernel layer's other binaries.
   */
  function slowReaper(): { dir: string; go: string } {
    const dir = join(scratch, "bpf");
    mkdirSync(dir);
    for (const bin of ["mcpguard-exec", "mcpguard-loader"])
      writeFileSync(join(dir, bin), readFileSync(join(BPF, bin)), { mode: 0o755 });
    const go = join(scratch, "go");
    const script = `#!/bin/sh\nwhile [ ! -e '${go}' ]; do sleep 0.02; done\nexec '${join(BPF, "mcpguard-reaper")}' "$@"\n`;
    writeFileSync(join(dir, "mcpguard-reaper"), script);
    chmodSync(join(dir, "mcpguard-reaper"), 0o755);
    return { dir, go };
  }

  it("without L3 the server starts once its reaper is spawned, and a proxy killed before the reaper is armed still takes the server along", async () => {
    const { dir, go } = slowReaper();
    const proxy = new RawProxy(["--config", "C0", "--", process.execPath, FIXTURE], {
      cwd: work,
      env: { ...process.env, MCPGUARD_BPF_DIR: dir },
    });
    // The server answers while its reaper has not run a line of the real one.
    await proxy.initialize();
    const { procs, cgroups } = await startDaemon(proxy);
    expect(existsSync(go)).toBe(false);
    proxy.child.kill("SIGKILL");
    await proxy.exited;
    // Its reaper, not its parent's child any more, reads its stdin to the end and reaps.
    writeFileSync(go, "");
    expect(await eventually(allGone(procs, cgroups), 5000)).toBe(true);
    expect(proxy.stderr).not.toMatch(/warning/);
  });

  it.skipIf(!l3Ready)("under L3 the server starts only once its reaper is armed (fail closed)", async () => {
    const { dir, go } = slowReaper();
    const proxy = new RawProxy(["--config", "C-ebpf", "--policy", policy, "--", process.execPath, FIXTURE], {
      cwd: work,
      env: { ...process.env, MCPGUARD_BPF_DIR: dir },
    });
    try {
      let answered = false;
      const answer = proxy.next(10_000).then(() => {
        answered = true;
      });
      proxy.request(0, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answered).toBe(false);
      writeFileSync(go, "");
      await answer;
    } finally {
      proxy.child.stdin.end();
      await proxy.exited;
    }
  });

  // An unprivileged uid must be able to read the checkout and run node from it.
  const nobody = { uid: 65534, gid: 65534 };
  const nobodyCan =
    root &&
    spawnSync(process.execPath, ["-e", `require("fs").accessSync(${JSON.stringify(MCPGUARD)})`], nobody)
      .status === 0;
  if (root && !nobodyCan)
    console.warn("process-group reaper test skipped: uid 65534 cannot read this checkout");
  it.skipIf(!nobodyCan)(
    "without a cgroup (not root), the reaper kills the server's process group",
    async () => {
      const proxy = new RawProxy(["--config", "C0", "--", process.execPath, FIXTURE], {
        cwd: "/tmp",
        env: { PATH: process.env.PATH, HOME: "/tmp" },
        ...nobody,
      } as never);
      await proxy.initialize();
      const server = readFileSync(`/proc/${proxy.child.pid}/task/${proxy.child.pid}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .map(Number)
        .find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(FIXTURE));
      expect(server).toBeDefined();
      proxy.child.kill("SIGKILL");
      expect(await eventually(() => !isAlive(server as number), 5000)).toBe(true);
    },
  );
});

describe.skipIf(!cgroupReady)("the server's cgroup", () => {
  it("is named so nobody can make it first, and a name taken is refused in one line, never a weaker fallback", () => {
    const [a, b] = [containmentName(), containmentName()];
    expect(a).toMatch(new RegExp(`^mcpguard-${process.pid}-\\d+-[0-9a-f]{12}$`));
    expect(a.slice(a.lastIndexOf("-"))).not.toBe(b.slice(b.lastIndexOf("-")));
    const path = plannedCgroupPath(a) as string;
    mkdirSync(path);
    try {
      expect(() => createContainment({ name: a })).toThrow(ContainmentError);
      expect(() => createContainment({ name: a })).toThrow(
        `cannot create the server's cgroup ${path}: EEXIST`,
      );
    } finally {
      rmdirSync(path);
    }
    const made = createContainment({ name: b });
    try {
      expect(made.kind).toBe("cgroup");
      expect(made.cgroupPath).toBe(plannedCgroupPath(b));
      expect(made.cgroupId).toBe(statSync(made.cgroupPath as string).ino);
    } finally {
      made.dispose();
    }
  });
});

describe.skipIf(!cgroupReady)("keeping the cgroup lock ready for the held start", () => {
  it("moves no process: one moved to another cgroup meanwhile stays there", () => {
    // A process of its own, which warms the lock, is moved into a cgroup of the test's, warms it
    // again, and says where it is once its writes are done. A warming that remembered the cgroup
    // it first found would move it back.
    const other = plannedCgroupPath(containmentName()) as string;
    mkdirSync(other);
    try {
      const script = `
        const { warmCgroupLock } = await import(${JSON.stringify(join(import.meta.dirname, "..", "dist", "containment.js"))});
        const { readFileSync, writeFileSync } = await import("node:fs");
        const where = () => /^0::(.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))[1];
        const before = where();
        warmCgroupLock();
        await new Promise((done) => setTimeout(done, 50));
        writeFileSync(${JSON.stringify(join(other, "cgroup.procs"))}, String(process.pid));
        const moved = where();
        warmCgroupLock();
        await new Promise((done) => setTimeout(done, 50));
        console.log(JSON.stringify({ before, moved, after: where() }));
      `;
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      const seen = JSON.parse(run.stdout);
      expect(seen.moved).not.toBe(seen.before);
      expect(seen.moved.endsWith(other.slice(other.lastIndexOf("/")))).toBe(true);
      expect(seen.after).toBe(seen.moved);
    } finally {
      rmdirSync(other);
    }
  });
});

describe("a cgroup below a mount of its hierarchy", () => {
  it("is found below the mount's root, and not at all under a mount of another subtree", () => {
    expect(underMountRoot("/a/b", "/")).toBe("/a/b");
    expect(underMountRoot("/a/b", "/a")).toBe("/b");
    expect(underMountRoot("/a", "/a")).toBe("/");
    expect(underMountRoot("/ab/c", "/a")).toBeUndefined();
    expect(underMountRoot("/x/b", "/a")).toBeUndefined();
  });
});

describe.skipIf(!cgroupReady)("the server's limits", () => {
  const run = async (proxy: RawProxy, id: number, argv: string[]) => {
    proxy.request(id, "tools/call", { name: "run", arguments: { argv } });
    return JSON.parse(text(await proxy.next(10_000)));
  };

  for (const config of ["C0", "C-ebpf"]) {
    it.skipIf(config !== "C0" && !l3Ready)(
      `${config}: a fork bomb and a memory hog fail inside the server's cgroup; the proxy keeps working`,
      async () => {
        const log = join(scratch, "limits.ndjson");
        const proxy = new RawProxy(
          [
            ...configArgs(config),
            "--pids-max",
            "48",
            "--memory-max",
            "128M",
            "--audit-log",
            log,
            "--",
            process.execPath,
            FIXTURE,
          ],
          { cwd: work },
        );
        await proxy.initialize();
        const forks = await run(proxy, 1, [HELPER, "forks", "200"]);
        expect(JSON.parse(forks.stdout)).toMatchObject({ error: "EAGAIN" });
        expect(JSON.parse(forks.stdout).forked).toBeLessThan(48);
        const hog = await run(proxy, 2, [HELPER, "hog", "512"]);
        expect(hog).toMatchObject({ signal: "SIGKILL", stdout: "" });
        proxy.request(3, "tools/call", { name: "echo", arguments: { text: "alive" } });
        expect(text(await proxy.next())).toBe("alive");
        proxy.child.stdin.end();
        expect((await proxy.exited).code).toBe(0);
        expect(readNdjson(log).find((e) => e.event === "start").limits).toEqual({
          pidsMax: 48,
          memoryMaxBytes: 128 << 20,
          pids: expect.stringMatching(/^cgroup-v[12]$/),
          memory: expect.stringMatching(/^cgroup-v[12]$/),
        });
      },
    );
  }

  // C0 and C-app start the server through the held shell (ulimit -f), C-full through the launcher.
  for (const config of ["C0", "C-app", "C-full"]) {
    it.skipIf(config === "C-full" && !l3Ready)(
      `${config}: --file-size-max caps every file the server writes (EFBIG or SIGXFSZ at the cap), and only when asked`,
      async () => {
        writeFileSync(
          policy,
          JSON.stringify({
            version: 1,
            server: "proxy-fixture",
            tools: { run: { args: { argv: "scalar" }, exec: [HELPER], write: ["{{cwd}}/**"] } },
          }),
        );
        const capped = new RawProxy(
          [...configArgs(config), "--file-size-max", "1M", "--", process.execPath, FIXTURE],
          { cwd: work },
        );
        await capped.initialize();
        // The helper is started by Node (libuv resets every signal to its default for a child), so
        // SIGXFSZ ends it at the cap; Node and Python servers themselves ignore it and get EFBIG.
        const big = await run(capped, 1, [HELPER, "fsize", join(work, "big.bin"), String(3 << 20)]);
        expect(big.signal === "SIGXFSZ" || JSON.parse(big.stdout).error === "EFBIG").toBe(true);
        expect(statSync(join(work, "big.bin")).size).toBe(1 << 20);
        capped.child.stdin.end();
        expect((await capped.exited).code).toBe(0);
        const free = new RawProxy([...configArgs(config), "--", process.execPath, FIXTURE], { cwd: work });
        await free.initialize();
        const all = await run(free, 1, [HELPER, "fsize", join(work, "big.bin"), String(3 << 20)]);
        expect(JSON.parse(all.stdout)).toEqual({ wrote: 3 << 20, error: null });
        free.child.stdin.end();
        expect((await free.exited).code).toBe(0);
      },
    );
  }

  it("refuses a limit it cannot read, in one line", async () => {
    const proxy = new RawProxy(["--memory-max", "lots", "--", process.execPath, FIXTURE]);
    expect((await proxy.exited).code).toBe(2);
    expect(proxy.stderr).toBe(
      'mcpguard run: --memory-max: expected bytes, or a number with K, M or G (binary units) (got "lots")\n',
    );
  });
});

describe.skipIf(!l3Ready)("L3 below the server: memfd exec and socket families", () => {
  for (const config of ["C-ebpf", "C-full"]) {
    it(`${config}: a static ELF cannot run from a memfd, vsock, packet and netlink (uevent, audit) sockets fail`, async () => {
      const proxy = new RawProxy([...configArgs(config), "--", process.execPath, FIXTURE], { cwd: work });
      await proxy.initialize();
      const attempts = [
        ["memfd-exec"],
        ["socket", "40", "0"], // AF_VSOCK
        ["socket", "17", "0"], // AF_PACKET
        ["socket", "16", "15"], // AF_NETLINK, NETLINK_KOBJECT_UEVENT
        ["socket", "16", "9"], // AF_NETLINK, NETLINK_AUDIT
        ["socket", "16", "0"], // AF_NETLINK, NETLINK_ROUTE: getaddrinfo needs it
      ];
      const results: unknown[] = [];
      for (const [i, args] of attempts.entries()) {
        proxy.request(i + 1, "tools/call", { name: "run", arguments: { argv: [HELPER, ...args] } });
        results.push(JSON.parse(JSON.parse(text(await proxy.next())).stdout));
      }
      expect(results).toEqual([
        { memfd: "ENOSYS", exec: null },
        { socket: "EAFNOSUPPORT" },
        { socket: "EAFNOSUPPORT" },
        { socket: "EAFNOSUPPORT" },
        { socket: "EAFNOSUPPORT" },
        { socket: "ok" },
      ]);
      proxy.child.stdin.end();
      expect((await proxy.exited).code).toBe(0);
    });
  }
});

describe.skipIf(!l3Ready)("a workspace path the kernel layer must take byte for byte", () => {
  for (const config of ["C-ebpf", "C-full"]) {
    it(`${config}: '#', a newline, spaces and non-ASCII in the path grant that path only, not the prefix before '#'`, async () => {
      const odd = join(scratch, "C#proj\nwith  spaces é ü", "ws");
      spawnSync("mkdir", ["-p", odd, join(scratch, "C")]);
      writeFileSync(join(odd, "inside.txt"), "inside");
      writeFileSync(join(scratch, "C", "secret.txt"), "secret");
      const proxy = new RawProxy([...configArgs(config), "--", process.execPath, FIXTURE], { cwd: odd });
      await proxy.initialize();
      proxy.request(1, "tools/call", { name: "read", arguments: { path: "inside.txt" } });
      expect(text(await proxy.next())).toBe("inside");
      // The helper reads on the server's behalf, with nothing of L1 in the way: the kernel decides.
      const helperRead = async (id: number, path: string) => {
        proxy.request(id, "tools/call", { name: "run", arguments: { argv: [HELPER, "read", path] } });
        return JSON.parse(JSON.parse(text(await proxy.next())).stdout);
      };
      expect(await helperRead(2, join(odd, "inside.txt"))).toEqual({ read: "ok" });
      expect(await helperRead(3, join(scratch, "C", "secret.txt"))).toEqual({ read: "EACCES" });
      proxy.child.stdin.end();
      expect((await proxy.exited).code).toBe(0);
    });
  }
});
