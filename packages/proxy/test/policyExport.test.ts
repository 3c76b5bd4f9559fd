/** `mcpguard policy export`: the CLI, and the grant it exports being the kernel layer's own. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "@mcpguard/kernel";
import { loadPolicy, policyNeeds, resolvePolicy } from "@mcpguard/policy";
import { afterAll, describe, expect, it } from "vitest";
import { exportPolicy } from "../src/export.ts";
import { MCPGUARD } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const POLICY = join(ROOT, "policies", "servers", "filesystem.json");
const SERVER = ["python3", join(ROOT, "servers", "python", "filesystem.py")];
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-export-")));
const work = join(scratch, "work");
const home = join(scratch, "home");
const tmp = join(scratch, "tmp");
for (const dir of [work, home, tmp]) mkdirSync(dir);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  TMPDIR: tmp,
  LANG: "C.UTF-8",
  SECRET_KEY: "s3cr3t-value",
};

function mcpguard(...args: string[]) {
  return spawnSync(process.execPath, [MCPGUARD, "policy", "export", ...args], {
    cwd: work,
    env,
    encoding: "utf8",
    timeout: 30_000,
  });
}

/** The Landlock records of a compiled ruleset, `path -> rights`. */
function compiledRules(ruleset: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of ruleset.split("\0\0")) {
    const [kind, rights, path] = record.split("\0");
    if (kind === "fs" && rights && path) out.set(path, rights);
  }
  return out;
}

describe("policy export", () => {
  it("grants exactly what the kernel layer compiles for the same policy, server and world", async () => {
    const { exported } = await exportPolicy({
      format: "landlock",
      policy: POLICY,
      cwd: work,
      env,
      argv: SERVER,
    });
    const doc = JSON.parse(exported.text) as { rules: { path: string; allowedAccess: string[] }[] };
    const resolved = resolvePolicy(await loadPolicy(POLICY), undefined, { cwd: work, home, tmp });
    const { ruleset } = await compile(policyNeeds(resolved), SERVER, env);
    expect(new Map(doc.rules.map((r) => [r.path, r.allowedAccess.join(",")]))).toEqual(
      compiledRules(ruleset),
    );
    expect(doc.rules.some((r) => r.path === work)).toBe(true);
    expect(doc.rules.some((r) => r.path === home || r.path === tmp)).toBe(false);
  });

  it("writes bwrap arguments with the world bound at its own paths and withheld variables unset", () => {
    const r = mcpguard("--format", "bwrap", "--policy", POLICY, "--", ...SERVER);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { args: string[]; notes: string[] };
    const joined = doc.args.join(" ");
    expect(joined).toContain(`--bind ${work} ${work}`);
    expect(joined).toContain(`--dir ${home}`);
    expect(joined).toContain("--unsetenv SECRET_KEY");
    expect(joined).not.toContain("--share-net");
    expect(joined).not.toContain("s3cr3t-value");
    expect(doc.notes.join("\n")).toMatch(/network: an empty network namespace/);
  });

  it("writes every format, each saying what it cannot express", () => {
    for (const format of ["srt", "bwrap", "firejail", "landlock", "cgroup", "sbpl"]) {
      const r = mcpguard("--format", format, "--policy", POLICY, "--pids-max", "77", "--", ...SERVER);
      expect(r.status, `${format}: ${r.stderr}`).toBe(0);
      expect(r.stdout, format).toMatch(/per call: arguments and results are not inspected/);
      if (format === "cgroup") expect(JSON.parse(r.stdout).files["pids.max"]).toBe("77");
    }
  });

  it("refuses a bad command line in one line, exit status 2", () => {
    const cases = [
      [["--policy", POLICY], /--format is required/],
      [["--format", "docker", "--policy", POLICY], /unknown format "docker"/],
      [["--format", "bwrap", "--policy", join(scratch, "none.json")], /cannot read/],
      [
        ["--format", "bwrap", "--policy", POLICY, "--", "no-such-program-here"],
        /cannot find the server's program/,
      ],
    ] as const;
    for (const [args, message] of cases) {
      const r = mcpguard(...args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
