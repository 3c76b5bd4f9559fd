/**
 * What the audit log keeps and how it proves its end (issue 29): rotated files past --audit-keep
 * are compacted (kernel records dropped, and declared) rather than deleted; compacted files go only
 * once their sessions are over; each session's head file beside the key, and the `prior` of the next
 * session's first record, let `mcpguard audit verify` tell a log whose last records were cut.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AuditEvent, AuditLog, type AuditLogOptions, auditFiles } from "../src/audit.ts";
import { headName, logTag, openHeadsDir, readHeads } from "../src/auditHeads.ts";
import { type AuditKey, loadAuditKey } from "../src/auditKey.ts";
import { DEFAULT_KERNEL_MAX_KEYS, DEFAULT_KERNEL_WINDOW_MS } from "../src/kernelEvents.ts";
import { connect, MCPGUARD, makeWorkspace, toolText } from "./helpers.ts";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(
    `the C-full flood test is skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}${doctor.stderr}`,
  );

let dir: string;
let key: AuditKey;
let heads: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpguard-retention-"));
  key = loadAuditKey(join(dir, "key", "audit.key"), true);
  heads = openHeadsDir(key.path);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A writer session of `file`, as `mcpguard run` opens one: with its head file; compaction at once. */
const open = (file: string, options: Partial<AuditLogOptions> = {}) =>
  new AuditLog(file, { ...key, heads, settleMs: 0, ...options });

const decision = (tool: string, verdict: "allow" | "deny"): AuditEvent => ({
  type: "decision",
  server: "files",
  tool,
  config: "C-full",
  layer: "L1",
  rule: verdict === "deny" ? "l1.path.read" : null,
  decision: verdict,
  reason: verdict === "deny" ? "/etc/shadow is outside what read_file may read" : "allowed",
  latencyMs: 0.01,
  argsDigest: "sha256:00",
});
const start: AuditEvent = { type: "lifecycle", event: "start", server: "files", config: "C-full", pid: 1 };
const exit: AuditEvent = {
  type: "lifecycle",
  event: "exit",
  server: "files",
  config: "C-full",
  pid: 1,
  status: 0,
};
const sendto = (port: number): AuditEvent => ({
  type: "kernel",
  event: "deny",
  decision: "deny",
  backend: "cgroup-bpf",
  op: "sendmsg4",
  server: "files",
  config: "C-full",
  pid: 7,
  comm: "node",
  addr: "10.0.0.1",
  port,
});

/** A proxy's session: start, three decisions (the second a deny), and exit. */
function session(file: string): string {
  const log = open(file);
  log.write(start);
  log.write(decision("list", "allow"));
  log.write(decision("read", "deny"));
  log.write(decision("write", "allow"));
  log.write(exit);
  log.close();
  return log.session;
}

const verify = (file: string) =>
  spawnSync(process.execPath, [MCPGUARD, "audit", "verify", "--audit-key", key.path, file], {
    encoding: "utf8",
  });
const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);
const records = (file: string) => auditFiles(file).flatMap((f) => lines(f).map((l) => JSON.parse(l)));
const rewrite = (file: string, kept: string[]) => writeFileSync(file, kept.map((l) => `${l}\n`).join(""));

describe("rotation past --audit-keep", () => {
  it("compacts instead of deleting: a kernel flood never takes the deny before it, and verify accepts what was declared", () => {
    const file = join(dir, "audit.ndjson");
    const maxBytes = 4096;
    const log = open(file, { maxBytes, keep: 2 });
    log.write(start);
    log.write(decision("read_file", "deny"));
    for (let i = 0; i < 3000; i++) log.write(sendto(9));
    log.write(decision("list", "allow"));
    log.write(exit);
    log.close();
    const all = records(file);
    // The deny, the start, the exit and the allow are all there; so is every bookkeeping record.
    expect(all.filter((r) => r.type === "decision").map((r) => r.decision)).toEqual(["deny", "allow"]);
    expect(all.filter((r) => r.type === "lifecycle").map((r) => r.event)).toEqual(["start", "exit"]);
    const rotates = all.filter((r) => r.event === "rotate").length;
    expect(rotates).toBeGreaterThan(100);
    // Kernel lines are left in the two rotated files kept whole and the live one: no more than fit.
    const kernelLine = JSON.stringify(all.find((r) => r.type === "kernel")).length;
    expect(all.filter((r) => r.type === "kernel").length).toBeLessThanOrEqual(
      3 * Math.ceil(maxBytes / kernelLine + 1),
    );
    const compacts = all.filter((r) => r.event === "compact");
    expect(compacts.length).toBe(rotates - 2);
    expect(compacts.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(2900);
    expect(compacts[0].dropped[log.session]).toMatch(/^\d+-\d+$/);
    // The session ran throughout: nothing of it was deleted, and the log says it is over budget, once.
    expect(all.some((r) => r.event === "prune")).toBe(false);
    expect(all.filter((r) => r.event === "over-budget")).toHaveLength(1);
    expect(auditFiles(file).filter((f) => f.endsWith(".compact"))).toHaveLength(rotates - 2);
    const result = verify(file);
    expect(result.stdout).toMatch(
      new RegExp(
        `^OK: .*: 1 session, \\d+ records in ${rotates + 1} files, 0 unterminated, ${rotates - 2} compacted files \\(\\d+ kernel records dropped, as declared\\)\\n$`,
      ),
    );
    expect(result.status).toBe(0);
    // A dropped record declared is no licence: one more line deleted from a compacted file is caught.
    const compacted = auditFiles(file).find((f) => f.endsWith(".compact")) as string;
    const kept = lines(compacted);
    const victim = kept.findIndex((l, i) => i > 0 && JSON.parse(l).type !== "kernel");
    expect(victim).toBeGreaterThan(0);
    rewrite(
      compacted,
      kept.filter((_, i) => i !== victim),
    );
    expect(verify(file).stdout).toMatch(/lacks record \d+ .*: deleted\n/);
  });

  it("keeps the lines the next session anchors on, and never drops a line that is not sealed", () => {
    const file = join(dir, "audit.ndjson");
    const a = open(file, { maxBytes: 2048, keep: 1 });
    for (let i = 0; i < 20; i++) a.write(sendto(i));
    a.close();
    // b begins after a's last kernel record: its anchor.
    const b = open(file, { maxBytes: 2048, keep: 1 });
    b.write(start);
    const anchor = records(file).find((r) => r.session === b.session)?.anchor;
    // A kernel line forged into the newest rotated file, which the next rotation compacts.
    const newest = auditFiles(file).at(-2) as string;
    expect(newest.endsWith(".compact")).toBe(false);
    const kernelLine = lines(newest).find((l) => l.includes('"type":"kernel"')) as string;
    const forged = { ...JSON.parse(kernelLine), port: 4444 };
    rewrite(newest, [...lines(newest), JSON.stringify(forged)]);
    for (let i = 0; i < 60; i++) b.write(sendto(100 + i));
    b.close();
    const all = records(file);
    expect(all.some((r) => r.event === "compact" && r.dropped[a.session])).toBe(true);
    expect(all.find((r) => r.mac === anchor)).toMatchObject({ type: "kernel", session: a.session });
    expect(`${newest}.compact`).toBe(auditFiles(file).find((f) => f.startsWith(newest)));
    expect(lines(`${newest}.compact`).at(-1)).toContain('"port":4444');
    const result = verify(file);
    expect(result.stdout).toMatch(/\.compact:\d+: bad MAC: the line was altered, or forged/);
    rewrite(`${newest}.compact`, lines(`${newest}.compact`).slice(0, -1));
    expect(verify(file).status).toBe(0);
  });

  it("deletes compacted files past --audit-keep once their sessions are over and go on nowhere newer", () => {
    const file = join(dir, "audit.ndjson");
    const options = { maxBytes: 2048, keep: 1 };
    const ended: string[] = [];
    for (let s = 0; s < 6; s++) {
      const log = open(file, options);
      log.write(start);
      log.write(decision(`read-${s}`, "deny"));
      for (let i = 0; i < 15; i++) log.write(sendto(i));
      log.write(exit);
      log.close();
      ended.push(log.session);
    }
    const last = open(file, options);
    last.write(start);
    for (let i = 0; i < 40; i++) last.write(decision(`call-${i}`, "allow"));
    const all = records(file);
    const prunes = all.filter((r) => r.event === "prune");
    expect(prunes.length).toBeGreaterThan(0);
    const pruned = new Set(prunes.flatMap((r) => r.sessions));
    // Only sessions that were over; the one writing never.
    expect(pruned.has(last.session)).toBe(false);
    expect([...pruned].every((s) => ended.includes(s))).toBe(true);
    // A session is pruned whole: no decision of a session left in the log is gone.
    for (const s of ended.filter((e) => !pruned.has(e))) {
      expect(all.filter((r) => r.session === s && r.type === "decision")).toHaveLength(1);
    }
    for (const s of pruned) {
      expect(all.filter((r) => r.session === s && r.type !== "audit")).toEqual([]);
    }
    last.close();
    const result = verify(file);
    expect(result.stdout).toMatch(/^OK: .* begun in pruned files/);
    expect(result.status).toBe(0);
  });

  it("removes the head files of the sessions it prunes, whichever name they have, so no later session names them", () => {
    const file = join(dir, "audit.ndjson");
    const options = { maxBytes: 2048, keep: 1 };
    // Two sessions that end while a third, begun before they ended, writes on: nobody takes their
    // head files, and the third prunes them. One head file is named as builds before the tag named it.
    const early: AuditLog[] = [];
    const rotations = () => auditFiles(file).length;
    for (let s = 0; s < 2; s++) {
      const log = open(file, options);
      log.write(start);
      const files = rotations();
      for (let i = 0; rotations() === files; i++) log.write(sendto(i));
      early.push(log);
    }
    const long = open(file, options);
    for (const log of early) log.close();
    const [tagged, older] = early.map((log) => log.session) as [string, string];
    renameSync(join(heads, headName(file, older)), join(heads, `${older}.head`));
    long.write(start);
    for (let i = 0; i < 120; i++) long.write(decision(`call-${i}`, "allow"));
    const pruned = new Set(records(file).flatMap((r) => (r.event === "prune" ? r.sessions : [])));
    expect([...pruned].sort()).toEqual([tagged, older].sort());
    expect(readdirSync(heads)).toEqual([headName(file, long.session)]);
    long.close();
    const next = open(file, options);
    next.write(start);
    expect(records(file).find((r) => r.session === next.session).prior).toEqual([
      { session: long.session, seq: expect.any(Number), mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    next.close();
    expect(verify(file).status).toBe(0);
  });
});

describe("rotated files", () => {
  it("are ordered by their time, then by the writer's count as a number (-9 before -10 in one millisecond)", () => {
    const file = join(dir, "audit.ndjson");
    const names = ["20261204T120000000Z-7-10", "20261204T120000000Z-7-9.compact", "20261204T115959999Z-8-11"];
    for (const name of names) writeFileSync(`${file}.${name}`, "");
    writeFileSync(file, "");
    expect(auditFiles(file).map((f) => basename(f))).toEqual([
      "audit.ndjson.20261204T115959999Z-8-11",
      "audit.ndjson.20261204T120000000Z-7-9.compact",
      "audit.ndjson.20261204T120000000Z-7-10",
      "audit.ndjson",
    ]);
  });
});

describe("the end of the log", () => {
  it("keeps one head file per session (0600 in a 0700 folder): its last record, and whether it ended", () => {
    const file = join(dir, "audit.ndjson");
    const log = open(file);
    log.write(start);
    log.write(decision("read", "deny"));
    const head = join(heads, headName(file, log.session));
    expect(basename(head)).toMatch(new RegExp(`^[0-9a-f]{16}\\.${log.session}\\.head$`));
    expect(statSync(heads).mode & 0o777).toBe(0o700);
    expect(statSync(head).mode & 0o777).toBe(0o600);
    const last = records(file).at(-1);
    expect(JSON.parse(readFileSync(head, "utf8"))).toEqual({
      log: file,
      session: log.session,
      pid: process.pid,
      seq: 1,
      mac: last.mac,
      ended: false,
    });
    log.close();
    expect(JSON.parse(readFileSync(head, "utf8"))).toMatchObject({ seq: 1, ended: true });
  });

  it("tags a head file by the 64-bit FNV-1a hash of its log's path, the reference's test values", () => {
    // From the FNV reference test suite: the names of the head files already written depend on them.
    expect(logTag("")).toBe("cbf29ce484222325");
    expect(logTag("a")).toBe("af63dc4c8601ec8c");
    expect(logTag("foobar")).toBe("85944171f73967e8");
    expect(headName("/var/log/mcp.ndjson", "s")).toBe(`${logTag("/var/log/mcp.ndjson")}.s.head`);
  });

  it("fails verify when a session is cut after its third record, naming the cut", () => {
    const file = join(dir, "audit.ndjson");
    const s = session(file);
    rewrite(file, lines(file).slice(0, 3));
    const result = verify(file);
    expect(result.stdout).toContain(
      `audit.ndjson:3: session ${s} was cut after record 2 (its head file ${headName(file, s)} says it wrote records 0-4)\n`,
    );
    expect(result.stdout).toMatch(/\nTAMPERED: 1 problem in .* 1 cut\)\n$/);
    expect(result.status).toBe(1);
    const reader = spawnSync(process.execPath, [MCPGUARD, "audit", "--file", file, "--audit-key", key.path], {
      encoding: "utf8",
    });
    expect(reader.stdout).toMatch(
      /\nintegrity: TAMPERED: 1 problem \(1 session cut\), the first at .*was cut after record 2/,
    );
  });

  it("fails verify when the whole last session is deleted", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    const second = session(file);
    expect(verify(file).status).toBe(0);
    rewrite(file, lines(file).slice(0, 5));
    const result = verify(file);
    expect(result.stdout).toMatch(
      new RegExp(
        `: session ${second} was cut: none of its records is left \\(its head file ${headName(file, second).replaceAll(".", "\\.")} says it wrote records 0-4\\)\\n`,
      ),
    );
    expect(result.status).toBe(1);
  });

  it("catches a deleted tail after a new session began: its first record names the last record before it", () => {
    const file = join(dir, "audit.ndjson");
    const first = session(file);
    rewrite(file, lines(file).slice(0, 3)); // the tail of the first session, cut
    const second = session(file); // takes the first one's head file into its first record
    expect(readdirSync(heads)).toEqual([headName(file, second)]);
    const begin = records(file).find((r) => r.session === second);
    expect(begin.prior).toEqual([{ session: first, seq: 4, mac: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    const result = verify(file);
    expect(result.stdout).toContain(
      `audit.ndjson:3: session ${first} was cut after record 2 (the first record of session ${second}, ${file}:4, says it wrote records 0-4)\n`,
    );
    expect(result.status).toBe(1);
  });

  it("a start reads its own log's head files only; the others' are pruned once its first record is written", () => {
    const file = join(dir, "audit.ndjson");
    const other = join(dir, "other.ndjson");
    // A head file an older build wrote, named by its session alone: still this log's.
    const older = session(file);
    renameSync(join(heads, headName(file, older)), join(heads, `${older}.head`));
    const gone = session(other);
    unlinkSync(other);
    const log = open(file);
    // Opened: this log's head files taken, the other log's not even read.
    expect(readdirSync(heads).sort()).toEqual([`${older}.head`, headName(other, gone)].sort());
    log.write(start);
    expect(records(file).find((r) => r.session === log.session).prior).toEqual([
      { session: older, seq: 4, mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    // The first record written: the older head file taken, the other log's removed.
    expect(readdirSync(heads)).toEqual([headName(file, log.session)]);
    log.close();
    expect(readHeads(heads, file).map(({ head }) => head.session)).toEqual([log.session]);
    expect(readHeads(heads, other)).toEqual([]);
  });

  it("names a log by where the kernel finds it: a spelling through `link/..` follows the same sessions, and is not taken for a log that is gone", () => {
    const file = join(dir, "audit.ndjson");
    // <dir>/elsewhere/up leads to <dir>/inner: its `..` is <dir> (folded, it would be <dir>/elsewhere).
    mkdirSync(join(dir, "inner"));
    mkdirSync(join(dir, "elsewhere"));
    symlinkSync(join(dir, "inner"), join(dir, "elsewhere", "up"));
    const spelled = `${dir}/elsewhere/up/../audit.ndjson`;
    const first = session(spelled);
    expect(readdirSync(heads)).toEqual([headName(file, first)]);
    // Another log's start prunes the head files of logs that are gone: this one is there.
    const other = session(join(dir, "other.ndjson"));
    expect(readdirSync(heads).sort()).toEqual(
      [headName(file, first), headName(join(dir, "other.ndjson"), other)].sort(),
    );
    // Its next session, spelled plainly, follows it.
    const second = open(file);
    second.write(start);
    expect(records(file).find((r) => r.session === second.session).prior).toEqual([
      { session: first, seq: 4, mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    second.close();
  });

  it("verify reads a head file an older build named by its session alone", () => {
    const file = join(dir, "audit.ndjson");
    const s = session(file);
    renameSync(join(heads, headName(file, s)), join(heads, `${s}.head`));
    rewrite(file, lines(file).slice(0, 3));
    const result = verify(file);
    expect(result.stdout).toContain(
      `audit.ndjson:3: session ${s} was cut after record 2 (its head file ${s}.head says it wrote records 0-4)\n`,
    );
    expect(result.status).toBe(1);
  });

  it("a log deleted and begun again is no cut; head files of logs that are gone are removed at the next start", () => {
    const file = join(dir, "audit.ndjson");
    const other = join(dir, "other.ndjson");
    session(file);
    const gone = session(other);
    unlinkSync(other);
    unlinkSync(file);
    const fresh = session(file);
    expect(readdirSync(heads).sort()).toEqual([headName(file, fresh)]);
    expect(records(file)[0]).not.toHaveProperty("prior");
    expect(verify(file).status).toBe(0);
    expect(gone).not.toBe(fresh);
  });
});

const AUDIT_JS = join(import.meta.dirname, "..", "dist", "audit.js");
const HEADS_JS = join(import.meta.dirname, "..", "dist", "auditHeads.js");
const AUDIT_KEY_JS = join(import.meta.dirname, "..", "dist", "auditKey.js");

/** A writer in its own process: decisions, and kernel records between them. */
function writer(file: string, name: string, lines: number): Promise<number | null> {
  const script = `
    const { AuditLog } = await import(${JSON.stringify(AUDIT_JS)});
    const { openHeadsDir } = await import(${JSON.stringify(HEADS_JS)});
    const { loadAuditKey } = await import(${JSON.stringify(AUDIT_KEY_JS)});
    const key = loadAuditKey(${JSON.stringify(key.path)}, false);
    const log = new AuditLog(${JSON.stringify(file)}, { ...key, heads: openHeadsDir(key.path), maxBytes: 8192, keep: 2, settleMs: 20 });
    for (let i = 0; i < ${lines}; i++) {
      if (i % 4 === 0)
        log.write({ type: "decision", server: ${JSON.stringify(name)}, tool: "t" + i, config: "C-full", layer: "L1", rule: null,
          decision: i % 3 ? "allow" : "deny", reason: "r", latencyMs: 0, argsDigest: "sha256:x" });
      else
        log.write({ type: "kernel", event: "deny", decision: "deny", backend: "cgroup-bpf", op: "sendmsg4",
          server: ${JSON.stringify(name)}, config: "C-full", addr: "10.0.0.1", port: i });
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    log.close();`;
  return new Promise((resolve) =>
    spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" }).once(
      "exit",
      resolve,
    ),
  );
}

describe("compaction with concurrent writers", () => {
  it("loses no decision, keeps every anchor and head, and the log verifies across many rotations", async () => {
    const file = join(dir, "audit.ndjson");
    const codes = await Promise.all(["a", "b", "c", "d"].map((w) => writer(file, w, 4000)));
    expect(codes).toEqual([0, 0, 0, 0]);
    const all = records(file);
    const decisions = new Set(all.filter((r) => r.type === "decision").map((r) => `${r.server}:${r.tool}`));
    expect(decisions.size).toBe(4000);
    expect(all.filter((r) => r.event === "compact").length).toBeGreaterThan(5);
    expect(readdirSync(heads)).toHaveLength(4);
    const result = verify(file);
    expect(result.stdout).toMatch(
      /^OK: .*: 4 sessions, \d+ records in \d+ files, 0 unterminated, \d+ compacted files/,
    );
    expect(result.status).toBe(0);
  }, 120_000);
});

describe.skipIf(!l3)("a server flooding what the kernel refuses, under C-full", () => {
  it("costs a bounded number of kernel records, and never the L1 deny before it; the log verifies", async () => {
    const { scratch, work } = makeWorkspace("mcpguard-flood-");
    try {
      const log = join(dir, "flood.ndjson");
      const fixtures = join(import.meta.dirname, "fixtures");
      mkdirSync(join(scratch, "tmp"));
      // The key (under the system's temporary folder here) out of the server's TMPDIR.
      const env = {
        ...(process.env as Record<string, string>),
        TMPDIR: join(scratch, "tmp"),
        MCPGUARD_AUDIT_KEY: key.path,
      };
      const s = await connect(
        [
          MCPGUARD,
          "run",
          "--config",
          "C-full",
          "--policy",
          join(fixtures, "udp-flood-policy.json"),
          "--audit-log",
          log,
          "--audit-max-bytes",
          "8192",
          "--audit-keep",
          "2",
          "--",
          process.execPath,
          join(fixtures, "udp-flood.mjs"),
        ],
        env,
        work,
      );
      const denied = await s.client.callTool({ name: "read", arguments: { path: "/etc/shadow" } });
      expect(toolText(denied)).toMatch(/^Blocked by mcpguard \(L1\)/);
      // Every datagram to a new port: the key cap, the overflow records and rotation all at work.
      const sent = Number(
        toolText(await s.client.callTool({ name: "flood", arguments: { ms: 3000, spread: true } })),
      );
      expect(sent).toBeGreaterThan(10_000);
      await s.client.close();
      const all = records(log);
      expect(all.filter((r) => r.type === "decision").map((r) => `${r.tool}:${r.decision}`)).toEqual([
        "read:deny",
        "flood:allow",
      ]);
      // Every kernel record the session wrote: those left, and those compaction dropped (declared).
      const kernel = all.filter((r) => r.type === "kernel");
      const compacts = all.filter((r) => r.event === "compact");
      const written = kernel.length + compacts.reduce((n, r) => n + r.count, 0);
      const times = all.filter((r) => r.type === "lifecycle").map((r) => Date.parse(r.time));
      const windows = Math.ceil((Math.max(...times) - Math.min(...times)) / DEFAULT_KERNEL_WINDOW_MS) + 1;
      // A window: at most maxKeys written at once and maxKeys counts, one overflow record per kind;
      // each decision closes every window (so each may add as many).
      const perWindow = 2 * DEFAULT_KERNEL_MAX_KEYS + 8;
      expect(written).toBeLessThanOrEqual((windows + 2) * perWindow);
      expect(kernel.some((r) => r.overflow === true && r.op === "sendmsg4")).toBe(true);
      expect(compacts.length).toBeGreaterThan(0);
      const result = verify(log);
      expect(result.stdout).toMatch(
        /^OK: .*, \d+ compacted files? \(\d+ kernel records? dropped, as declared\)\n/,
      );
      expect(result.status).toBe(0);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
