/** The audit log under load: rotation by size with several writers, and `mcpguard audit`. */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditLog, auditFiles } from "../src/audit.ts";
import { type AuditKey, loadAuditKey } from "../src/auditKey.ts";
import { parseSince } from "../src/commands/audit.ts";
import { MCPGUARD } from "./helpers.ts";

let dir: string;
let key: AuditKey;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpguard-audit-"));
  key = loadAuditKey(join(dir, "key", "audit.key"), true);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const AUDIT_JS = join(import.meta.dirname, "..", "dist", "audit.js");
const AUDIT_KEY_JS = join(import.meta.dirname, "..", "dist", "auditKey.js");

/** Every line of the log and its rotated files, parsed, without the log's own rotate/prune records. */
const events = (file: string) =>
  auditFiles(file).flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type !== "audit"),
  );

function writer(
  file: string,
  name: string,
  lines: number,
  maxBytes: number,
  keep: number,
): Promise<number | null> {
  const script = `
    const { AuditLog } = await import(${JSON.stringify(AUDIT_JS)});
    const { loadAuditKey } = await import(${JSON.stringify(AUDIT_KEY_JS)});
    const key = loadAuditKey(${JSON.stringify(key.path)}, false);
    const log = new AuditLog(${JSON.stringify(file)}, { ...key, maxBytes: ${maxBytes}, keep: ${keep} });
    for (let i = 0; i < ${lines}; i++) {
      log.write({ type: "decision", server: ${JSON.stringify(name)}, tool: "t" + i, config: "C-app", layer: "L1", rule: null,
        decision: i % 3 ? "allow" : "deny", reason: "r", latencyMs: 0, argsDigest: "sha256:x" });
    }
    log.close();`;
  return new Promise((resolve) =>
    spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" }).once(
      "exit",
      resolve,
    ),
  );
}

describe("rotation", () => {
  it("loses no line with four concurrent writers rotating every few kilobytes, and the log verifies", async () => {
    const file = join(dir, "audit.ndjson");
    const codes = await Promise.all(
      ["a", "b", "c", "d"].map((w) => writer(file, w, 1500, 8 * 1024, 100_000)),
    );
    expect(codes).toEqual([0, 0, 0, 0]);
    const files = auditFiles(file);
    expect(files.length).toBeGreaterThan(20);
    const seen = new Map<string, number>();
    for (const e of events(file)) {
      const name = `${e.server}:${e.tool}`; // every line is whole JSON: no interleaving
      seen.set(name, (seen.get(name) ?? 0) + 1);
    }
    expect(seen.size).toBe(6000);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    const verify = spawnSync(process.execPath, [MCPGUARD, "audit", "verify", "--audit-key", key.path, file], {
      encoding: "utf8",
    });
    expect(verify.stdout).toMatch(/^OK: .*: 4 sessions, \d+ records in \d+ files, 0 unterminated\n$/);
    expect(verify.status).toBe(0);
  }, 60_000);

  it("keeps the newest rotated files whole, compacts the older ones, and loses nothing of a session still writing", () => {
    const file = join(dir, "audit.ndjson");
    const log = new AuditLog(file, { ...key, maxBytes: 600, keep: 2, settleMs: 0 });
    for (let i = 0; i < 60; i++)
      log.write({ type: "lifecycle", event: "start", server: "s", config: "C0", pid: i });
    log.close();
    const files = auditFiles(file);
    expect(files.at(-1)).toBe(file);
    expect(files.filter((f) => f !== file && !f.endsWith(".compact"))).toHaveLength(2);
    expect(files.filter((f) => f.endsWith(".compact")).length).toBeGreaterThan(2);
    // Compaction drops kernel records only, and a session that writes is never pruned.
    expect(events(file).map((e) => e.pid)).toEqual([...Array(60).keys()]);
  });
});

describe("opening", () => {
  it("loads node:crypto at the first record, not at open (a start's path), and seals it with the key's id", () => {
    const file = join(dir, "audit.ndjson");
    const world = JSON.stringify(join(dir, "world"));
    // The proxy's own module list: node:crypto is a builtin, so require.cache never names it.
    const script = `
      const { openAuditLog } = await import(${JSON.stringify(AUDIT_KEY_JS)});
      const loaded = () => process.moduleLoadList.includes("NativeModule crypto");
      const before = loaded();
      const log = openAuditLog({ file: ${JSON.stringify(file)}, keyFile: ${JSON.stringify(key.path)}, env: {}, serverCwd: ${world}, serverEnv: { TMPDIR: ${world} } });
      const opened = loaded();
      log.write({ type: "lifecycle", event: "start", server: "s", config: "C0" });
      log.close();
      process.stdout.write(JSON.stringify({ list: Array.isArray(process.moduleLoadList), before, opened, written: loaded() }));`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(child.stderr).toBe("");
    expect(JSON.parse(child.stdout)).toEqual({ list: true, before: false, opened: false, written: true });
    const [first] = events(file);
    expect(first).toMatchObject({ event: "start", seq: 0, kid: key.kid });
    expect(first.session).toMatch(/^[\w-]{16}$/);
  });
});

describe("mcpguard audit", () => {
  it("filters by decision, server and time, across rotated files", () => {
    const file = join(dir, "audit.ndjson");
    const old = {
      time: "2020-01-01T00:00:00.000Z",
      type: "decision",
      server: "s1",
      tool: "old",
      config: "C-app",
      layer: "L1",
      rule: "l1.exec",
      decision: "deny",
      reason: "r",
      latencyMs: 0,
      argsDigest: "x",
    };
    writeFileSync(`${file}.20200101T000000000Z-1-1`, `${JSON.stringify(old)}\n`);
    const log = new AuditLog(file, key);
    log.write({
      type: "decision",
      server: "s1",
      tool: "a",
      config: "C-app",
      layer: "L1",
      rule: "l1.path.read",
      decision: "deny",
      reason: "outside",
      latencyMs: 0.1,
      argsDigest: "x",
    });
    log.write({
      type: "decision",
      server: "s2",
      tool: "b",
      config: "C-app",
      layer: "L2",
      rule: "l2.sql.comment",
      decision: "deny",
      reason: "comment",
      latencyMs: 0.1,
      argsDigest: "x",
    });
    log.write({
      type: "decision",
      server: "s1",
      tool: "c",
      config: "C-app",
      layer: "L1+L2",
      rule: null,
      decision: "allow",
      reason: "allowed",
      latencyMs: 0.1,
      argsDigest: "x",
    });
    log.close();
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [MCPGUARD, "audit", "--file", file, "--audit-key", key.path, ...args], {
        encoding: "utf8",
      });
    const denies = run("--decision", "deny", "--server", "s1");
    expect(denies.status).toBe(0);
    // The old line was written by hand, without the key: the reader shows it, and says so.
    expect(denies.stdout).toMatch(
      /s1 {2}C-app {2}deny old by L1 \(l1\.exec\): r\n.*s1 {2}C-app {2}deny a by L1 \(l1\.path\.read\): outside\n2 of 4 events\nintegrity: TAMPERED: 2 problems, the first at .*audit\.ndjson\.20200101T000000000Z-1-1:1: no MAC.*; run mcpguard audit verify\n$/,
    );
    const recent = run("--since", "1h", "--json");
    expect(
      recent.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).tool),
    ).toEqual(["a", "b", "c"]);
    expect(run("--decision", "maybe").stderr).toMatch(
      /argument 'maybe' is invalid. Allowed choices are allow, deny, modify/,
    );
    expect(run("--since", "yesterday").status).toBe(2);
  });

  it("shows kernel refusals as operation and path, and groups the runtime's start-up probes", () => {
    const file = join(dir, "audit.ndjson");
    const log = new AuditLog(file, key);
    const kernel = { type: "kernel", server: "fs", config: "C-ebpf" } as const;
    log.write({
      ...kernel,
      event: "denied",
      decision: "deny",
      backend: "landlock",
      syscall: "openat",
      errno: 13,
      pid: 7,
      comm: "node",
      path: "/proc/self/mountinfo",
    });
    log.write({
      ...kernel,
      event: "denied",
      decision: "deny",
      backend: "landlock",
      syscall: "openat",
      errno: 13,
      pid: 7,
      comm: "node",
      path: "/usr/share/locale/locale.alias",
    });
    log.write({
      type: "decision",
      server: "fs",
      tool: "read_file",
      config: "C-ebpf",
      layer: "L1",
      rule: null,
      decision: "allow",
      reason: "allowed",
      latencyMs: 0.1,
      argsDigest: "x",
    });
    // After the first call, a read of /proc is the server's doing: always listed.
    log.write({
      ...kernel,
      event: "denied",
      decision: "deny",
      backend: "landlock",
      syscall: "openat",
      errno: 13,
      pid: 7,
      comm: "node",
      path: "/proc/1/environ",
    });
    log.write({
      ...kernel,
      event: "denied",
      decision: "deny",
      backend: "landlock",
      syscall: "renameat2",
      errno: 18,
      pid: 7,
      comm: "mv",
      path: "/ws/a",
      to: "/tmp/a",
    });
    log.write({
      ...kernel,
      event: "deny",
      decision: "deny",
      backend: "cgroup",
      op: "connect4",
      addr: "10.0.0.1",
      port: 443,
    });
    log.close();
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [MCPGUARD, "audit", "--file", file, "--audit-key", key.path, ...args], {
        encoding: "utf8",
      });
    const grouped = run();
    expect(grouped.status, grouped.stderr).toBe(0);
    expect(grouped.stdout).not.toContain("mountinfo");
    expect(grouped.stdout).not.toContain("locale.alias");
    expect(grouped.stdout).toContain("denied open /proc/1/environ (landlock errno 13) by node[7]");
    expect(grouped.stdout).toContain("denied rename /ws/a to /tmp/a (landlock errno 18) by mv[7]");
    expect(grouped.stdout).toContain("denied connect 10.0.0.1:443 (cgroup)");
    expect(grouped.stdout).toMatch(
      /4 of 6 events, and 2 kernel refusals of runtime start-up probes .*--all lists them/,
    );
    const all = run("--all");
    expect(all.stdout).toContain("denied open /proc/self/mountinfo (landlock errno 13) by node[7]");
    expect(all.stdout).toMatch(/\n6 of 6 events\n/);
    // A reader that stops early is no error, and no stack trace.
    const head = spawnSync(
      "sh",
      [
        "-c",
        `${JSON.stringify(process.execPath)} ${JSON.stringify(MCPGUARD)} audit --all --file ${JSON.stringify(file)} --audit-key ${JSON.stringify(key.path)} | head -1`,
      ],
      { encoding: "utf8" },
    );
    expect(head.stderr).toBe("");
  });

  it("shows counted kernel records as such, and what compaction and pruning took; --json passes them through", () => {
    const file = join(dir, "audit.ndjson");
    const log = new AuditLog(file, key);
    const common = { type: "kernel", server: "fs", config: "C-full", decision: "deny" } as const;
    const sendto = {
      ...common,
      event: "deny",
      backend: "cgroup-bpf",
      op: "sendmsg4",
      addr: "10.0.0.1",
      port: 9,
    };
    log.write({ ...sendto, pid: 7, comm: "node" });
    log.write({
      ...sendto,
      pid: 7,
      comm: "node",
      count: 4211,
      firstTime: "2026-12-04T12:00:00.000Z",
      lastTime: "2026-12-04T12:00:01.000Z",
    });
    log.write({
      ...common,
      event: "deny",
      backend: "cgroup-bpf",
      op: "sendmsg4",
      overflow: true,
      count: 900,
      firstTime: "2026-12-04T12:00:00.000Z",
      lastTime: "2026-12-04T12:00:00.500Z",
      targets: 900,
      samples: [
        { addr: "10.0.0.2", port: 1 },
        { addr: "10.0.0.2", port: 2 },
      ],
    });
    log.write({ type: "audit", event: "compact", file: "audit.ndjson.x", dropped: { s1: "3-9" }, count: 7 });
    log.write({ type: "audit", event: "prune", files: ["audit.ndjson.y.compact"], sessions: ["s1", "s2"] });
    log.close();
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [MCPGUARD, "audit", "--file", file, "--audit-key", key.path, ...args], {
        encoding: "utf8",
      });
    const table = run();
    expect(table.stdout).toContain("C-full  denied sendto 10.0.0.1:9 (cgroup-bpf) by node[7]\n");
    expect(table.stdout).toContain(
      "C-full  denied sendto 10.0.0.1:9 ×4211 in 1.0 s (cgroup-bpf) by node[7]\n",
    );
    expect(table.stdout).toContain(
      "denied sendmsg4 ×900 in 0.5 s, to 900 targets past the window's keys (10.0.0.2:1, 10.0.0.2:2, ...) (cgroup-bpf)\n",
    );
    expect(table.stdout).toMatch(
      / {2}- {2}- {2}audit log: compacted audit\.ndjson\.x: dropped 7 kernel records of 1 session\n/,
    );
    expect(table.stdout).toContain("audit log: pruned audit.ndjson.y.compact (2 sessions)\n");
    expect(table.stdout).toMatch(/\n3 of 3 events\nintegrity: verified/);
    // A filter by what bookkeeping has not leaves it out.
    expect(run("--decision", "deny").stdout).not.toContain("audit log:");
    const json = run("--json")
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(json.map((r) => r.event)).toEqual(["deny", "deny", "deny", "compact", "prune"]);
    expect(json[1]).toMatchObject({ count: 4211 });
  });

  it("reads durations and ISO times for --since", () => {
    expect(parseSince("10m", 1_000_000)).toBe(400_000);
    expect(parseSince("2026-01-01T00:00:00Z")).toBe(Date.parse("2026-01-01T00:00:00Z"));
  });
});
