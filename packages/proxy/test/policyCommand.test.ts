/** `mcpguard policy derive` and `mcpguard policy check` against real servers and the shipped files. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Policy } from "@mcpguard/policy/schema";
import { afterAll, describe, expect, it } from "vitest";
import { MCPGUARD } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "mcpguard-derive-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function mcpguard(...args: string[]) {
  return spawnSync(process.execPath, [MCPGUARD, ...args], {
    cwd: scratch,
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("policy derive", () => {
  it("drafts least privilege from a server's tools/list", () => {
    const out = join(scratch, "filesystem.json");
    const r = mcpguard(
      "policy",
      "derive",
      "--out",
      out,
      "--",
      "python3",
      "-B",
      join(ROOT, "servers", "python", "filesystem.py"),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/wrote a draft policy for workspace-files \(3 tools\)/);
    const draft = Policy.parse(JSON.parse(readFileSync(out, "utf8")));
    expect(draft.draft).toBe(true);
    expect(draft.tools.read_file).toMatchObject({
      args: { path: "path.read" },
      read: ["{{cwd}}/**"],
      write: [],
    });
    expect(draft.tools.write_file).toMatchObject({
      args: { path: "path.write", content: "text" },
      write: ["{{cwd}}/**"],
    });
    expect(draft.tools.list_dir).toMatchObject({ args: { path: "path.read" }, write: [] });
  });

  it("never grants programs or network on its own, and lets annotations only take away", () => {
    const shell = JSON.parse(
      mcpguard("policy", "derive", "--", "python3", "-B", join(ROOT, "servers", "python", "shell.py")).stdout,
    );
    expect(shell.tools.run_command).toMatchObject({ args: { command: "command" }, exec: [], network: [] });
    expect(shell.tools.run_command.description).toMatch(/list the programs it may run/);
    const sqlite = JSON.parse(
      mcpguard("policy", "derive", "--", "python3", "-B", join(ROOT, "servers", "python", "sqlite.py"))
        .stdout,
    );
    expect(sqlite.tools.query).toMatchObject({ args: { sql: "sql" }, sql: ["read", "write"] });
    expect(sqlite.tools.list_tables).toMatchObject({ args: {}, write: [] });
    const text = JSON.parse(
      mcpguard("policy", "derive", "--", "node", join(ROOT, "servers", "js", "malicious.mjs")).stdout,
    );
    expect(text.tools.translate).toMatchObject({ network: [], exec: [], read: [], write: [] });
  });

  it("reports a server that cannot be listed", () => {
    const r = mcpguard("policy", "derive", "--", "node", "-e", "process.exit(4)");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/exited \(status 4\) before listing its tools/);
  });
});

describe("policy check", () => {
  it("accepts the shipped policies and manifests", () => {
    const r = spawnSync(process.execPath, [MCPGUARD, "policy", "check"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("28 files checked, 0 invalid\n");
    expect(r.status).toBe(0);
  });

  it("names the file, the field and what was expected", () => {
    const dir = join(scratch, "bad");
    mkdirSync(join(dir, "servers"), { recursive: true });
    mkdirSync(join(dir, "agentbound"));
    writeFileSync(
      join(dir, "servers", "x.json"),
      JSON.stringify({
        version: 1,
        server: "x",
        tools: { t: { args: { p: "path" }, read: ["relative/**"] } },
      }),
    );
    writeFileSync(
      join(dir, "agentbound", "x.json"),
      JSON.stringify({
        version: 1,
        server: "x",
        permissions: ["mcp.ac.system.exec"],
        scopes: { "mcp.ac.network.client": ["h"] },
      }),
    );
    const r = mcpguard("policy", "check", dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /servers\/x\.json: tools\.t\.args\.p: Invalid option: expected one of "path\.read"\|"path\.write"/,
    );
    expect(r.stderr).toMatch(
      /servers\/x\.json: tools\.t\.read\.0: expected an absolute path or one starting with \{\{cwd\}\}/,
    );
    expect(r.stderr).toMatch(
      /agentbound\/x\.json: scopes\.mcp\.ac\.network\.client: a scope for "mcp\.ac\.network\.client", which the manifest does not grant/,
    );
    expect(r.stdout).toBe("2 files checked, 2 invalid\n");
  });
});
