/**
 * The guard's own files out of the server's reach (issue 29): `mcpguard run` refuses, before the
 * server starts, a policy, pin file or audit log inside what the server may write (rule a), or
 * where another user could replace it (rule b, ssh's StrictModes). Through the real bin.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, toolText } from "./helpers.ts";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(
    `the C-full and C-ebpf cases are skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}${doctor.stderr}`,
  );
const root = process.getuid?.() === 0;

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-guard-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** A policy for the fixture whose tool `save` may write the working directory. */
function writerPolicy(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      server: "proxy-fixture",
      tools: {
        echo: { args: { text: "text" } },
        save: { args: { path: "path.write", text: "text" }, write: ["{{cwd}}/**"] },
      },
    }),
  );
  chmodSync(path, 0o644);
  return path;
}

/** The environment without sudo's SUDO_UID (CI runs the tests under sudo): the owners are root and you. */
const { SUDO_UID: _caller, ...plainEnv } = process.env;

/** `mcpguard run` in the workspace, with no client: status and stderr. */
function start(config: string, options: string[], env: NodeJS.ProcessEnv = plainEnv) {
  const r = spawnSync(
    process.execPath,
    [MCPGUARD, "run", "--config", config, ...options, "--", process.execPath, FIXTURE],
    { cwd: work, encoding: "utf8", input: "", timeout: 30_000, env },
  );
  return { status: r.status, stderr: r.stderr, lines: r.stderr.trim().split("\n") };
}

describe("rule a: nothing the server may write", () => {
  const configs = ["C-app", ...(l3 ? ["C-full", "C-ebpf"] : [])];

  it.each(configs)(
    "%s refuses a policy inside the write grant, in one line, before the server starts",
    (config) => {
      // Where an older mcpguard wrap put it: beside the project's client config.
      const policy = writerPolicy(join(work, ".vscode", "mcpguard", "fixture.json"));
      const r = start(config, ["--policy", policy]);
      expect(r.status).toBe(2);
      expect(r.lines).toHaveLength(1);
      const grant = config === "C-ebpf" ? "the kernel's write rule" : "the write grant of tool save";
      expect(r.stderr).toBe(
        `mcpguard run: the policy ${policy} lies in ${work}, ${grant}: the server could rewrite it; ` +
          "keep it outside every folder the server may write, or narrow the grant\n",
      );
    },
  );

  it("refuses an audit log and a pin file inside the workspace grant, and starts with them outside", async () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    const log = start("C-app", ["--policy", policy, "--audit-log", join(work, "audit", "fixture.ndjson")]);
    expect(log.status).toBe(2);
    expect(log.stderr).toMatch(
      new RegExp(
        `^mcpguard run: the audit log ${work}/audit/fixture\\.ndjson lies in ${work}, the write grant of tool save:`,
      ),
    );
    writeFileSync(join(work, "pins.json"), '{"version": 1, "servers": {}}\n');
    const pins = start("C-app", ["--policy", policy, "--pins", join(work, "pins.json")]);
    expect(pins.status).toBe(2);
    expect(pins.stderr).toMatch(
      /^mcpguard run: the pin file .*pins\.json lies in .*, the write grant of tool save:/,
    );
    // A pin file there means nothing to C0, which reads none: only the audit log counts.
    expect(start("C0", ["--policy", policy, "--pins", join(work, "pins.json")]).status).toBe(0);

    const s = await connect(
      [
        MCPGUARD,
        "run",
        "--config",
        "C-app",
        "--policy",
        policy,
        "--audit-log",
        join(scratch, "audit.ndjson"),
        "--",
        "node",
        FIXTURE,
      ],
      undefined,
      work,
    );
    expect(toolText(await s.client.callTool({ name: "echo", arguments: { text: "started" } }))).toBe(
      "started",
    );
    await s.client.close();
  });

  it("judges a symbolic link where it points and where it lies", () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    const link = join(work, "policy.json");
    spawnSync("ln", ["-s", policy, link]);
    const r = start("C-app", ["--policy", link]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^mcpguard run: the policy .*\/work\/policy\.json lies in .*\/work, the write grant of tool save:/,
    );
  });
});

describe("rule b: owned by root or you, writable by nobody else", () => {
  it("refuses a policy open to others, in a group-writable folder, or owned by another uid (C-app)", () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    chmodSync(policy, 0o666);
    const open = start("C-app", ["--policy", policy]);
    expect(open.status).toBe(2);
    expect(open.stderr).toBe(
      `mcpguard run: the policy ${policy} is writable by group and others (mode 0666): chmod go-w ${policy}, or keep the policy elsewhere\n`,
    );
    chmodSync(policy, 0o644);
    chmodSync(join(scratch, "policies"), 0o775);
    const folder = start("C-app", ["--policy", policy]);
    expect(folder.status).toBe(2);
    expect(folder.stderr).toBe(
      `mcpguard run: the policy ${policy} is in ${scratch}/policies, which is writable by group (mode 0775): chmod go-w ${scratch}/policies, or keep the policy elsewhere\n`,
    );
    chmodSync(join(scratch, "policies"), 0o755);
    if (!root) {
      console.log("skipped the ownership case: chown needs root");
      return;
    }
    chownSync(policy, 65534, 65534);
    const owned = start("C-app", ["--policy", policy]);
    expect(owned.status).toBe(2);
    expect(owned.stderr).toBe(
      `mcpguard run: the policy ${policy} is owned by uid 65534, not by root: that user could rewrite the policy; chown it, or keep the policy elsewhere\n`,
    );
    // Started through sudo by that user, root's proxy counts their files as root's (who runs sudo is root).
    expect(start("C-app", ["--policy", policy], { ...plainEnv, SUDO_UID: "65534" }).status).toBe(0);
    expect(start("C-app", ["--policy", policy], { ...plainEnv, SUDO_UID: "1000" }).stderr).toMatch(
      /is owned by uid 65534, not by root or the user who ran sudo \(uid 1000\):/,
    );
  });

  it("judges C0's audit log and a log still to be created by the folders above it; a sticky folder (/tmp) passes", () => {
    const shared = join(scratch, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const log = join(shared, "logs", "fixture.ndjson");
    const r = start("C0", ["--audit-log", log]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `mcpguard run: the audit log ${log} is in ${shared}, which is writable by group and others (mode 0777): chmod go-w ${shared}, or keep the audit log elsewhere\n`,
    );
    // With the sticky bit nobody else can replace our entries there: like /tmp itself.
    chmodSync(shared, 0o1777);
    mkdirSync(join(shared, "logs"));
    expect(start("C0", ["--audit-log", log]).status).toBe(0);
    chmodSync(log, 0o666);
    expect(start("C0", ["--audit-log", log]).stderr).toMatch(
      /^mcpguard run: the audit log .* is writable by group and others \(mode 0666\): chmod go-w /,
    );
    if (root) {
      chmodSync(log, 0o600);
      chownSync(join(shared, "logs"), 65534, 65534);
      expect(start("C0", ["--audit-log", log]).stderr).toBe(
        `mcpguard run: the audit log ${log} is in ${shared}/logs, which is owned by uid 65534, not by root: that user could replace the audit log; chown the folder, or keep the audit log elsewhere\n`,
      );
    }
  });
});
