/**
 * The start record says how long each step of `mcpguard run`'s start took (startClock.ts), and
 * the server's cgroup, made ahead under L3, goes with a start that is refused.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findCgroup2 } from "../src/containment.ts";
import { auditedSession, MCPGUARD, makeWorkspace, readNdjson } from "./helpers.ts";

const POLICY = join(import.meta.dirname, "fixtures", "policy.json");
const BPF = join(import.meta.dirname, "..", "..", "..", "bpf", ".output");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-steps-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** The start record's steps of one session under `config`. */
async function stepsOf(config: string): Promise<Record<string, number>> {
  const log = join(scratch, `audit-${config}.ndjson`);
  const s = await auditedSession({ config, policy: POLICY, log, cwd: work });
  await s.client.close();
  const start = readNdjson(log).find((e) => e.event === "start");
  return start.startMs;
}

/** The steps as the record lists them: in the order they were reached, each after the process began. */
function expectOrdered(steps: Record<string, number>, names: string[]): void {
  const times = Object.values(steps);
  expect(times.every((t) => t > 0 && t < 120_000)).toBe(true);
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  expect(Object.keys(steps)).toEqual(expect.arrayContaining(names));
  const at = names.map((name) => steps[name] as number);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
}

describe("start steps", () => {
  it("C0: loaded, resolved, the cgroup made, the server spawned, released, in that order", async () => {
    const steps = await stepsOf("C0");
    expectOrdered(steps, ["loaded", "layersBuilt", "resolved", "serverSpawned", "released"]);
  });

  it.skipIf(!l3)("C-full: the kernel layer's steps too, the loader's own among them", async () => {
    const steps = await stepsOf("C-full");
    expectOrdered(steps, [
      "loaded",
      "loaderSpawned",
      "probed",
      "layersBuilt",
      "resolved",
      "policyCompiled",
      "released",
    ]);
    // The loader's own account (counted from just before its spawn, so never late): its programs
    // loaded, then attached before its ready event was read, which comes before the release.
    expect(steps.loaderLoaded).toBeLessThan(steps.loaderAttached as number);
    expect(steps.loaderAttached).toBeLessThanOrEqual(steps.loaderReady as number);
    expect(steps.loaderReady).toBeLessThanOrEqual(steps.released as number);
  });
});

describe.skipIf(!l3)("the reaper's step under L3", () => {
  it("a reaper that cannot start refuses the start in one line, exit 2, not as an internal error", () => {
    const bpf = join(scratch, "bpf");
    mkdirSync(bpf);
    for (const bin of ["mcpguard-exec", "mcpguard-loader"]) copyFileSync(join(BPF, bin), join(bpf, bin));
    const r = spawnSync(
      process.execPath,
      [MCPGUARD, "run", "--config", "C-ebpf", "--policy", POLICY, "--", "/bin/cat"],
      {
        encoding: "utf8",
        input: "",
        env: { ...process.env, MCPGUARD_BPF_DIR: bpf },
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^mcpguard run: config C-ebpf: cannot contain the server beyond the proxy's life: /m,
    );
    expect(r.stderr).not.toMatch(/internal error/);
  });
});

describe.skipIf(!l3)("the cgroup made ahead under L3", () => {
  it("is gone when the start is refused after it was made (a policy the layers cannot read)", () => {
    const bad = join(scratch, "bad.json");
    writeFileSync(bad, JSON.stringify({ version: 1, server: "x", tools: { t: { args: { p: "no.role" } } } }));
    const r = spawnSync(
      process.execPath,
      [MCPGUARD, "run", "--config", "C-full", "--policy", bad, "--", "/bin/cat"],
      {
        encoding: "utf8",
        input: "",
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^mcpguard run: config C-full: .*tools\.t\.args\.p/);
    const parent = findCgroup2();
    const left = parent
      ? readdirSync(join(parent.mount, parent.self)).filter((n) => n.startsWith(`mcpguard-${r.pid}-`))
      : [];
    expect(left).toEqual([]);
  });
});
