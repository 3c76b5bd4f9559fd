/** `mcpguard policy derive` and `mcpguard policy check` against real servers and the shipped files. */
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Policy } from "@mcpguard/policy/schema";
import { afterAll, describe, expect, it } from "vitest";
import { EVERYTHING, FILESYSTEM, MCPGUARD, MEMORY } from "./helpers.ts";

const DERIVABLE = join(import.meta.dirname, "fixtures", "derivable.mjs");

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
    expect(r.stderr).toMatch(/wrote a draft policy for workspace-files \(3 tools; roots .*\)/);
    const draft = Policy.parse(JSON.parse(readFileSync(out, "utf8")));
    expect(draft.draft).toBe(true);
    // No folder on its command line: the folder the server starts in, wherever the client starts it.
    expect(draft.tools.read_file).toMatchObject({
      args: { path: "path.read" },
      read: ["{{cwd}}/**"],
      write: [],
    });
    expect(draft.tools.write_file).toMatchObject({
      args: { path: "path.write", content: "text" },
      write: ["{{cwd}}/**"],
    });
    expect(draft.description).toMatch(/granted \{\{cwd\}\}, the folder the server starts in/);
    expect(draft.tools.list_dir).toMatchObject({ args: { path: "path.read" }, write: [] });
  });

  it("gives a command tool only programs that read what they name, never network, and lets annotations only take away", () => {
    const shell = JSON.parse(
      mcpguard("policy", "derive", "--", "python3", "-B", join(ROOT, "servers", "python", "shell.py")).stdout,
    );
    expect(shell.tools.run_command).toMatchObject({
      args: { command: "command" },
      read: ["{{cwd}}/**"],
      write: [],
      network: [],
    });
    expect(shell.tools.run_command.exec).toEqual(expect.arrayContaining(["cat", "grep", "ls", "date"]));
    for (const program of ["sh", "bash", "python3", "node", "curl", "cp", "rm", "tee", "env", "xargs"])
      expect(shell.tools.run_command.exec).not.toContain(program);
    expect(shell.tools.run_command.description).toMatch(/programs that only read the files they name/);
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

  it("reports a server that does not start or answer in one line, exit 2", () => {
    const lines = (r: ReturnType<typeof mcpguard>) => r.stderr.trimEnd().split("\n");
    const exits = mcpguard("policy", "derive", "--", "node", "-e", "process.exit(4)");
    expect(exits.status).toBe(2);
    expect(lines(exits)).toEqual([
      "mcpguard policy: the server exited (status 4) before answering initialize",
    ]);
    const no = mcpguard("policy", "derive", "--", "false");
    expect(no.status).toBe(2);
    expect(lines(no)).toEqual(["mcpguard policy: the server exited (status 1) before answering initialize"]);
    const silent = mcpguard("policy", "derive", "--timeout-ms", "500", "--", "sleep", "30");
    expect(silent.status).toBe(2);
    expect(lines(silent)).toEqual(["mcpguard policy: the server did not answer initialize within 0.5 s"]);
    expect(`${exits.stderr}${no.stderr}${silent.stderr}`).not.toMatch(/at .*\.js:\d+/);
  });

  it("grants the folder the server is given, not the one it starts in: from / and from the parent", () => {
    const ws = join(realpathSync(scratch), "project");
    mkdirSync(ws, { recursive: true });
    for (const cwd of ["/", dirname(ws)]) {
      const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", "--", "node", FILESYSTEM, ws], {
        cwd,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const draft = Policy.parse(JSON.parse(r.stdout));
      expect(draft.draft).toBe(true);
      for (const name of [
        "read_text_file",
        "read_multiple_files",
        "list_directory",
        "search_files",
        "get_file_info",
      ]) {
        expect(draft.tools[name], `${name} from ${cwd}`).toMatchObject({ read: [`${ws}/**`], write: [] });
      }
      for (const name of ["write_file", "edit_file", "move_file", "create_directory"]) {
        expect(draft.tools[name], `${name} from ${cwd}`).toMatchObject({
          read: [`${ws}/**`],
          write: [`${ws}/**`],
        });
      }
      expect(r.stdout).not.toContain("{{cwd}}");
      expect(r.stdout).not.toContain('"/**"');
      expect(draft.description).toContain(`Path tools may use ${ws}`);
    }
  });

  it("from / with no root grants nothing, and says so", () => {
    const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", "--", "node", FILESYSTEM], {
      cwd: "/",
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const draft = Policy.parse(JSON.parse(r.stdout));
    expect(draft.tools.read_text_file).toMatchObject({ read: [], write: [] });
    expect(draft.description).toMatch(/derive ran in \/: nothing granted/);
  });

  it("declares roots, sampling and elicitation, so every tool of server-everything is listed", () => {
    const ws = realpathSync(scratch);
    const r = mcpguard("policy", "derive", "--root", ws, "--", "node", EVERYTHING, "stdio");
    expect(r.status, r.stderr).toBe(0);
    const draft = Policy.parse(JSON.parse(r.stdout));
    for (const name of [
      "echo",
      "get-roots-list",
      "trigger-sampling-request",
      "trigger-elicitation-request",
      "trigger-url-elicitation",
      "trigger-sampling-request-async",
    ]) {
      expect(Object.keys(draft.tools), name).toContain(name);
    }
  });

  it("grants the --root folders to server-filesystem started with no folder of its own", () => {
    const ws = join(realpathSync(scratch), "rooted");
    mkdirSync(ws, { recursive: true });
    const r = mcpguard("policy", "derive", "--root", ws, "--", "node", FILESYSTEM);
    expect(r.status, r.stderr).toBe(0);
    const draft = Policy.parse(JSON.parse(r.stdout));
    expect(draft.tools.write_file).toMatchObject({ write: [`${ws}/**`] });
    // Asked in a scratch world (the client's root replaced too), this version reads a relative
    // path against its first folder, and so does L1 with the draft.
    expect(draft.relativeTo).toBe(ws);
    expect(draft.description).toMatch(new RegExp(`resolved a relative path against ${ws}`));
    // 2025.3.28 reads it against its working directory: no relativeTo.
    const old = join(
      ROOT,
      "servers",
      "real",
      "node_modules",
      "server-filesystem-2025.3.28",
      "dist",
      "index.js",
    );
    const before = mcpguard("policy", "derive", "--", "node", old, ws);
    expect(before.status, before.stderr).toBe(0);
    expect(Policy.parse(JSON.parse(before.stdout)).relativeTo).toBeUndefined();
    expect(mcpguard("policy", "derive", "--root", join(ws, "nope"), "--", "node", FILESYSTEM).stderr).toBe(
      `mcpguard policy: --root ${join(ws, "nope")}: not a folder\n`,
    );
  });

  it("keeps server-memory's store and the variable that places it", () => {
    const store = join(realpathSync(scratch), "memory.jsonl");
    const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", "--", "node", MEMORY], {
      cwd: "/",
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, MEMORY_FILE_PATH: store },
    });
    expect(r.status, r.stderr).toBe(0);
    const draft = Policy.parse(JSON.parse(r.stdout));
    expect(draft.environment.keep).toEqual(["MEMORY_FILE_PATH"]);
    expect(draft.tools.create_entities).toMatchObject({ write: [`${store}*`] });
    expect(draft.tools.read_graph).toMatchObject({ read: [`${store}*`], write: [] });
  });

  it("reports each tool whose listing does not fit the MCP schema, and drafts the others", () => {
    const ws = join(realpathSync(scratch), "listed");
    mkdirSync(ws, { recursive: true });
    const r = mcpguard("policy", "derive", "--root", ws, "--", "node", DERIVABLE);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      'mcpguard policy derive: skipped tool "broken_schema": does not fit the MCP schema: inputSchema.type: Invalid input: expected "object"',
      'mcpguard policy derive: skipped tool "#3": does not fit the MCP schema: name: Invalid input: expected string, received undefined',
    ]);
    const draft = Policy.parse(JSON.parse(r.stdout));
    // The tools it adds for elicitation, sampling and the root derive answered roots/list with.
    expect(Object.keys(draft.tools)).toEqual(["read_file", "ask_user", "sample_it", "root_listed"]);
    expect(draft.tools.read_file).toMatchObject({ read: [`${ws}/**`] });
    expect(draft.description).toMatch(
      /Left out \(the listing does not fit the MCP schema\): broken_schema, #3/,
    );
  });
});

describe("policy derive against a listing without end", () => {
  it("stops after 1000 pages, in one line", () => {
    const ws = join(realpathSync(scratch), "endless");
    mkdirSync(ws, { recursive: true });
    const r = mcpguard("policy", "derive", "--root", ws, "--", "node", DERIVABLE, "--endless");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/tools\/list goes on past 1000 pages or 100,000 tools/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("policy check", () => {
  it("accepts the shipped policies and manifests", () => {
    const r = spawnSync(process.execPath, [MCPGUARD, "policy", "check"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    const shipped = readdirSync(join(ROOT, "policies"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".json"),
    );
    expect(shipped.length).toBeGreaterThan(28);
    expect(r.stdout).toBe(`${shipped.length} files checked, 0 invalid\n`);
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
