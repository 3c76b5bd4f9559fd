/**
 * Which layer stopped a call (layers.ts): the audit log's decision records first, then the first
 * kernel denial the call caused that the runtime did not survive.
 * - On audit logs recorded under C-full here (fixtures/layers, the integrity fields dropped): a
 *   benign call the sanitizer changed, with `ls` and `cat` denied locale and /proc reads and
 *   /etc/passwd after the call; an attack (FR-05) stopped by Landlock alone; a node server whose
 *   `git` is denied the locale alias after the call.
 * - For real, where the kernel layer runs: the same two trials under C-full, their kept audit logs
 *   checked by `mcpguard bench check-layers`, which counts a record changed by hand.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { auditFactsOf, checkLayers, isRuntimeProbe } from "../src/layers.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import { loadAllServers } from "../src/registry.ts";
import { loadScenarios } from "../src/scenario.ts";
import { knownServers, selectScenarios } from "../src/select.ts";
import { summarize } from "../src/summarize.ts";
import { runTrial, type TrialRecord } from "../src/trial.ts";
import { WorldFactory } from "../src/world/world.ts";
import { record } from "./records.ts";

const FIXTURES = repoPath("runner", "test", "fixtures", "layers");
const log = (name: string) => readFileSync(join(FIXTURES, name), "utf8").split("\n");

describe("the deciding layer, from audit logs recorded under C-full", () => {
  it("a benign call the sanitizer changed is credited to L2's sanitizer, not to a kernel denial before it", () => {
    const lines = log("sanitized-benign.C-full.ndjson");
    // The kernel denied reads after the call, and the log has them before the sanitizer's record.
    const firstDeny = lines.findIndex((l) => l.includes('"decision":"deny"') && l.includes('"comm":"ls"'));
    const modify = lines.findIndex((l) => l.includes('"decision":"modify"'));
    expect(firstDeny).toBeGreaterThan(0);
    expect(modify).toBeGreaterThan(firstDeny);
    const facts = auditFactsOf(lines, { outcomeHeld: true });
    expect(facts).toMatchObject({
      stoppedBy: "sanitizer",
      stoppedRule: "l2.result.injection",
      decision: { layer: "sanitizer", rule: "l2.result.injection", decision: "modify" },
      refusedBy: null,
    });
    // The raw denials stay beside it, each with why it did not decide.
    const why = Object.fromEntries(
      facts.kernelDenials.map((d) => [`${d.when} ${d.target}`, d.survived] as const),
    );
    expect(why).toEqual({
      "start /usr/share/locale/locale.alias": "start-up",
      "call /usr/share/locale/locale.alias": "seen at start-up",
      "call /proc/filesystems": "runtime probe",
      "call /proc/mounts": "runtime probe",
      "call /etc/nsswitch.conf": "outcome held",
      "call /etc/passwd": "outcome held",
      "call /etc/group": "outcome held",
    });
  });

  it("a denial of /etc/passwd can decide a call whose outcome did not hold; a locale read cannot", () => {
    const lines = log("sanitized-benign.C-full.ndjson").filter((l) => !l.includes('"decision":"modify"'));
    const facts = auditFactsOf(lines, { outcomeHeld: false });
    expect(facts.decision).toBeNull();
    expect(facts.stoppedBy).toBe("L3:landlock");
    expect(facts.kernelDenials.find((d) => d.survived === null)?.target).toBe("/etc/nsswitch.conf");
  });

  it("an attack stopped by Landlock alone is credited to L3, with the files it was denied", () => {
    const facts = auditFactsOf(log("FR-05.C-full.ndjson"), {
      trialRoot: "/dev/shm/mcpguard/run-uNqp9L/t-000055",
      outcomeHeld: false,
    });
    expect(facts).toMatchObject({ stoppedBy: "L3:landlock", stoppedRule: "landlock:openat", decision: null });
    expect(facts.kernelDenials.filter((d) => d.survived === null).map((d) => d.target)).toEqual([
      "{{trial}}/home/.ssh/id_rsa",
      "{{trial}}/home/.aws/credentials",
      "{{trial}}/home/.env",
    ]);
    expect(facts.l3).toMatchObject({ file: "landlock", net: "cgroup-bpf" });
  });

  it("a node server's git denied the locale alias after the call decides nothing", () => {
    const facts = auditFactsOf(log("BN-13.C-full.ndjson"), { outcomeHeld: false });
    expect(facts.stoppedBy).toBeNull();
    expect(facts.kernelDenials.filter((d) => d.when === "call")).toMatchObject([
      { target: "/usr/share/locale/locale.alias", survived: "runtime probe" },
    ]);
    // The start-up's four /proc reads are one denial each, /proc/self/maps counted three times.
    expect(facts.kernelDenials.find((d) => d.target === "/proc/self/maps")).toMatchObject({
      when: "start",
      count: 3,
    });
  });

  it("runtime probes are reads of locale data and of /proc files that hold no secret", () => {
    expect(isRuntimeProbe("/proc/self/maps", "r")).toBe(true);
    expect(isRuntimeProbe("/usr/share/locale/locale.alias", null)).toBe(true);
    expect(isRuntimeProbe("/proc/self/environ", "r")).toBe(false);
    expect(isRuntimeProbe("/proc/1/cmdline", "r")).toBe(false);
    expect(isRuntimeProbe("/usr/share/locale/locale.alias", "w")).toBe(false);
    expect(isRuntimeProbe("/etc/passwd", "r")).toBe(false);
  });

  it("the summary keeps the call's kernel denials beside the credited layer", () => {
    const facts = auditFactsOf(log("sanitized-benign.C-full.ndjson"), { outcomeHeld: true });
    const benign = record({
      config: "C-full",
      id: "BN-99",
      trial: 1,
      kind: "benign",
      server: "shell",
      tool: "run_command",
      startMs: 1,
      durationMs: 1,
      stoppedBy: facts.stoppedBy,
      stoppedRule: facts.stoppedRule,
      decision: facts.decision,
      kernelDenials: facts.kernelDenials,
    });
    const s = summarize("t", [benign]);
    expect(s.configs["C-full"]?.kernel).toEqual({ trials: 1, decided: 0, besideDecision: 0, survived: 1 });
    expect(s.caseResults[0]?.kernelDenials).toContain("landlock:openat /etc/passwd (survived: outcome held)");
  });
});

const doctor = spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), "doctor"], {
  encoding: "utf8",
});
if (doctor.status !== 0) console.warn(`layers: the C-full trials are left out here:\n${doctor.stdout}`);

describe.skipIf(doctor.status !== 0)("the deciding layer of real trials under C-full", () => {
  let factory: WorldFactory;
  let dir: string;
  let records: TrialRecord[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mcpguard-layers-"));
    const auditDir = join(dir, "work");
    const keep = join(dir, "run", "audit");
    mkdirSync(auditDir);
    mkdirSync(keep, { recursive: true });
    const [made, interpreters] = await Promise.all([WorldFactory.create(), resolveInterpreters()]);
    factory = made;
    const fixture = loadScenarios([join(FIXTURES, "XL-01.json")], knownServers());
    expect(fixture.issues).toEqual([]);
    const scenarios = [...fixture.scenarios, ...selectScenarios("FR-05").scenarios];
    const servers = loadAllServers();
    records = [];
    for (const scenario of scenarios)
      records.push(
        await runTrial(
          { runId: "layers", scenario, config: "C-full", trial: 1 },
          { factory, servers, interpreters, auditDir, keepAuditDir: keep },
        ),
      );
    writeFileSync(join(dir, "run", "trials.ndjson"), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }, 60_000);
  afterAll(() => {
    factory?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("credits the sanitized benign call to the sanitizer and the attack to Landlock", () => {
    expect(records.map((r) => [r.id, r.error, r.stoppedBy, r.stoppedRule])).toEqual([
      ["XL-01", null, "sanitizer", "l2.result.injection"],
      ["FR-05", null, "L3:landlock", "landlock:openat"],
    ]);
    expect(records[0]?.passed).toBe(true);
    expect(records[1]?.fired).toBe(false);
    // Both sessions were denied something after the call; only the attack's denials decide.
    expect(records[0]?.kernelDenials?.some((d) => d.when === "call")).toBe(true);
    expect(records[0]?.kernelDenials?.every((d) => d.survived !== null)).toBe(true);
    expect(records[1]?.kernelDenials?.[0]).toMatchObject({
      target: "{{trial}}/home/.ssh/id_rsa",
      survived: null,
    });
  });

  const check = (run: string, ...args: string[]) =>
    spawnSync(
      process.execPath,
      [repoPath("runner", "bin", "mcpguard-bench.js"), "check-layers", run, ...args],
      {
        cwd: REPO_ROOT,
        encoding: "utf8",
      },
    );

  it("check-layers: no trial disagrees with its kept audit log, nor with its own facts", () => {
    const run = join(dir, "run");
    const fromLogs = check(run);
    expect(fromLogs.stdout, fromLogs.stderr).toContain(
      `0 of 2 trials disagree with the audit log (from the audit logs in ${join(run, "audit")})`,
    );
    expect(fromLogs.status).toBe(0);
    expect(checkLayers(records).disagreements).toEqual([]);
  });

  it("check-layers counts a trial credited to the kernel against its audit log, and fails", () => {
    const run = join(dir, "tampered");
    cpSync(join(dir, "run"), run, { recursive: true });
    const tampered = records.map((r) => (r.id === "XL-01" ? { ...r, stoppedBy: "L3:landlock" } : r));
    writeFileSync(join(run, "trials.ndjson"), tampered.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const r = check(run);
    expect(r.stdout).toContain("C-full XL-01 #1: stoppedBy L3:landlock, audit log sanitizer");
    expect(r.stdout).toContain("1 of 2 trials disagree with the audit log");
    expect(r.status).toBe(1);
    // Without the logs, the records' own facts say the same.
    rmSync(join(run, "audit"), { recursive: true });
    expect(check(run).stdout).toContain("1 of 2 trials disagree with the audit log (from the trial records'");
  });
});
