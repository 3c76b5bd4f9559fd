/** The audit log under load: rotation by size with several writers, and `mcpguard audit`. */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditLog, auditFiles } from "../src/audit.ts";
import { parseSince } from "../src/commands/audit.ts";
import { MCPGUARD } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpguard-audit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const AUDIT_JS = join(import.meta.dirname, "..", "dist", "audit.js");

function writer(
  file: string,
  name: string,
  lines: number,
  maxBytes: number,
  keep: number,
): Promise<number | null> {
  const script = `
    const { AuditLog } = await import(${JSON.stringify(AUDIT_JS)});
    const log = new AuditLog(${JSON.stringify(file)}, { maxBytes: ${maxBytes}, keep: ${keep} });
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
  it("loses no line with four concurrent writers rotating every few kilobytes", async () => {
    const file = join(dir, "audit.ndjson");
    const codes = await Promise.all(
      ["a", "b", "c", "d"].map((w) => writer(file, w, 1500, 8 * 1024, 100_000)),
    );
    expect(codes).toEqual([0, 0, 0, 0]);
    const files = auditFiles(file);
    expect(files.length).toBeGreaterThan(20);
    const seen = new Map<string, number>();
    for (const f of files) {
      for (const line of readFileSync(f, "utf8").split("\n")) {
        if (!line) continue;
        const e = JSON.parse(line); // every line is whole JSON: no interleaving
        const key = `${e.server}:${e.tool}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(6000);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);

  it("keeps only the newest rotated files", () => {
    const file = join(dir, "audit.ndjson");
    const log = new AuditLog(file, { maxBytes: 300, keep: 2 });
    for (let i = 0; i < 60; i++)
      log.write({ type: "lifecycle", event: "start", server: "s", config: "C0", pid: i });
    log.close();
    const files = auditFiles(file);
    expect(files).toHaveLength(3); // two rotated files and the current one
    expect(files.at(-1)).toBe(file);
    const pids = files.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).pid),
    );
    expect(pids.at(-1)).toBe(59);
    expect(pids[0]).toBeGreaterThan(0); // the oldest lines were pruned
    expect(pids).toEqual([...pids].sort((a, b) => a - b));
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
    const log = new AuditLog(file);
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
      spawnSync(process.execPath, [MCPGUARD, "audit", "--file", file, ...args], { encoding: "utf8" });
    const denies = run("--decision", "deny", "--server", "s1");
    expect(denies.status).toBe(0);
    expect(denies.stdout).toMatch(
      /s1 {2}C-app {2}deny old by L1 \(l1\.exec\): r\n.*s1 {2}C-app {2}deny a by L1 \(l1\.path\.read\): outside\n2 of 4 events\n$/,
    );
    const recent = run("--since", "1h", "--json");
    expect(
      recent.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).tool),
    ).toEqual(["a", "b", "c"]);
    expect(run("--decision", "maybe").stderr).toMatch(/--decision must be allow, deny or modify/);
    expect(run("--since", "yesterday").status).toBe(2);
  });

  it("reads durations and ISO times for --since", () => {
    expect(parseSince("10m", 1_000_000)).toBe(400_000);
    expect(parseSince("2026-01-01T00:00:00Z")).toBe(Date.parse("2026-01-01T00:00:00Z"));
  });
});
