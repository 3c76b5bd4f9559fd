/**
 * Pathname unix sockets under L3 (bpf/unix.bpf.h): a confined server connects and sends only to the
 * sockets its policy names (`sockets`), byte for byte; every other one, a container daemon's or an
 * ssh agent's, fails with EPERM and is written to the audit log. Landlock does not mediate them.
 * C-app is the baseline that shows the channel open without the kernel layer.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FIXTURE, MCPGUARD, RawProxy, readNdjson, workspaceWithPolicy } from "./helpers.ts";

const HELPER = join(import.meta.dirname, "..", "..", "..", "bpf", ".output", "mcpguard-test-helper");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const unixBackend: string | undefined =
  doctor.status === 0 ? JSON.parse(doctor.stdout).capabilities.unix.backend : undefined;
const mediated = unixBackend === "landlock+cgroup-bpf";
if (!mediated)
  console.warn(
    `L3 unix socket tests skipped: mcpguard doctor says pathname sockets are not mediated here (${unixBackend ?? doctor.stdout})`,
  );

let scratch: string;
let work: string;
/** The audit key's folder, outside the server's world (TMPDIR). */
let keys: string;
beforeAll(() => {
  keys = mkdtempSync("/var/tmp/mcpguard-unix-keys-");
});
afterAll(() => rmSync(keys, { recursive: true, force: true }));
let host: string;
let servers: Server[];
const listen = (path: string) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer((socket) => socket.end()).once("error", reject);
    server.listen(path, () => resolve(server));
  });

beforeEach(async () => {
  ({ scratch, work } = workspaceWithPolicy("mcpguard-unix-", {}));
  host = join(scratch, "host");
  mkdirSync(host);
  servers = [await listen(join(host, "granted.sock")), await listen(join(host, "agent.sock"))];
});
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  spawnSync("rm", ["-rf", scratch]);
});

function policyWith(tool: Record<string, unknown>): string {
  const policy = join(scratch, "policy.json");
  writeFileSync(
    policy,
    JSON.stringify({
      version: 1,
      server: "proxy-fixture",
      tools: { run: { args: { argv: "scalar" }, ...tool } },
    }),
  );
  return policy;
}

const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

describe.skipIf(!mediated)("L3 mediates pathname unix sockets: only the policy's, by name", () => {
  for (const config of ["C-app", "C-ebpf", "C-full"]) {
    it(`${config}: a named socket works; another one, another spelling of the named one, and a missing one are refused and audited`, async () => {
      const confined = config !== "C-app";
      const granted = join(host, "granted.sock");
      const audit = join(scratch, "audit.jsonl");
      const policy = policyWith({ exec: [HELPER], sockets: [granted] });
      const proxy = new RawProxy(
        [
          ...["--config", config, "--policy", policy],
          ...["--audit-log", audit, "--audit-key", join(keys, "audit.key")],
          ...["--", process.execPath, FIXTURE],
        ],
        { cwd: work },
      );
      await proxy.initialize();
      let id = 0;
      const unix = async (path: string) => {
        proxy.request(++id, "tools/call", { name: "run", arguments: { argv: [HELPER, "unix", path] } });
        return JSON.parse(JSON.parse(text(await proxy.next())).stdout.split("\n")[0]);
      };
      // A datagram to a stream socket fails with EPROTOTYPE once the kernel has looked the name up.
      const reached = { connect: "ok", sendto: "EPROTOTYPE" };
      const refused = { connect: "EPERM", sendto: "EPERM" };
      expect(await unix(granted)).toEqual(reached);
      expect(await unix(join(host, "agent.sock"))).toEqual(confined ? refused : reached);
      expect(await unix(`${host}/./granted.sock`)).toEqual(confined ? refused : reached);
      // Refused before the name is looked up: EPERM, not ENOENT.
      expect(await unix(join(host, "missing.sock"))).toEqual(
        confined ? refused : { connect: "ENOENT", sendto: "ENOENT" },
      );
      // No root of its own choosing, under which the granted name would lead elsewhere.
      proxy.request(++id, "tools/call", { name: "run", arguments: { argv: [HELPER, "chroot", work] } });
      expect(JSON.parse(JSON.parse(text(await proxy.next())).stdout)).toEqual({
        chroot: confined ? "EPERM" : "ok",
      });
      proxy.child.stdin.end();
      expect((await proxy.exited).code).toBe(0);
      const denials = readNdjson(audit)
        .filter((r) => r.type === "kernel" && r.decision === "deny" && /_unix$/.test(r.op))
        .map((r) => `${r.op} ${r.path}`);
      if (!confined) return expect(denials).toEqual([]);
      for (const path of [join(host, "agent.sock"), `${host}/./granted.sock`, join(host, "missing.sock")]) {
        expect(denials).toContain(`connect_unix ${path}`);
        expect(denials).toContain(`sendmsg_unix ${path}`);
      }
      expect(denials.filter((d) => d.endsWith(` ${granted}`))).toEqual([]);
    });
  }

  it("refuses to start a server granted a socket in a folder it may write, through a symlink, or on procfs", async () => {
    mkdirSync(join(work, "run"));
    symlinkSync(join(work, "run"), join(scratch, "linked"));
    // /proc/self/fd/N and /proc/self/cwd lead wherever the server points them: any socket at all.
    for (const socket of [
      join(work, "run", "app.sock"),
      join(scratch, "linked", "app.sock"),
      "/dev/fd/3",
      "/proc/self/cwd/app.sock",
    ]) {
      const policy = policyWith({ exec: [HELPER], write: [join(work, "run")], sockets: [socket] });
      const r = spawnSync(
        process.execPath,
        [MCPGUARD, "run", "--config", "C-full", "--policy", policy, "--", process.execPath, FIXTURE],
        { cwd: work, encoding: "utf8", input: "" },
      );
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(
        /unix socket .*(app\.sock|fd\/3) leads through .*(which the server may write|procfs)/,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("refuses a policy whose socket is not one absolute, normal path", () => {
    for (const socket of ["run/docker.sock", "/run/./docker.sock", "/run//docker.sock", "/run/*.sock"]) {
      const policy = policyWith({ sockets: [socket] });
      const r = spawnSync(
        process.execPath,
        [MCPGUARD, "run", "--config", "C-app", "--policy", policy, "--", process.execPath, FIXTURE],
        { cwd: work, encoding: "utf8", input: "" },
      );
      expect(r.status, socket).not.toBe(0);
      expect(r.stderr, socket).toMatch(/sockets/);
    }
  });
});
