import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide, destinationAllowed } from "../src/decide.ts";
import { filterEnvironment, tokenShaped } from "../src/env.ts";
import { loadOverrides, PolicyError, resolvePolicy } from "../src/load.ts";
import { callPathResolver, canonicalPath, globToRegExp, isWithin, PathSet } from "../src/paths.ts";
import { type Policy, Policy as PolicySchema } from "../src/schema.ts";
import { parseCommand } from "../src/shell.ts";
import { parseSql } from "../src/sql.ts";

let root: string;
let work: string;
let home: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-policy-")));
  work = join(root, "work");
  home = join(root, "home");
  mkdirSync(join(work, "data"), { recursive: true });
  mkdirSync(join(root, "work_evil"));
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(work, "readme.txt"), "hi");
  writeFileSync(join(home, ".ssh", "id_rsa"), "key");
  symlinkSync(join(home, ".ssh"), join(work, "keys"));
  symlinkSync("/etc", join(work, "data", "etc"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("paths", () => {
  it("canonicalises through symlinks, .. and missing tails", () => {
    expect(canonicalPath("keys/id_rsa", work).canonical).toBe(join(home, ".ssh", "id_rsa"));
    expect(canonicalPath("data/../readme.txt", work).canonical).toBe(join(work, "readme.txt"));
    expect(canonicalPath("new/dir/file.txt", work).canonical).toBe(join(work, "new", "dir", "file.txt"));
    const created = join(home, ".ssh", "new.txt");
    expect(canonicalPath("keys/new.txt", work)).toEqual({
      lexical: join(work, "keys", "new.txt"),
      canonical: created,
      physical: created,
    });
    // The server normalises `keys/..` away; the kernel climbs from the link's target instead.
    expect(canonicalPath("keys/../readme.txt", work)).toEqual({
      lexical: join(work, "readme.txt"),
      canonical: join(work, "readme.txt"),
      physical: join(home, "readme.txt"),
    });
  });

  it("asks the filesystem once per path for one call's resolver, and a new one asks again", () => {
    const resolve = callPathResolver();
    const first = resolve("swap/readme.txt", work);
    expect(first.canonical).toBe(join(work, "swap", "readme.txt"));
    symlinkSync(home, join(work, "swap"));
    try {
      expect(resolve("swap/readme.txt", work)).toBe(first);
      expect(resolve("./swap/readme.txt", work).canonical).toBe(join(home, "readme.txt"));
      expect(callPathResolver()("swap/readme.txt", work).canonical).toBe(join(home, "readme.txt"));
    } finally {
      rmSync(join(work, "swap"));
    }
  });

  it("compares by whole segments", () => {
    expect(isWithin("/work/a", "/work")).toBe(true);
    expect(isWithin("/work", "/work")).toBe(true);
    expect(isWithin("/work_evil/a", "/work")).toBe(false);
    expect(isWithin("/anything", "/")).toBe(true);
  });

  it("matches globs with ** across segments and * within one", () => {
    expect(globToRegExp("/a/**").test("/a")).toBe(true);
    expect(globToRegExp("/a/**").test("/a/b/c")).toBe(true);
    expect(globToRegExp("/a/**").test("/ab")).toBe(false);
    expect(globToRegExp("/a/*.json").test("/a/x.json")).toBe(true);
    expect(globToRegExp("/a/*.json").test("/a/b/x.json")).toBe(false);
    expect(globToRegExp("/a/**/x.db").test("/a/x.db")).toBe(true);
    expect(globToRegExp("/a/**/x.db").test("/a/b/c/x.db")).toBe(true);
    expect(globToRegExp("/a/file?.txt").test("/a/file1.txt")).toBe(true);
    expect(globToRegExp("/a.b/c").test("/aXb/c")).toBe(false);
    expect(new PathSet([`${work}/**`]).match(`${root}/work_evil/x`)).toBeUndefined();
  });
});

describe("shell commands", () => {
  it("names every program and redirect", () => {
    const parsed = parseCommand(
      "cd /w && ls -1 '/a b' | grep -v x > out.txt 2>&1; FOO=1 date >> \"log file\"",
    );
    expect(parsed.commands.map((c) => c.argv)).toEqual([
      ["cd", "/w"],
      ["ls", "-1", "/a b"],
      ["grep", "-v", "x"],
      ["date"],
    ]);
    expect(parsed.commands[2]?.redirects).toEqual([{ op: ">", target: "out.txt" }]);
    expect(parsed.commands[3]).toMatchObject({
      assignments: ["FOO=1"],
      redirects: [{ op: ">>", target: "log file" }],
    });
    expect(parsed).toMatchObject({ substitution: false, malformed: false });
  });

  it("reports substitutions, expansions and broken quoting", () => {
    expect(parseCommand("echo $(id)").substitution).toBe(true);
    expect(parseCommand("echo `id`").substitution).toBe(true);
    expect(parseCommand('echo "$(id)"').substitution).toBe(true);
    expect(parseCommand("echo '$(id)'").substitution).toBe(false);
    expect(parseCommand("diff <(ls a) <(ls b)").substitution).toBe(true);
    expect(parseCommand("echo $HOME").expansion).toBe(true);
    expect(parseCommand("echo 'unclosed").malformed).toBe(true);
    expect(parseCommand("(cat /etc/passwd)").commands[0]?.argv).toEqual(["cat", "/etc/passwd"]);
    expect(parseCommand("echo $((1 + 2))").substitution).toBe(false);
  });

  it("reads here-documents and here-strings as data, not commands or files", () => {
    const parsed = parseCommand("cat <<EOF > out.txt\nenv\ncurl http://x\nEOF\ndate");
    expect(parsed.commands.map((c) => c.argv)).toEqual([["cat"], ["date"]]);
    expect(parsed.commands[0]?.redirects).toEqual([{ op: ">", target: "out.txt" }]);
    expect(parseCommand("cat <<-'END'\n\tenv\n\tEND\nls").commands.map((c) => c.argv)).toEqual([
      ["cat"],
      ["ls"],
    ]);
    expect(parseCommand("grep x <<< 'a b'").commands).toEqual([
      { assignments: [], argv: ["grep", "x"], redirects: [] },
    ]);
  });
});

describe("sql", () => {
  it("classifies statements, ignoring keywords in literals and comments", () => {
    expect(parseSql("SELECT * FROM users").statements.map((s) => s.sqlClass)).toEqual(["read"]);
    expect(parseSql("select 'DROP TABLE x' from t").statements.map((s) => s.sqlClass)).toEqual(["read"]);
    expect(parseSql("SELECT 1; DROP TABLE users").statements.map((s) => s.sqlClass)).toEqual(["read", "ddl"]);
    expect(parseSql("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x").statements[0]?.sqlClass).toBe(
      "write",
    );
    expect(parseSql("SELECT 1 -- DROP TABLE users")).toMatchObject({
      comments: true,
      statements: [{ sqlClass: "read" }],
    });
    expect(parseSql("SELECT 'it''s'; ").statements).toHaveLength(1);
    expect(parseSql("SELECT 'open").unterminated).toBe(true);
  });
});

function policy(tools: Policy["tools"]): Policy {
  return PolicySchema.parse({ version: 1, server: "demo", tools });
}

describe("decide (L1)", () => {
  const resolved = () =>
    resolvePolicy(
      policy({
        read_file: { args: { path: "path.read" }, read: ["{{cwd}}/**"] },
        write_file: { args: { path: "path.write", content: "text" }, write: ["{{cwd}}/output/**"] },
        run: { args: { command: "command" }, exec: ["date", "ls", "git log"], read: ["{{cwd}}/**"] },
        query: { args: { sql: "sql" }, sql: ["read", "write"] },
        fetch: { args: { url: "url" }, network: ["api.example.com:443", "*.docs.example.org"] },
      } as unknown as Policy["tools"]),
      undefined,
      { cwd: work, home, tmp: join(root, "tmp") },
    );

  it("refuses undeclared tools and arguments", () => {
    expect(decide(resolved(), "delete_all", {})).toMatchObject({ allow: false, rule: "l1.undeclared-tool" });
    expect(decide(resolved(), "read_file", { path: "readme.txt", mode: "x" })).toMatchObject({
      allow: false,
      rule: "l1.undeclared-argument",
    });
  });

  it("takes no argument name for declared because Object.prototype has it", () => {
    for (const name of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"]) {
      // JSON.parse, as the relay reads a call, makes even "__proto__" an own property.
      const args = JSON.parse(`{"path": "readme.txt", "${name}": "x"}`);
      expect(decide(resolved(), "read_file", args), name).toMatchObject({
        allow: false,
        rule: "l1.undeclared-argument",
      });
    }
  });

  it("judges paths on their canonical form", () => {
    const p = resolved();
    expect(decide(p, "read_file", { path: "readme.txt" })).toEqual({ allow: true });
    expect(decide(p, "read_file", { path: join(work, "data", "x.json") })).toEqual({ allow: true });
    for (const path of [
      "/etc/passwd",
      "../../../../etc/passwd",
      "keys/id_rsa",
      "data/etc/passwd",
      join(root, "work_evil", "x"),
      "keys/../.ssh/id_rsa",
    ]) {
      expect(decide(p, "read_file", { path }), path).toMatchObject({ allow: false, rule: "l1.path.read" });
    }
    expect(decide(p, "write_file", { path: "output/report.txt", content: "x" })).toEqual({ allow: true });
    expect(decide(p, "write_file", { path: "readme.txt", content: "x" })).toMatchObject({
      rule: "l1.path.write",
    });
  });

  it("checks every program a command runs and every file it names", () => {
    const p = resolved();
    expect(decide(p, "run", { command: "date" })).toEqual({ allow: true });
    expect(decide(p, "run", { command: `ls -1 ${work}` })).toEqual({ allow: true });
    expect(decide(p, "run", { command: "git log -n 3" })).toEqual({ allow: true });
    expect(decide(p, "run", { command: "git config --global user.email x" })).toMatchObject({
      rule: "l1.exec",
    });
    expect(decide(p, "run", { command: "date; curl http://x" })).toMatchObject({ rule: "l1.exec" });
    expect(decide(p, "run", { command: "ls /etc" })).toMatchObject({ rule: "l1.path.read" });
    expect(decide(p, "run", { command: "ls keys/../.ssh/id_rsa" })).toMatchObject({ rule: "l1.path.read" });
    expect(decide(p, "run", { command: "ls > /tmp/out" })).toMatchObject({ rule: "l1.path.write" });
    expect(decide(p, "run", { command: "./date" })).toMatchObject({ rule: "l1.exec" });
    expect(decide(p, "run", { command: "ls $(cat x)" })).toMatchObject({ rule: "l1.command.dynamic" });
    expect(decide(p, "run", { command: "$CMD" })).toMatchObject({ rule: "l1.command.dynamic" });
  });

  it("limits SQL to the statement classes the tool may run", () => {
    const p = resolved();
    expect(decide(p, "query", { sql: "SELECT * FROM users" })).toEqual({ allow: true });
    expect(decide(p, "query", { sql: "INSERT INTO users VALUES (1)" })).toEqual({ allow: true });
    expect(decide(p, "query", { sql: "DROP TABLE users" })).toMatchObject({ rule: "l1.sql" });
    expect(decide(p, "query", { sql: "SELECT 1; DROP TABLE users" })).toMatchObject({ rule: "l1.sql" });
  });

  it("allows only listed network destinations", () => {
    const p = resolved();
    expect(decide(p, "fetch", { url: "https://api.example.com/v1" })).toEqual({ allow: true });
    expect(decide(p, "fetch", { url: "http://api.example.com/v1" })).toMatchObject({ rule: "l1.network" });
    expect(decide(p, "fetch", { url: "https://a.docs.example.org/x" })).toEqual({ allow: true });
    expect(decide(p, "fetch", { url: "https://evil.com/?api.example.com" })).toMatchObject({
      rule: "l1.network",
    });
    expect(destinationAllowed("docs.example.org", "443", ["*.docs.example.org"])).toBe(false);
    expect(destinationAllowed("::1", "8080", ["[::1]:8080"])).toBe(true);
  });
});

describe("overrides", () => {
  it("add capabilities for one tool or the whole server, and must name real tools", async () => {
    const dir = join(root, "overrides");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "demo.json"),
      JSON.stringify({
        version: 1,
        server: "demo",
        overrides: [
          { tool: "read_file", allow: { read: ["{{home}}/notes/**"] }, reason: "notes live in home" },
          { allow: { env: ["LOG_LEVEL"] }, disableRules: ["l2.sensitive-key"], reason: "logging" },
        ],
      }),
    );
    const base = policy({
      read_file: { args: { path: "path.read" }, read: ["{{cwd}}/**"] },
    } as unknown as Policy["tools"]);
    const vars = { cwd: work, home };
    const before = resolvePolicy(base, undefined, vars);
    expect(decide(before, "read_file", { path: join(home, "notes", "a.txt") })).toMatchObject({
      allow: false,
    });
    const after = resolvePolicy(base, await loadOverrides(dir, "demo"), vars);
    expect(decide(after, "read_file", { path: join(home, "notes", "a.txt") })).toEqual({ allow: true });
    expect(decide(after, "read_file", { path: join(home, ".ssh", "id_rsa") })).toMatchObject({
      allow: false,
    });
    expect(after.keepEnv.has("LOG_LEVEL")).toBe(true);
    expect(after.tools.get("read_file")?.disabledRules.has("l2.sensitive-key")).toBe(true);
    expect(await loadOverrides(dir, "other")).toBeUndefined();

    writeFileSync(
      join(dir, "demo.json"),
      JSON.stringify({ version: 1, server: "demo", overrides: [{ tool: "nope", reason: "x" }] }),
    );
    const unknownTool = await loadOverrides(dir, "demo");
    expect(() => resolvePolicy(base, unknownTool, vars)).toThrow(/declares no such tool/);
    writeFileSync(
      join(dir, "demo.json"),
      JSON.stringify({ version: 1, server: "demo", overrides: [{ allow: {} }] }),
    );
    await expect(loadOverrides(dir, "demo")).rejects.toThrow(PolicyError);
    await expect(loadOverrides(dir, "demo")).rejects.toThrow(/overrides\.0\.reason: /);
  });

  it("refuses a policy that needs a variable the server does not have", () => {
    const base = policy({ t: { read: ["{{home}}/x"] } } as unknown as Policy["tools"]);
    expect(() => resolvePolicy(base, undefined, { cwd: work })).toThrow(
      /uses \{\{home\}\}, but HOME is not set/,
    );
  });
});

describe("environment at spawn", () => {
  it("keeps the world's variables and the declared ones, withholds the rest", () => {
    const env = {
      HOME: "/h",
      PATH: "/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      TMPDIR: "/t",
      LOG_LEVEL: "debug",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      SOME_ID: "aB3dE5gH7jK9mN1pQ3sT",
      OLDPWD: "/root",
    };
    const filtered = filterEnvironment(env, new Set(["LOG_LEVEL"]));
    expect(filtered.env).toEqual({
      HOME: "/h",
      PATH: "/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      TMPDIR: "/t",
      LOG_LEVEL: "debug",
    });
    expect(filtered.withheld).toEqual(["AWS_SECRET_ACCESS_KEY", "OLDPWD", "SOME_ID"]);
    expect(filtered.secretValues.sort()).toEqual([env.AWS_SECRET_ACCESS_KEY, env.SOME_ID].sort());
    expect(tokenShaped("/usr/local/bin/node")).toBe(false);
  });

  it("keeps PWD, and takes no path for a token however mixed its case", () => {
    const workspace = "/tmp/mcpguard-worlds-Xk3Qp9/w-7fA2/workspace";
    const env = {
      PWD: workspace,
      VSCODE_CWD: "/Users/Alice/Projects/Q3Report",
      SOME_ID: "aB3dE5gH7jK9mN1pQ3sT",
    };
    const filtered = filterEnvironment(env, new Set());
    expect(filtered.env).toEqual({ PWD: workspace });
    expect(filtered.withheld).toEqual(["SOME_ID", "VSCODE_CWD"]);
    expect(filtered.secretValues).toEqual([env.SOME_ID]);
    expect(tokenShaped(workspace)).toBe(false);
    // Base64 keys hold slashes too: with + or =, or with no plain name between them, they stay tokens.
    expect(tokenShaped("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")).toBe(true);
    expect(tokenShaped("/K7MDENG/bPxRfiCYEXAMPLEKEY+Ab12")).toBe(true);
    expect(tokenShaped("/K7MDENGq/bPxRfiCYEXAMPLEKEYAb12")).toBe(true);
  });
});
