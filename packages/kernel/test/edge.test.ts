/**
 * L3 against real processes: the launcher's Landlock ruleset and the loader's cgroup BPF programs,
 * around a probe process that tries what a malicious server would. Needs root, Landlock ABI 6 and
 * cgroup BPF (CI here has them); elsewhere the tests say why they skip.
 */
import { execFileSync, spawn } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KernelNeeds } from "../src/compile.ts";
import { type KernelEvent, KernelGuard, PendingLoader } from "../src/guard.ts";
import { capabilityBackends, probeBackends } from "../src/probe.ts";

const probe = await probeBackends({ fresh: true });
const backends = capabilityBackends(probe);
const missing = Object.entries(backends).filter(([, b]) => b.backend === null);
const skip = missing.length > 0 || !probe.root;
if (skip) {
  console.warn(
    `L3 edge tests skipped: ${probe.root ? missing.map(([c, b]) => `${c}: ${b.detail}`).join("; ") : "not root"}`,
  );
}

const CGROUP2 = readFileSync("/proc/self/mountinfo", "utf8")
  .split("\n")
  .find((l) => l.includes(" - cgroup2 "))
  ?.split(" ")[4] as string;
const PYTHON = "/usr/bin/python3";
const PATH = "/usr/bin:/bin";

let root: string;
let ws: string;
let home: string;
let tmp: string;
let allowed: Server;
let allowedPort: number;
let sink: { tcp4: Server; tcp6: Server; udp: UdpSocket; port: number; contacts: string[] };

function listen(server: Server, host: string, port = 0): Promise<number> {
  return new Promise((resolve) =>
    server.listen({ host, port, ipv6Only: host === "::1" }, () =>
      resolve((server.address() as { port: number }).port),
    ),
  );
}

beforeAll(async () => {
  if (skip) return;
  root = realpathSync(mkdtempSync("/dev/shm/mcpguard-edge-"));
  ws = join(root, "workspace");
  home = join(root, "home");
  tmp = join(root, "tmp");
  for (const d of [ws, `${ws}_evil`, join(home, ".ssh"), tmp]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n");
  symlinkSync(join(home, ".ssh"), join(ws, "keys"));
  writeFileSync(join(ws, "probe.py"), readFileSync(join(import.meta.dirname, "probe.py")));
  allowed = createServer((s) => s.on("error", () => {}).resume());
  allowedPort = await listen(allowed, "127.0.0.1");
  const contacts: string[] = [];
  const tcp4 = createServer((s) => {
    s.on("error", () => {});
    contacts.push(`tcp4 ${s.remoteAddress}`);
  });
  const port = await listen(tcp4, "127.0.0.1");
  const tcp6 = createServer((s) => {
    s.on("error", () => {});
    contacts.push(`tcp6 ${s.remoteAddress}`);
  });
  await listen(tcp6, "::1", port);
  const udp = createSocket("udp4");
  udp.on("message", (_, r) => contacts.push(`udp ${r.address}`));
  await new Promise<void>((resolve) => udp.bind(port, "127.0.0.1", () => resolve()));
  sink = { tcp4, tcp6, udp, port, contacts };
});

afterAll(() => {
  if (skip) return;
  allowed.close();
  sink.tcp4.close();
  sink.tcp6.close();
  sink.udp.close();
  rmSync(root, { recursive: true, force: true });
});

interface Run {
  results: Record<string, unknown>[];
  stdout: string;
  events: KernelEvent[];
}

/** Start `argv` in a fresh cgroup under L3 compiled from `needs`, wait for it, tear everything down. */
async function guarded(
  needs: KernelNeeds,
  argv: string[],
  extraRules: string[][] = [],
  options: { loaderFirst?: boolean } = {},
): Promise<Run> {
  const cgroup = join(CGROUP2, `mcpguard-edge-${process.pid}-${Math.random().toString(16).slice(2)}`);
  // As `mcpguard run` does: the loader verifies its programs before the cgroup is made.
  const loader = options.loaderFirst ? new PendingLoader({ cgroup, lsm: false }) : undefined;
  if (loader) await new Promise((resolve) => setTimeout(resolve, 30));
  mkdirSync(cgroup);
  const events: KernelEvent[] = [];
  const env = { PATH, HOME: home, TMPDIR: tmp, LANG: "C.UTF-8" };
  const guard = await KernelGuard.start({
    cgroup,
    needs,
    argv,
    env,
    lsm: false,
    loader,
    onEvent: (e) => events.push(e),
  });
  expect(guard.cgroupId).toBe(statSync(cgroup).ino);
  try {
    const launch = guard.launch(argv, cgroup);
    const child = spawn(launch.argv[0] as string, launch.argv.slice(1), {
      cwd: ws,
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    // Records appended to the compiled ruleset, for rights the compilation never gives on its own.
    const extra = extraRules.map((fields) => `${fields.join("\0")}\0\0`).join("");
    (child.stdio[3] as NodeJS.WritableStream).end((launch.fd3 ?? "") + extra);
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    await new Promise((resolve) => child.once("close", resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const results = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    return { results, stdout, events };
  } finally {
    await guard.stop();
    writeFileSync(join(cgroup, "cgroup.kill"), "1");
    for (let i = 0; i < 100 && /populated 1/.test(readFileSync(join(cgroup, "cgroup.events"), "utf8")); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    rmdirSync(cgroup);
    expect(execFileSync("bpftool", ["cgroup", "show", CGROUP2]).toString().trim()).toBe("");
  }
}

const python = (needs: KernelNeeds, ...ops: string[][]) =>
  guarded(needs, [PYTHON, "-B", join(ws, "probe.py"), ...ops.flatMap((op, i) => (i ? ["--", ...op] : op))]);
const workspaceOnly = (): KernelNeeds => ({ read: [ws], write: [ws], exec: [], network: [], shell: false });
const denied = { ok: false, errno: 13 };
/** The guard alone on `cgroup` (no server launched), with the loader given or its own. */
const bareStart = (cgroup: string, loader?: PendingLoader) =>
  KernelGuard.start({
    cgroup,
    needs: workspaceOnly(),
    argv: [PYTHON],
    env: { PATH },
    lsm: false,
    loader,
    onEvent: () => {},
  });

describe.skipIf(skip)("L3 on this host (Landlock + cgroup BPF)", () => {
  it("allows writes in the workspace; refuses a prefix sibling, tmp staging and home, leaving no file", async () => {
    const { results } = await python(
      workspaceOnly(),
      ["write", join(ws, "allowed.txt")],
      ["write", join(`${ws}_evil`, "x.txt")],
      ["write", join(tmp, ".staged")],
      ["write", join(home, ".bashrc")],
    );
    expect(results).toEqual([
      { ok: true },
      expect.objectContaining(denied),
      expect.objectContaining(denied),
      expect.objectContaining(denied),
    ]);
    expect(readFileSync(join(ws, "allowed.txt"), "utf8")).toBe("written under L3\n");
    for (const p of [join(`${ws}_evil`, "x.txt"), join(tmp, ".staged"), join(home, ".bashrc")])
      expect(existsSync(p), p).toBe(false);
  });

  it("refuses reading the home canaries, also through a symlink or .. out of the workspace", async () => {
    const { results } = await python(
      workspaceOnly(),
      ["read", join(home, ".ssh", "id_rsa")],
      ["read", join(ws, "keys", "id_rsa")],
      ["read", join(ws, "..", "home", ".ssh", "id_rsa")],
      ["read", join(ws, "probe.py")],
    );
    expect(results.slice(0, 3)).toEqual([
      expect.objectContaining(denied),
      expect.objectContaining(denied),
      expect.objectContaining(denied),
    ]);
    expect(results[3]).toMatchObject({ ok: true });
  });

  it("refuses exec of curl, python3 -c and node -e unless the policy allows them", async () => {
    const script =
      'curl -s -m 1 http://127.0.0.1:9/ >/dev/null 2>&1; echo "curl=$?"; python3 -c "print(1)" >/dev/null 2>&1; echo "python=$?"; node -e 1 >/dev/null 2>&1; echo "node=$?"';
    const sh = ["/bin/sh", "-c", script];
    const closed = await guarded({ ...workspaceOnly(), shell: true }, sh);
    expect(closed.stdout).toBe("curl=126\npython=126\nnode=126\n");
    const open = await guarded({ ...workspaceOnly(), shell: true, exec: ["python3", "node"] }, sh);
    expect(open.stdout).toBe("curl=126\npython=0\nnode=0\n");
  });

  it("refuses TCP v4, TCP v6, v4-mapped, UDP and raw sockets to the sink, while an allowed destination works", async () => {
    const needs = { ...workspaceOnly(), network: [`127.0.0.1:${allowedPort}`] };
    const { results, events } = await python(
      needs,
      ["tcp4", "127.0.0.1", String(allowedPort)],
      ["tcp4", "127.0.0.1", String(sink.port)],
      ["tcp4", "127.0.0.2", String(allowedPort)],
      ["tcp6", "::1", String(sink.port)],
      ["tcp6", "::1", String(allowedPort)],
      ["mapped", "127.0.0.2", String(allowedPort)],
      ["udp4", "127.0.0.1", String(sink.port)],
      ["raw"],
    );
    expect(results[0]).toEqual({ ok: true });
    for (const r of results.slice(1)) expect(r).toMatchObject({ ok: false, errno: expect.any(Number) });
    expect([1, 13]).toContain(results[1]?.errno); // Landlock refuses the port (EACCES)
    for (const r of [results[2], results[4], results[5], results[6], results[7]]) expect(r?.errno).toBe(1); // cgroup BPF: EPERM
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.contacts).toEqual([]);
    const ops = events.filter((e) => e.type === "deny" && e.backend === "cgroup-bpf").map((e) => e.op);
    expect(ops).toEqual(expect.arrayContaining(["connect4", "connect6", "sendmsg4"]));
  });

  it("holds with a loader started before its cgroup existed (it opens the cgroup once it has read its policy)", async () => {
    const needs = { ...workspaceOnly(), network: [`127.0.0.1:${allowedPort}`] };
    const { results, events } = await guarded(
      needs,
      [
        PYTHON,
        "-B",
        join(ws, "probe.py"),
        ...["tcp4", "127.0.0.1", String(allowedPort), "--", "tcp4", "127.0.0.2", String(allowedPort)],
      ],
      [],
      { loaderFirst: true },
    );
    expect(results).toEqual([{ ok: true }, expect.objectContaining({ ok: false, errno: 1 })]);
    expect(events.filter((e) => e.type === "deny" && e.backend === "cgroup-bpf").map((e) => e.op)).toEqual([
      "connect4",
    ]);
  });

  it("gives a loader its ready deadline from when its policy is sent, not from its spawn", async () => {
    // The proxy may take long to load a policy (a pipe, a big file): the loader waits on it meanwhile.
    const cgroup = join(CGROUP2, `mcpguard-edge-${process.pid}-late`);
    const loader = new PendingLoader({ cgroup, lsm: false, readyTimeoutMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    mkdirSync(cgroup);
    try {
      const guard = await bareStart(cgroup, loader);
      expect(guard.cgroupId).toBe(statSync(cgroup).ino);
      await guard.stop();
    } finally {
      rmdirSync(cgroup);
    }
  });

  it("refuses a loader started for another cgroup, and ends it", async () => {
    const loader = new PendingLoader({ cgroup: join(CGROUP2, "mcpguard-edge-other"), lsm: false });
    await expect(bareStart(join(CGROUP2, "mcpguard-edge-this"), loader)).rejects.toThrow(
      /started for .*mcpguard-edge-other without LSM, without unix socket programs, not for .*mcpguard-edge-this/,
    );
    await loader.exited;
    expect(loader.process.signalCode).toBe("SIGKILL");
  });

  it("holds for children and grandchildren", async () => {
    const needs = { ...workspaceOnly(), shell: true, network: [`127.0.0.1:${allowedPort}`] };
    const { results } = await python(
      needs,
      ["child", "write", join(home, "planted")],
      ["child", "read", join(home, ".ssh", "id_rsa")],
      ["child", "tcp4", "127.0.0.2", String(allowedPort)],
      ["child", "write", join(ws, "from-grandchild.txt")],
    );
    expect(results.slice(0, 3).map((r) => r.ok)).toEqual([false, false, false]);
    expect(results[3]).toEqual({ ok: true });
    expect(existsSync(join(home, "planted"))).toBe(false);
  });

  it("keeps a root server in its cgroup", async () => {
    const { results } = await python(workspaceOnly(), ["leave-cgroup", CGROUP2]);
    expect(results).toEqual([expect.objectContaining(denied)]);
  });

  it("reports what Landlock refused through the telemetry", async () => {
    const { events } = await python(workspaceOnly(), ["read", join(home, ".ssh", "id_rsa")]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "denied",
        backend: "landlock",
        errno: 13,
        path: join(home, ".ssh", "id_rsa"),
      }),
    );
  });

  it("moves a file into a subfolder of a write grant, and between two grants with the same rights", async () => {
    const other = join(root, "other");
    mkdirSync(join(ws, "moves", "sub"), { recursive: true });
    mkdirSync(other, { recursive: true });
    writeFileSync(join(ws, "moves", "a.txt"), "a");
    const needs: KernelNeeds = { read: [ws, other], write: [ws, other], exec: [], network: [], shell: false };
    const { results, events } = await python(
      needs,
      ["rename", join(ws, "moves", "a.txt"), join(ws, "moves", "sub", "a.txt")],
      ["rename", join(ws, "moves", "sub", "a.txt"), join(other, "a.txt")],
      ["rename", join(other, "a.txt"), join(ws, "moves", "a.txt")],
      ["link", join(ws, "moves", "a.txt"), join(ws, "moves", "sub", "b.txt")],
    );
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }, { ok: true }]);
    expect(readFileSync(join(ws, "moves", "sub", "b.txt"), "utf8")).toBe("a");
    expect(events.filter((e) => e.type === "denied" && /rename|link/.test(String(e.syscall)))).toEqual([]);
  });

  it("refuses a rename out of the grant, or to where the file would gain rights, and reports both paths", async () => {
    const bin = join(root, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(ws, "out.txt"), "x");
    // bin may be written and executed: a file moved there from ws would gain the right to run.
    const needs: KernelNeeds = { read: [ws], write: [ws, bin], exec: [], network: [], shell: false };
    const { results, events } = await guarded(
      needs,
      [PYTHON, "-B", join(ws, "probe.py"), "rename", join(ws, "out.txt"), join(tmp, "out.txt")].concat([
        "--",
        "rename",
        join(ws, "out.txt"),
        join(bin, "out.txt"),
      ]),
      [["fs", "execute", bin]],
    );
    expect(results).toEqual([
      expect.objectContaining({ ok: false, errno: 13 }),
      expect.objectContaining({ ok: false, errno: 18 }),
    ]);
    expect(existsSync(join(ws, "out.txt"))).toBe(true);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "denied",
        backend: "landlock",
        syscall: "rename",
        errno: 13,
        path: join(ws, "out.txt"),
        to: join(tmp, "out.txt"),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: "denied", syscall: "rename", errno: 18, to: join(bin, "out.txt") }),
    );
  });

  it("does not report a rename that really crossed filesystems (EXDEV from the VFS, not Landlock)", async () => {
    const disk = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-edge-disk-")));
    try {
      if (statSync(disk).dev === statSync(ws).dev)
        return console.warn("skipped: tmpdir is on the same filesystem as /dev/shm");
      writeFileSync(join(ws, "cross.txt"), "x");
      const needs: KernelNeeds = { read: [ws, disk], write: [ws, disk], exec: [], network: [], shell: false };
      const { results, events } = await python(needs, [
        "rename",
        join(ws, "cross.txt"),
        join(disk, "cross.txt"),
      ]);
      expect(results).toEqual([expect.objectContaining({ ok: false, errno: 18 })]);
      expect(events.filter((e) => e.syscall === "rename")).toEqual([]);
    } finally {
      rmSync(disk, { recursive: true, force: true });
    }
  });

  it("fails closed when the loader cannot attach", async () => {
    await expect(bareStart(join(CGROUP2, "no-such-cgroup"))).rejects.toThrow(/no-such-cgroup|cgroup/);
  });
});
