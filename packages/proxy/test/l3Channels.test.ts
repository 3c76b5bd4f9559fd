/**
 * Issue 29: the channels Landlock and cgroup BPF do not see, closed under the L3 configs by the
 * launcher (bpf/launcher.c, bpf/seccomp.h): SysV IPC of the host (an IPC namespace of the server's
 * own), user namespaces and the kernel keyring (seccomp), and abstract unix socket names a server
 * binds (a network namespace of its own where its policy grants no network). C-app is the baseline
 * that shows each channel open without the kernel layer.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually, FIXTURE, MCPGUARD, RawProxy, readNdjson, workspaceWithPolicy } from "./helpers.ts";

const HELPER = join(import.meta.dirname, "..", "..", "..", "bpf", ".output", "mcpguard-test-helper");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3Ready = doctor.status === 0;
if (!l3Ready)
  console.warn(`L3 channel tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

let scratch: string;
let work: string;
let policy: string;
beforeEach(() => {
  ({ scratch, work, policy } = workspaceWithPolicy("mcpguard-channels-", {
    run: { args: { argv: "scalar" }, exec: [HELPER] },
  }));
});
afterEach(() => spawnSync("rm", ["-rf", scratch]));

const configArgs = (config: string) => ["--config", config, "--policy", policy];
const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

/**
 * A process of the same user outside the server, holding a 0600 SysV shared memory segment and a
 * message queue (Python's ctypes: Node has no SysV calls). It prints its key, then, when stdin
 * ends, what the segment holds and how many messages the queue got, and removes both.
 */
function sysvHost(key: number) {
  const script = `
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shm = libc.shmget(${key}, 4096, 0o1000 | 0o600)
msg = libc.msgget(${key}, 0o1000 | 0o600)
p = libc.shmat(shm, None, 0)
ctypes.memmove(p, b"host secret\\0", 12)
print("ready", flush=True)
sys.stdin.read()
buf = ctypes.create_string_buffer(256)
count = 0
while libc.msgrcv(msg, buf, 200, 0, 0o4000) >= 0:  # IPC_NOWAIT: until ENOMSG
    count += 1
print(json.dumps({"text": ctypes.string_at(p).decode(), "messages": count}), flush=True)
libc.shmdt(ctypes.c_void_p(p)); libc.shmctl(shm, 0, None); libc.msgctl(msg, 0, None)
`;
  const child = spawn("/usr/bin/python3", ["-c", script], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const ready = eventually(() => out.startsWith("ready"));
  const finish = async () => {
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
    return JSON.parse(out.split("\n")[1] ?? "null") as { text: string; messages: number };
  };
  return { ready, finish };
}

/** Connect from outside the server to an abstract unix socket name (Node cannot): "ok" or the errno's name. */
function connectAbstract(name: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(HELPER, ["connect-abstract", name], (_, stdout) => resolve(JSON.parse(stdout).connect));
  });
}

describe.skipIf(!l3Ready)(
  "L3 closes what Landlock and cgroup BPF cannot see: IPC, user namespaces, keys, abstract names",
  () => {
    // C-app is the baseline: each channel is open without the kernel layer, so the test can fail.
    for (const config of ["C-app", "C-ebpf", "C-full"]) {
      it(`${config}: a host SysV segment and queue, unshare(CLONE_NEWUSER), add_key, and a squatted abstract name`, async () => {
        const confined = config !== "C-app";
        const key = 0x6d630000 + (process.pid % 0xffff);
        const host = sysvHost(key);
        await host.ready;
        const proxy = new RawProxy([...configArgs(config), "--", process.execPath, FIXTURE], { cwd: work });
        await proxy.initialize();
        let id = 0;
        const helper = async (...args: string[]) => {
          proxy.request(++id, "tools/call", { name: "run", arguments: { argv: [HELPER, ...args] } });
          return JSON.parse(JSON.parse(text(await proxy.next())).stdout.split("\n")[0]);
        };
        const shm = await helper("shm", String(key), "overwritten");
        const msg = await helper("msg", String(key), "hello");
        const userns = await helper("userns");
        const keyring = await helper("keyctl");
        // The server listens on an abstract name for 1.5 s while a program outside connects to it.
        const name = `mcpguard-squat-${process.pid}-${config}`;
        proxy.request(++id, "tools/call", {
          name: "run",
          arguments: { argv: [HELPER, "bind-abstract", name, "2"] },
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        const outside = await connectAbstract(name);
        const bind = JSON.parse(text(await proxy.next()))
          .stdout.trim()
          .split("\n")
          .map((l: string) => JSON.parse(l));
        const held = await host.finish();
        proxy.child.stdin.end();
        expect((await proxy.exited).code).toBe(0);
        if (!confined) {
          expect(shm).toEqual({ shm: "ok", read: "host secret" });
          expect(held).toEqual({ text: "overwritten", messages: 1 });
          expect(msg).toEqual({ msg: "ok" });
          expect(userns.unshare).toBe("ok");
          expect(keyring).toEqual({ keyring: "ok" });
          expect(outside).toBe("ok");
          expect(bind).toEqual([{ bind: "ok" }, { accepted: 1 }]);
          return;
        }
        // An IPC namespace of its own: the host's key does not exist there.
        expect(shm).toEqual({ shm: "ENOENT", read: null });
        expect(msg).toEqual({ msg: "ENOENT" });
        expect(held).toEqual({ text: "host secret", messages: 0 });
        expect(userns).toEqual({ unshare: "EPERM", clone: "EPERM", clone3: "ENOSYS" });
        expect(keyring).toEqual({ keyring: "ENOSYS" });
        // The policy grants no network: the name is bound in the server's own network namespace.
        expect(bind).toEqual([{ bind: "ok" }, { accepted: 0 }]);
        expect(outside).toBe("ECONNREFUSED");
      });
    }
  },
);

describe.skipIf(!l3Ready)("the launcher where it may not make namespaces", () => {
  it("without --isolate ipc, the seccomp filter refuses SysV IPC (ENOSYS) instead of reaching the host's objects", async () => {
    const key = 0x6d640000 + (process.pid % 0xffff);
    const host = sysvHost(key);
    await host.ready;
    const launcher = join(HELPER, "..", "mcpguard-exec");
    const run = (...args: string[]) =>
      JSON.parse(spawnSync(launcher, ["--seccomp", "--", HELPER, ...args], { encoding: "utf8" }).stdout);
    expect(run("shm", String(key), "overwritten")).toEqual({ shm: "ENOSYS", read: null });
    expect(run("msg", String(key), "hello")).toEqual({ msg: "ENOSYS" });
    expect(await host.finish()).toEqual({ text: "host secret", messages: 0 });
  });

  it("a policy that grants network keeps the host's network namespace, and the start record says what that leaves open", async () => {
    const log = join(scratch, "audit.ndjson");
    const granted = join(scratch, "net-policy.json");
    writeFileSync(
      granted,
      JSON.stringify({
        version: 1,
        server: "proxy-fixture",
        tools: { run: { args: { argv: "scalar" }, exec: [HELPER], network: ["127.0.0.1:9"] } },
      }),
    );
    const proxy = new RawProxy(
      ["--config", "C-full", "--policy", granted, "--audit-log", log, "--", process.execPath, FIXTURE],
      { cwd: work },
    );
    await proxy.initialize();
    const name = `mcpguard-shared-${process.pid}`;
    proxy.request(1, "tools/call", {
      name: "run",
      arguments: { argv: [HELPER, "bind-abstract", name, "2"] },
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await connectAbstract(name)).toBe("ok");
    await proxy.next();
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
    const start = readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((r) => r.type === "lifecycle" && r.event === "start");
    expect(start.l3Hardening).toMatchObject({
      "sysv-ipc": "ipc-namespace",
      "abstract-unix-bind": "net-namespace",
    });
    expect(start.l3Notes).toContainEqual(
      expect.stringMatching(/abstract unix socket names it binds are the host's/),
    );
  });
});

describe.skipIf(!l3Ready)(
  "a file's mode, owner, times and extended attributes, which Landlock does not mediate",
  () => {
    // C-app is the baseline: the change goes through anywhere the proxy's user may make it.
    for (const config of ["C-app", "C-ebpf", "C-full"]) {
      it(`${config}: changed only inside the write grants (EROFS outside), and the start record says how`, async () => {
        const outside = join(scratch, "outside.txt");
        const inside = join(work, "inside.txt");
        writeFileSync(outside, "not the server's\n");
        mkdirSync(join(scratch, "second"));
        writeFileSync(inside, "the server's\n");
        const writer = join(scratch, "meta-policy.json");
        writeFileSync(
          writer,
          JSON.stringify({
            version: 1,
            server: "proxy-fixture",
            tools: {
              run: {
                args: { argv: "scalar" },
                exec: [HELPER],
                read: [`${scratch}/**`],
                // A file grant inside a folder grant, as js_sqlite's store and its temporary file.
                write: ["{{cwd}}/**", "{{cwd}}/inside.txt", "/dev/null", `${scratch}/second/**`],
              },
            },
          }),
        );
        const log = join(scratch, "audit.ndjson");
        const proxy = new RawProxy(
          ["--config", config, "--policy", writer, "--audit-log", log, "--", process.execPath, FIXTURE],
          { cwd: work },
        );
        await proxy.initialize();
        let id = 0;
        const meta = async (path: string) => {
          proxy.request(++id, "tools/call", { name: "run", arguments: { argv: [HELPER, "meta", path] } });
          return JSON.parse(JSON.parse(text(await proxy.next())).stdout.split("\n")[0]);
        };
        const there = await meta(inside);
        const elsewhere = await meta(outside);
        const device = await meta("/dev/null");
        const call = async (...argv: string[]) => {
          proxy.request(++id, "tools/call", { name: "run", arguments: { argv: [HELPER, ...argv] } });
          return JSON.parse(JSON.parse(text(await proxy.next())).stdout.split("\n")[0]);
        };
        // An atomic save onto a file granted inside a granted folder: one mount, so no EBUSY.
        const save = await call("replace", inside);
        // A file handle opened through the writable folder: no way around the rules.
        const handle = await call("handle", outside, work);
        // A move between two write grants: two mounts under L3 (EXDEV, as between filesystems), no refusal.
        writeFileSync(join(work, "moving.txt"), "m\n");
        const moved = await call("move", join(work, "moving.txt"), join(scratch, "second", "moving.txt"));
        proxy.child.stdin.end();
        expect((await proxy.exited).code).toBe(0);
        expect(there).toMatchObject({ chmod: "ok", chown: "ok", utimes: "ok" });
        expect(save).toEqual({ replace: "ok" });
        expect(readFileSync(inside, "utf8")).toBe("saved\n");
        if (config === "C-app") {
          expect(elsewhere).toMatchObject({ chmod: "ok", chown: "ok", utimes: "ok" });
          expect(handle).toEqual({ handle: "ok", open: "ok" });
          return;
        }
        expect(elsewhere).toEqual({ chmod: "EROFS", chown: "EROFS", utimes: "EROFS", xattr: "EROFS" });
        // A device is written through on a read-only mount, and its mode is the host's: not changed.
        expect(device).toMatchObject({ chmod: "EROFS", chown: "EROFS" });
        // No CAP_DAC_READ_SEARCH, and seccomp refuses the call.
        expect(handle).toEqual({ handle: "ok", open: "EPERM" });
        expect(moved).toEqual({ move: "EXDEV" });
        const start = readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .find((r) => r.type === "lifecycle" && r.event === "start");
        expect(start.l3Hardening).toMatchObject({ "file-metadata": "read-only-mounts" });
        // The move the grants allow is no refusal in the log; the writes outside them are.
        const records = readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line));
        expect(records.filter((r) => r.event === "denied" && r.errno === 18)).toEqual([]);
        // Each change refused outside them is in the log, as the file writes refused are.
        const metadata = records.filter((r) => r.event === "denied" && r.errno === 30 && r.path === outside);
        expect(metadata.map((r) => r.syscall).sort()).toEqual(["chmod", "chown", "setxattr", "utimensat"]);
        expect(
          metadata.every(
            (r) => r.decision === "deny" && r.access === "w" && r.backend === "read-only-mounts",
          ),
        ).toBe(true);
      });
    }
  },
);

/**
 * npx is resolved here, outside the sandbox, in the folder the client starts the proxy from. Where
 * the server may write that folder, what it left there at its last run (a `.npmrc` whose
 * script-shell is its program) must not run at its next start (launchers.ts).
 */
describe.skipIf(!l3Ready)("a launcher's settings the server may write, at its next start", () => {
  it("C-full: npx in the server's own workspace runs without its .npmrc, and the start record says so", async () => {
    const writer = join(scratch, "writer.json");
    writeFileSync(
      writer,
      JSON.stringify({
        version: 1,
        server: "proxy-fixture",
        tools: { echo: { args: { text: "text" }, write: ["{{cwd}}/**"] } },
      }),
    );
    // What the server could have written in its workspace: a project with its own server package,
    // and npm settings that run a program of its own for npx's command.
    const pkg = join(work, "node_modules", "tiny-server");
    mkdirSync(join(work, "node_modules", ".bin"), { recursive: true });
    mkdirSync(pkg);
    writeFileSync(join(work, "package.json"), '{"name":"proj","version":"1.0.0"}\n');
    writeFileSync(
      join(pkg, "package.json"),
      '{"name":"tiny-server","version":"1.0.0","bin":{"tiny-server":"server.mjs"}}\n',
    );
    writeFileSync(join(pkg, "server.mjs"), readFileSync(FIXTURE), { mode: 0o755 });
    symlinkSync("../tiny-server/server.mjs", join(work, "node_modules", ".bin", "tiny-server"));
    const marker = join(scratch, "outside-the-sandbox");
    writeFileSync(join(work, "shell.sh"), `#!/bin/sh\necho ran > ${marker}\nexec /bin/sh "$@"\n`, {
      mode: 0o755,
    });
    writeFileSync(join(work, ".npmrc"), `script-shell=${join(work, "shell.sh")}\n`);
    const log = join(scratch, "audit.ndjson");
    const proxy = new RawProxy(
      ["--config", "C-full", "--policy", writer, "--audit-log", log, "--", "npx", "tiny-server"],
      { cwd: work },
    );
    await proxy.initialize();
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const start = readNdjson(log).find((r) => r.type === "lifecycle" && r.event === "start");
    expect(start.launcher).toBe("npx tiny-server");
    expect(start.l3Notes).toContainEqual(
      `npx ran without the project's npm settings: the server may write ${join(work, ".npmrc")} (${work}, the write grant of tool echo)`,
    );
  });
});
