/**
 * The tamper-evident audit log (issue #11, item 8): `mcpguard audit verify` against deleted,
 * altered, reordered and forged lines, rotation, the key's creation and refusals, and the forgery
 * of C-app end to end.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AuditEvent, AuditLog, auditFiles } from "../src/audit.ts";
import { type AuditKey, checkKeyOutsideWorld, defaultAuditKeyPath, loadAuditKey } from "../src/auditKey.ts";
import { checkGuardFiles } from "../src/guardFiles.ts";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, readNdjson, toolText } from "./helpers.ts";

let dir: string;
let key: AuditKey;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpguard-integrity-"));
  key = loadAuditKey(join(dir, "key", "audit.key"), true);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const decision = (tool: string, verdict: "allow" | "deny"): AuditEvent => ({
  type: "decision",
  server: "files",
  tool,
  config: "C-app",
  layer: "L1",
  rule: verdict === "deny" ? "l1.path.read" : null,
  decision: verdict,
  reason: verdict === "deny" ? "outside the policy" : "allowed",
  latencyMs: 0.01,
  argsDigest: "sha256:00",
});

/** One proxy's session: start, three decisions (the second a deny), and exit unless `killed`. */
function session(file: string, killed = false, options: { maxBytes?: number; keep?: number } = {}): void {
  const log = new AuditLog(file, { ...key, ...options });
  log.write({ type: "lifecycle", event: "start", server: "files", config: "C-app", pid: 1 });
  log.write(decision("list", "allow"));
  log.write(decision("read", "deny"));
  log.write(decision("write", "allow"));
  if (!killed)
    log.write({ type: "lifecycle", event: "exit", server: "files", config: "C-app", pid: 1, status: 0 });
  log.close();
}

const verify = (file: string, ...extra: string[]) =>
  spawnSync(process.execPath, [MCPGUARD, "audit", "verify", "--audit-key", key.path, ...extra, file], {
    encoding: "utf8",
  });

const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);
const rewrite = (file: string, kept: string[]) => writeFileSync(file, kept.map((l) => `${l}\n`).join(""));

describe("mcpguard audit verify", () => {
  it("says OK with the counts of an intact log, a killed proxy's session counted as unterminated", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    session(file, true);
    const result = verify(file);
    expect(result.stdout).toMatch(
      /^OK: .*audit\.ndjson: 2 sessions, 9 records, 1 unterminated\nunterminated: session \S+ \(files, started .*\) ends at .*audit\.ndjson:9 without an exit record/,
    );
    expect(result.status).toBe(0);
  });

  it("detects a deleted line: the session's next record names the gap", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    const all = lines(file);
    rewrite(
      file,
      all.filter((_, i) => i !== 2),
    ); // the deny
    const result = verify(file);
    expect(result.stdout).toMatch(
      /audit\.ndjson:3: session \S+ lacks record 2 \(after .*audit\.ndjson:2\): deleted\n/,
    );
    expect(result.stdout).toMatch(/\nTAMPERED: 1 problem in /);
    expect(result.status).toBe(1);
  });

  it("detects an altered line: the deny turned into an allow", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    const all = lines(file);
    all[2] = (all[2] as string).replace('"decision":"deny"', '"decision":"allow"');
    rewrite(file, all);
    const result = verify(file);
    expect(result.stdout).toMatch(
      /^.*audit\.ndjson:3: bad MAC: the line was altered, or forged by someone without the key \(it claims to be record 2 of session \S+\)\nTAMPERED: 1 problem/,
    );
    expect(result.status).toBe(1);
  });

  it("detects two reordered lines", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    const all = lines(file);
    [all[2], all[3]] = [all[3] as string, all[2] as string];
    rewrite(file, all);
    const result = verify(file);
    expect(result.stdout).toMatch(
      /audit\.ndjson:3: record 3 of session \S+ comes before record 2 \(.*audit\.ndjson:4\): reordered\n/,
    );
    expect(result.status).toBe(1);
  });

  it("detects an inserted line: a back-dated allow forged from the deny", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    const all = lines(file);
    const deny = JSON.parse(all[2] as string);
    const forged = { ...deny, time: "2020-01-01T00:00:00.000Z", decision: "allow", rule: null };
    rewrite(file, [...all.slice(0, 1), JSON.stringify(forged), ...all.slice(1)]);
    const result = verify(file);
    expect(result.stdout).toMatch(
      /^.*audit\.ndjson:2: bad MAC: the line was altered, or forged by someone without the key \(it claims to be record 2/,
    );
    expect(result.status).toBe(1);
    // Without the MAC field, it is reported as a line that never had one.
    const { mac: _mac, ...bare } = forged;
    rewrite(file, [...all, JSON.stringify(bare)]);
    expect(verify(file).stdout).toMatch(
      /audit\.ndjson:6: no MAC: a line inserted, or written without the audit key\n/,
    );
  });

  it("detects a whole earlier session deleted, by the anchor of the session after it", () => {
    const file = join(dir, "audit.ndjson");
    session(file);
    session(file);
    rewrite(file, lines(file).slice(5));
    const result = verify(file);
    expect(result.stdout).toMatch(
      /audit\.ndjson:1: the line session \S+ anchored on .* is missing: deleted\n/,
    );
    expect(result.status).toBe(1);
  });

  it("keeps each chain across rotated and compacted files, and names a rotated file deleted by hand", () => {
    const file = join(dir, "audit.ndjson");
    // Files past --audit-keep are compacted, not deleted, while their sessions write (auditCompact.ts).
    const a = new AuditLog(file, { ...key, maxBytes: 1500, keep: 3, settleMs: 0 });
    const b = new AuditLog(file, { ...key, maxBytes: 1500, keep: 3, settleMs: 0 });
    for (let i = 0; i < 30; i++) {
      a.write(decision(`a${i}`, "allow"));
      b.write(decision(`b${i}`, i % 5 ? "allow" : "deny"));
    }
    a.close();
    b.close();
    const files = auditFiles(file);
    expect(files.filter((f) => f.endsWith(".compact")).length).toBeGreaterThan(3);
    const records = files.flatMap((f) => lines(f).map((l) => JSON.parse(l)));
    expect(records.filter((r) => r.type === "decision")).toHaveLength(60); // nothing of theirs is gone
    expect(records.filter((r) => r.from).length).toBeGreaterThan(2); // chains that crossed a file
    expect(verify(file).stdout).toMatch(
      /^OK: .*: 2 sessions, \d+ records in \d+ files, 0 unterminated, \d+ compacted files \(0 kernel records dropped, as declared\)\n$/,
    );

    const middle = files[1] as string;
    unlinkSync(middle);
    const result = verify(file);
    expect(result.stdout).toContain(
      `rotated file ${middle
        .split("/")
        .at(-1)
        ?.replace(/\.compact$/, "")} is missing and no writer pruned it: it was deleted`,
    );
    expect(result.status).toBe(1);
  });

  it("exits 2 on a usage error: no such log, no key", () => {
    const file = join(dir, "audit.ndjson");
    expect(verify(join(dir, "nope.ndjson")).stderr).toMatch(
      /^mcpguard audit: .*nope\.ndjson: no such audit log\n$/,
    );
    session(file);
    const noKey = spawnSync(
      process.execPath,
      [MCPGUARD, "audit", "verify", "--audit-key", join(dir, "key", "other.key"), file],
      { encoding: "utf8" },
    );
    expect(noKey.stderr).toMatch(
      /^mcpguard audit: no audit key at .*other\.key \(give --audit-key FILE\)\n$/,
    );
    expect(noKey.status).toBe(2);
  });
});

describe("the audit key", () => {
  it("is made on first use, 0600 in a 0700 directory, and concurrent first uses agree on it", async () => {
    const path = join(dir, "fresh", "state", "audit.key");
    const script = `const { loadAuditKey } = await import(${JSON.stringify(join(import.meta.dirname, "..", "dist", "auditKey.js"))});
      process.stdout.write(loadAuditKey(${JSON.stringify(path)}, true).kid);`;
    const kids = await Promise.all(
      [1, 2, 3, 4].map(
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
            let out = "";
            child.stdout.on("data", (chunk: Buffer) => {
              out += chunk.toString();
            });
            child.once("exit", () => resolve(out));
          }),
      ),
    );
    expect(new Set(kids).size).toBe(1);
    expect(kids[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "fresh", "state")).mode & 0o777).toBe(0o700);
  });

  it("refuses a key file or directory open to others or owned by someone else, in one line", () => {
    chmodSync(key.path, 0o644);
    expect(() => loadAuditKey(key.path, false)).toThrow(
      /^audit key file .*audit\.key is open to others \(mode 0644\): chmod 600 it$/,
    );
    chmodSync(key.path, 0o600);
    const keyDir = join(dir, "key");
    chmodSync(keyDir, 0o755);
    expect(() => loadAuditKey(key.path, false)).toThrow(
      /^audit key directory .*key is open to others \(mode 0755\): chmod 700 it$/,
    );
    const run = spawnSync(
      process.execPath,
      [MCPGUARD, "run", "--audit-log", join(dir, "a.ndjson"), "--audit-key", key.path, "--", "node", FIXTURE],
      { encoding: "utf8", input: "", env: { ...process.env, TMPDIR: join(dir, "tmp") } },
    );
    expect(run.stderr).toMatch(
      /^mcpguard run: audit key directory .*key is open to others \(mode 0755\): chmod 700 it\n$/,
    );
    expect(run.status).toBe(2);
    chmodSync(keyDir, 0o700);
    if (process.getuid?.() === 0) {
      chownSync(key.path, 1, 1);
      expect(() => loadAuditKey(key.path, false)).toThrow(
        /^audit key file .* is owned by uid 1, not by you \(uid 0\)$/,
      );
    } else {
      console.log("skipped the ownership case: chown needs root");
    }
  });

  it("defaults outside the server's world, and refuses a key the server could reach", () => {
    const trial = join(dir, "t-000001");
    const world = { HOME: join(trial, "home"), TMPDIR: join(trial, "tmp") };
    mkdirSync(world.HOME, { recursive: true });
    mkdirSync(world.TMPDIR);
    expect(defaultAuditKeyPath(world, 0)).toBe("/var/lib/mcpguard/audit.key");
    // Another uid: from the password database, never from the HOME the runner gives the proxy.
    expect(defaultAuditKeyPath(world, 1000).startsWith(trial)).toBe(false);
    for (const path of [defaultAuditKeyPath(world, 0), defaultAuditKeyPath(world, 1000)]) {
      expect(() => checkKeyOutsideWorld(path, join(trial, "workspace"), world)).not.toThrow();
    }
    const inside = defaultAuditKeyPath({ XDG_STATE_HOME: join(world.HOME, ".state") }, 1000);
    expect(() => checkKeyOutsideWorld(inside, join(trial, "workspace"), world)).toThrow(
      /^the audit key .*t-000001\/home\/\.state\/mcpguard\/audit\.key is inside the server's HOME/,
    );
    expect(() => checkKeyOutsideWorld(join(world.TMPDIR, "k"), "/", world)).toThrow(
      /inside the server's TMPDIR/,
    );
    expect(() =>
      checkKeyOutsideWorld(join(trial, "workspace", "k"), join(trial, "workspace"), world),
    ).toThrow(/inside the server's working directory/);
    // The key is a secret among the guard's files: out of the kernel's read rules too (guardFiles.ts).
    const keyFile = [{ path: "/var/lib/mcpguard/audit.key", what: "audit key", secret: true }];
    const kernelReads = (path: string) => [{ path, why: "the kernel's read rule", read: true }];
    expect(() => checkGuardFiles(keyFile, { grants: kernelReads("/var") })).toThrow(
      /^the audit key \/var\/lib\/mcpguard\/audit\.key lies in \/var, the kernel's read rule: the server could read it/,
    );
    expect(() => checkGuardFiles(keyFile, { grants: kernelReads("/usr/lib") })).not.toThrow();
  });
});

describe("mcpguard run and the audit log", () => {
  let scratch: string;
  let work: string;
  let env: Record<string, string>;
  beforeEach(() => {
    ({ scratch, work } = makeWorkspace("mcpguard-integrity-run-"));
    mkdirSync(join(scratch, "tmp"));
    env = {
      ...(process.env as Record<string, string>),
      TMPDIR: join(scratch, "tmp"),
      MCPGUARD_AUDIT_KEY: key.path,
    };
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it("catches a C-app server that deletes its deny record and appends a back-dated allow", async () => {
    const log = join(dir, "audit.ndjson");
    const forger = join(import.meta.dirname, "fixtures", "forger.mjs");
    const policy = join(import.meta.dirname, "fixtures", "forger-policy.json");
    const s = await connect(
      [MCPGUARD, "run", "--config", "C-app", "--policy", policy, "--audit-log", log, "--", "node", forger],
      env,
      work,
    );
    const denied = await s.client.callTool({ name: "read", arguments: { path: "../outside.txt" } });
    expect(toolText(denied)).toMatch(/^Blocked by mcpguard \(L1\)/);
    expect(toolText(await s.client.callTool({ name: "tidy", arguments: {} }))).toBe(`tidied ${log}`);
    await s.client.close();
    const records = readNdjson(log);
    expect(records.filter((r) => r.decision === "deny")).toEqual([]); // the forgery worked on the file
    const forgedAt = records.findIndex((r) => r.tool === "read") + 1;

    const result = verify(log);
    // The forged allow stands where no line of the proxy does: the deny it replaced was record 1.
    expect(result.stdout).toBe(
      `${log}:${forgedAt}: bad MAC: the line was altered, or forged by someone without the key (it claims to be record 1 of session ${records[0].session})\n` +
        `TAMPERED: 1 problem in ${log} (1 session, 3 records, 0 unterminated)\n`,
    );
    expect(result.status).toBe(1);
    const reader = spawnSync(process.execPath, [MCPGUARD, "audit", "--file", log], { encoding: "utf8", env });
    expect(reader.stdout).toMatch(
      /\nintegrity: TAMPERED: 1 problem, the first at .*audit\.ndjson:3: bad MAC.*; run mcpguard audit verify\n$/,
    );
  });

  it("names a C0 server by its command, not by its claim, records the claim, and hides the key's path", async () => {
    const log = join(dir, "audit.ndjson");
    const s = await connect(
      [MCPGUARD, "run", "--config", "C0", "--audit-log", log, "--", "node", FIXTURE],
      env,
      work,
    );
    expect(
      toolText(await s.client.callTool({ name: "env", arguments: { name: "MCPGUARD_AUDIT_KEY" } })),
    ).toBe("<unset>");
    await s.client.close();
    const records = readNdjson(log);
    expect(records.map((r) => r.server)).toEqual(["server", "server", "server"]);
    expect(records.at(-1)).toMatchObject({ event: "exit", claimedName: "proxy-fixture" });
    expect(verify(log).status).toBe(0);
  });
});
