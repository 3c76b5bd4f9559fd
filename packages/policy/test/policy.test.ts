import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCommand } from "@mcpguard/readers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "../src/decide.ts";
import { destinationAllowed } from "../src/decision.ts";
import { derivePolicy, probeTool } from "../src/derive.ts";
import { filterEnvironment, tokenShaped } from "../src/env.ts";
import { loadOverrides, PolicyError, resolvePolicy } from "../src/load.ts";
import { callPathResolver, canonicalPath, isWithin, PathSet } from "../src/paths.ts";
import { asDrafted, knownServerData, serverRoots } from "../src/roots.ts";
import { type Policy, Policy as PolicySchema } from "../src/schema.ts";

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

  it("follows a dangling link to its target: the file that opening it with O_CREAT would create", () => {
    const outside = join(root, "outside");
    symlinkSync(join(outside, "created_via_dangling.txt"), join(work, "dangling"));
    expect(canonicalPath("dangling", work)).toEqual({
      lexical: join(work, "dangling"),
      canonical: join(outside, "created_via_dangling.txt"),
      physical: join(outside, "created_via_dangling.txt"),
    });
    // A dangling link to a directory that does not exist yet: the tail lands beneath its target.
    symlinkSync(join(outside, "later"), join(work, "later"));
    expect(canonicalPath("later/x/y.txt", work).canonical).toBe(join(outside, "later", "x", "y.txt"));
  });

  it("reads a relative target against the link's directory, and follows chains of links", () => {
    mkdirSync(join(work, "deep", "er"), { recursive: true });
    // deep/er/up -> ../../../home/.ssh (relative to deep/er, not to the working directory)
    symlinkSync(join("..", "..", "..", "home", ".ssh"), join(work, "deep", "er", "up"));
    expect(canonicalPath("deep/er/up/id_rsa", work).canonical).toBe(join(home, ".ssh", "id_rsa"));
    // a -> b -> c (dangling, relative) -> ../home/new.txt
    symlinkSync("b", join(work, "a"));
    symlinkSync("c", join(work, "b"));
    symlinkSync(join("..", "home", "new.txt"), join(work, "c"));
    expect(canonicalPath("a", work).canonical).toBe(join(home, "new.txt"));
    expect(canonicalPath(join(work, "a"), "/").physical).toBe(join(home, "new.txt"));
  });

  it("reports a symlink loop, however it is reached", () => {
    symlinkSync("loop2", join(work, "loop1"));
    symlinkSync("loop1", join(work, "loop2"));
    symlinkSync("self", join(work, "self"));
    for (const path of ["loop1", "loop2/x", "self", "data/../loop1"]) {
      expect(canonicalPath(path, work).loop, path).toBe(true);
    }
    expect(canonicalPath("readme.txt", work).loop).toBeUndefined();
    expect(canonicalPath("dangling", work).loop).toBeUndefined();
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
    const globToRegExp = (pattern: string) => ({
      test: (path: string) => new PathSet([pattern]).match(path) !== undefined,
    });
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

  it("reads substitutions as the commands they run, and reports broken quoting", () => {
    expect(parseCommand("echo $(id)").commands.map((c) => c.argv[0])).toEqual(["id", "echo"]);
    expect(parseCommand("echo `id`").commands.map((c) => c.argv[0])).toEqual(["id", "echo"]);
    expect(parseCommand("diff <(ls a) <(ls b)").commands.map((c) => c.argv[0])).toEqual(["ls", "ls", "diff"]);
    expect(parseCommand("echo '$(id)'").commands).toHaveLength(1);
    expect(parseCommand('eval "$X"').substitution).toBe(true);
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

  it("refuses a write through a dangling link out of the grant, and a symlink loop", () => {
    const p = resolved();
    mkdirSync(join(work, "output"), { recursive: true });
    symlinkSync(join(root, "outside", "created_via_dangling.txt"), join(work, "output", "report.txt.lnk"));
    expect(decide(p, "write_file", { path: "output/report.txt.lnk", content: "x" })).toMatchObject({
      allow: false,
      rule: "l1.path.write",
      reason: `${join(root, "outside", "created_via_dangling.txt")} is outside what write_file may write`,
    });
    // A dangling link that stays inside the grant is a plain new file.
    symlinkSync("fresh.txt", join(work, "output", "fresh.lnk"));
    expect(decide(p, "write_file", { path: "output/fresh.lnk", content: "x" })).toEqual({ allow: true });
    expect(decide(p, "read_file", { path: "loop1" })).toEqual({
      allow: false,
      rule: "l1.path.symlink-loop",
      reason: "loop1: symlink loop",
    });
  });

  it("judges every path of a list of paths", () => {
    const p = resolvePolicy(
      policy({
        read_many: { args: { paths: "path.read" }, read: ["{{cwd}}/**"] },
      } as unknown as Policy["tools"]),
      undefined,
      { cwd: work, home },
    );
    expect(decide(p, "read_many", { paths: ["readme.txt", "data/x.json"] })).toEqual({ allow: true });
    expect(decide(p, "read_many", { paths: ["readme.txt", "/etc/passwd"] })).toMatchObject({
      allow: false,
      rule: "l1.path.read",
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
    expect(decide(p, "run", { command: "ls $(cat x)" })).toMatchObject({ rule: "l1.exec" });
    expect(decide(p, "run", { command: "ls $(date)" })).toMatchObject({ rule: "l1.command.dynamic" });
    // L1 filters the environment, so an unset variable is known to be empty.
    expect(decide(p, "run", { command: "$CMD" })).toMatchObject({ rule: "l1.command.empty" });
    expect(decide(p, "run", { command: "read -r x; $x" })).toMatchObject({ rule: "l1.command.dynamic" });
  });

  it("limits SQL to the statement classes the tool may run", () => {
    const p = resolved();
    expect(decide(p, "query", { sql: "SELECT * FROM users" })).toEqual({ allow: true });
    expect(decide(p, "query", { sql: "INSERT INTO users VALUES (1)" })).toEqual({ allow: true });
    expect(decide(p, "query", { sql: "DROP TABLE users" })).toMatchObject({ rule: "l1.sql" });
    expect(decide(p, "query", { sql: "SELECT 1; DROP TABLE users" })).toMatchObject({ rule: "l1.sql" });
    expect(decide(p, "query", { sql: "CREATE TABLE t (a)" })).toMatchObject({ rule: "l1.sql" });
    expect(decide(p, "query", { sql: "-- note\nSELECT 1 /* DROP TABLE users */" })).toEqual({ allow: true });
    expect(decide(p, "query", { sql: "ATTACH 'x.db' AS x" })).toMatchObject({ rule: "l1.sql.dangerous" });
    expect(decide(p, "query", { sql: "SELECT * FROM users WHERE name = 'x" })).toMatchObject({
      rule: "l1.sql.unparsable",
      reason: expect.stringMatching(/does not parse as SQLite: an unterminated string at line 1, column 34$/),
    });
  });

  it("allows only listed network destinations", () => {
    const p = resolved();
    expect(decide(p, "fetch", { url: "https://api.example.com/v1" })).toEqual({ allow: true });
    expect(decide(p, "fetch", { url: "http://api.example.com/v1" })).toMatchObject({ rule: "l1.network" });
    expect(decide(p, "fetch", { url: "https://a.docs.example.org/x" })).toEqual({ allow: true });
    expect(decide(p, "fetch", { url: "https://evil.com/?api.example.com" })).toMatchObject({
      rule: "l1.network",
    });
    // A data: URL carries its content: no destination to allow.
    expect(decide(p, "fetch", { url: "data:text/plain;base64,aGk=" })).toEqual({ allow: true });
    expect(destinationAllowed("docs.example.org", "443", ["*.docs.example.org"])).toBe(false);
    expect(destinationAllowed("::1", "8080", ["[::1]:8080"])).toBe(true);
    // A name written absolute, with its root's dot, is the same name; two dots name none.
    expect(decide(p, "fetch", { url: "https://api.example.com./v1" })).toEqual({ allow: true });
    expect(destinationAllowed("a.docs.example.org.", "443", ["*.docs.example.org"])).toBe(true);
    expect(destinationAllowed("api.example.com..", "443", ["api.example.com"])).toBe(false);
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
    await expect(loadOverrides(join(dir, "nope"), "demo")).rejects.toThrow(
      /no such overrides file or folder/,
    );

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

describe("server roots (derive)", () => {
  it("takes folders and files from positional words, path options and key=path words", () => {
    const db = join(root, "app.db");
    writeFileSync(db, "");
    expect(
      serverRoots(
        [
          "stdio",
          work,
          "--root",
          home,
          `--allowed-dir=${join(work, "data")}`,
          `db=${db}`,
          "--db-path",
          join(root, "new.db"),
          "-v",
          "not-a-folder",
        ],
        root,
      ),
    ).toEqual({ roots: [work, home, join(work, "data")], files: [db, join(root, "new.db")], relative: [] });
    // Relative words are read against the folder derive runs in, and marked relative; a URL is never a path.
    expect(serverRoots(["work", "https://example.com/x"], root)).toEqual({
      roots: [work],
      files: [],
      relative: [work],
    });
    expect(serverRoots(["--repository", work], "/")).toEqual({ roots: [work], files: [], relative: [] });
    // A file an option names relatively, new or not: `--db state.db`.
    expect(serverRoots(["--db", "state.db", "--db-path=./x/new.db"], root)).toEqual({
      roots: [],
      files: [join(root, "state.db")],
      relative: [join(root, "state.db")],
    });
  });

  it("writes what the command line names relatively with {{cwd}}, so a draft holds in another folder", () => {
    const found = serverRoots(["work", "--db", "state.db", work], root);
    const relative = new Set(found.relative);
    expect(found.roots.map((p) => asDrafted(p, root, relative))).toEqual(["{{cwd}}/work"]);
    expect(found.files.map((p) => asDrafted(p, root, relative))).toEqual(["{{cwd}}/state.db"]);
    expect(asDrafted(root, root, new Set([root]))).toBe("{{cwd}}");
    // Named absolutely, a folder stays as it is, even below the working directory.
    expect(asDrafted(work, root, new Set())).toBe(work);
  });

  it("knows where server-memory keeps its graph, and the variable that moves it", () => {
    const pkg = join(root, "node_modules", "@modelcontextprotocol", "server-memory");
    mkdirSync(join(pkg, "dist"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "@modelcontextprotocol/server-memory" }));
    const script = join(pkg, "dist", "index.js");
    expect(knownServerData(script, {})).toEqual({
      files: [join(pkg, "dist", "memory.jsonl")],
      keepEnv: ["MEMORY_FILE_PATH"],
      notes: [expect.stringMatching(/set MEMORY_FILE_PATH to keep it elsewhere/)],
    });
    expect(knownServerData(script, { MEMORY_FILE_PATH: "/srv/mem.jsonl" }).files).toEqual(["/srv/mem.jsonl"]);
    expect(knownServerData(join(root, "other.js"), {})).toEqual({ files: [], keepEnv: [], notes: [] });
  });

  it("drafts absolute grants of the roots for path tools and the data files for the others", () => {
    const tools = [
      { name: "read_file", inputSchema: { properties: { path: { type: "string" } } } },
      {
        name: "write_file",
        inputSchema: { properties: { path: { type: "string" }, content: { type: "string" } } },
      },
      { name: "create_entities", inputSchema: { properties: { entities: { type: "array" } } } },
      { name: "read_graph", annotations: { readOnlyHint: true } },
    ];
    const draft = derivePolicy("s", tools, "s", {
      roots: [work],
      dataFiles: ["/srv/mem.jsonl"],
      keepEnv: ["MEMORY_FILE_PATH"],
    });
    expect(draft.draft).toBe(true);
    expect(draft.environment.keep).toEqual(["MEMORY_FILE_PATH"]);
    expect(draft.tools.read_file).toMatchObject({ read: [`${work}/**`], write: [] });
    expect(draft.tools.write_file).toMatchObject({ read: [`${work}/**`], write: [`${work}/**`] });
    expect(draft.tools.create_entities).toMatchObject({
      read: ["/srv/mem.jsonl*"],
      write: ["/srv/mem.jsonl*"],
    });
    expect(draft.tools.read_graph).toMatchObject({ read: ["/srv/mem.jsonl*"], write: [] });
    expect(JSON.stringify(draft)).not.toContain("{{cwd}}");
    const rootless = derivePolicy("s", tools);
    expect(rootless.tools.read_file).toMatchObject({ read: [], write: [] });
    expect(rootless.tools.read_file?.description).toMatch(/no folder was found for it/);
  });
});

describe("broad grants", () => {
  const tools = {
    read_file: { args: { path: "path.read" }, read: ["{{cwd}}/**"] },
  } as unknown as Policy["tools"];

  it("refuses {{cwd}}/** when the server starts in /, in /home, in /root or in HOME, naming the tool", () => {
    for (const [cwd, covered] of [
      ["/", "/"],
      ["/home", "/home"],
      ["/root", "/root"],
      [home, home],
    ] as const) {
      expect(() => resolvePolicy(policy(tools), undefined, { cwd, home }), cwd).toThrow(
        `policy "demo", tool "read_file": the read grant "{{cwd}}/**" (${cwd === "/" ? "" : cwd}/**) covers ${covered} entirely; refused`,
      );
    }
    // A folder beneath them is what a grant should name.
    expect(resolvePolicy(policy(tools), undefined, { cwd: work, home }).tools.get("read_file")).toBeDefined();
  });

  it("refuses any pattern that covers them, also from an override, unless it says allowBroadGrants", () => {
    // What the kernel layer grants is a pattern's fixed directory: /home/* is all of /home there.
    for (const pattern of [
      "/**",
      "/home/**",
      "/home/*/**",
      "{{home}}/**",
      "/root/**",
      "/home/*",
      "/root",
      "/*.txt",
    ]) {
      const wide = policy({ t: { args: {}, write: [pattern] } } as unknown as Policy["tools"]);
      expect(() => resolvePolicy(wide, undefined, { cwd: work, home }), pattern).toThrow(
        /tool "t": the write grant .* entirely; refused/,
      );
      expect(() =>
        resolvePolicy({ ...wide, allowBroadGrants: true }, undefined, { cwd: work, home }),
      ).not.toThrow();
    }
    for (const narrow of ["{{home}}/notes/**", "{{home}}/.gitconfig", "/etc/hosts", "/usr/share/**"]) {
      const ok = policy({ t: { args: {}, read: [narrow] } } as unknown as Policy["tools"]);
      expect(() => resolvePolicy(ok, undefined, { cwd: work, home }), narrow).not.toThrow();
    }
    const override = (extra: object) => ({
      version: 1 as const,
      server: "demo",
      overrides: [{ tool: "read_file", allow: { read: ["/**"] }, disableRules: [], reason: "r", ...extra }],
    });
    expect(() => resolvePolicy(policy(tools), override({}), { cwd: work, home })).toThrow(
      'policy "demo", tool "read_file", override 1: the read grant "/**" covers / entirely; refused (give the folders the tool needs, or set "allowBroadGrants": true in the override)',
    );
    // The policy's allowance is its own: an override that widens must say so itself.
    expect(() =>
      resolvePolicy({ ...policy(tools), allowBroadGrants: true }, override({}), { cwd: "/", home }),
    ).toThrow(/override 1/);
    expect(() =>
      resolvePolicy(policy(tools), override({ allowBroadGrants: true }), { cwd: work, home }),
    ).not.toThrow();
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
      NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/corp.pem",
      SSL_CERT_DIR: "/etc/ssl/certs",
    };
    const filtered = filterEnvironment(env, new Set(["LOG_LEVEL"]));
    expect(filtered.env).toEqual({
      HOME: "/h",
      PATH: "/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      TMPDIR: "/t",
      LOG_LEVEL: "debug",
      // The certificate authorities the client trusts: public, and needed to reach a host over TLS.
      NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/corp.pem",
      SSL_CERT_DIR: "/etc/ssl/certs",
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

describe("relativeTo", () => {
  const policy = (relativeTo?: string): Policy =>
    PolicySchema.parse({
      version: 1,
      server: "files",
      ...(relativeTo ? { relativeTo } : {}),
      tools: { read_file: { args: { path: "path.read" }, read: [`${work}/**`] } },
    });

  it("judges a relative path where the server opens it: its working directory by default", () => {
    const fromRoot = resolvePolicy(policy(), undefined, { cwd: "/" });
    expect(decide(fromRoot, "read_file", { path: "readme.txt" })).toMatchObject({ rule: "l1.path.read" });
    const inWork = resolvePolicy(policy(), undefined, { cwd: work });
    expect(decide(inWork, "read_file", { path: "readme.txt" })).toEqual({ allow: true });
  });

  it("or the folder the policy names, whatever the working directory", () => {
    const p = resolvePolicy(policy(work), undefined, { cwd: "/" });
    expect(p.relativeTo).toBe(work);
    expect(decide(p, "read_file", { path: "readme.txt" })).toEqual({ allow: true });
    expect(decide(p, "read_file", { path: "../work_evil/x" })).toMatchObject({ rule: "l1.path.read" });
    expect(() => policy("relative/dir")).toThrow(/absolute folder/);
  });
});

describe("paths as the server resolves them (issue 30)", () => {
  // mcp-server-git's tools: files relative to repo_path, refs that are names in git, never paths.
  const git = (): Policy =>
    PolicySchema.parse({
      version: 1,
      server: "git",
      tools: {
        git_add: {
          args: { repo_path: "path.write", files: "path.write" },
          base: { files: "repo_path" },
          read: [`${work}/**`],
          write: [`${work}/**`],
        },
        git_diff: { args: { repo_path: "path.read", target: "ref" }, read: [`${work}/**`] },
        get_file_contents: { args: { owner: "text", repo: "text", path: "path.remote" } },
      },
    });

  it("judges a path relative to another argument against that argument, wherever the server starts", () => {
    const p = resolvePolicy(git(), undefined, { cwd: "/" });
    expect(decide(p, "git_add", { repo_path: work, files: ["readme.txt"] })).toEqual({ allow: true });
    // Against the repository it is outside; against the working directory it would have been /etc.
    expect(decide(p, "git_add", { repo_path: work, files: ["../outside.txt"] })).toMatchObject({
      rule: "l1.path.write",
    });
    expect(decide(p, "git_add", { files: ["readme.txt"] })).toMatchObject({ rule: "l1.path.base" });
    // The base itself is judged as its own argument.
    expect(decide(p, "git_add", { repo_path: "/etc", files: ["passwd"] })).toMatchObject({
      rule: "l1.path.write",
    });
  });

  it("places a relative path against its base as the kernel walks the base: a `..` after a link climbs from the link's target", () => {
    // <work>/repo/b/c/l leads to <work>/next/w, so <work>/repo/b/c/l/.. is <work>/next (folded,
    // <work>/repo/b/c).
    mkdirSync(join(work, "repo", "b", "c"), { recursive: true });
    mkdirSync(join(work, "next", "w"), { recursive: true });
    symlinkSync(join(work, "next", "w"), join(work, "repo", "b", "c", "l"));
    symlinkSync("/etc/passwd", join(work, "next", "pw"));
    const p = resolvePolicy(git(), undefined, { cwd: "/" });
    const repo = `${work}/repo/b/c/l/..`;
    try {
      // The base lies inside, and so does a plain name in it.
      expect(decide(p, "git_add", { repo_path: repo, files: ["x"] })).toEqual({ allow: true });
      // open(os.path.join(repo, "../../z")): from <work>/next two folders up is above <work>.
      expect(decide(p, "git_add", { repo_path: repo, files: ["../../z"] })).toMatchObject({
        rule: "l1.path.write",
      });
      // A name with no `..` of its own: the link where the walk lands decides (<work>/next/pw).
      expect(decide(p, "git_add", { repo_path: repo, files: ["pw"] })).toMatchObject({
        rule: "l1.path.write",
      });
    } finally {
      rmSync(join(work, "repo"), { recursive: true });
      rmSync(join(work, "next"), { recursive: true });
    }
  });

  it("judges ~ and ~/... in HOME too, where a server expands them itself (server-filesystem)", () => {
    const p = resolvePolicy(
      PolicySchema.parse({
        version: 1,
        server: "files",
        tools: { read_file: { args: { path: "path.read" }, read: ["{{home}}/projects/**"] } },
      }),
      undefined,
      { cwd: join(home, "projects"), home },
    );
    mkdirSync(join(home, "projects"), { recursive: true });
    expect(decide(p, "read_file", { path: "notes.txt" })).toEqual({ allow: true });
    expect(decide(p, "read_file", { path: "~/projects/notes.txt" })).toEqual({ allow: true });
    expect(decide(p, "read_file", { path: "~/.ssh/id_rsa" })).toMatchObject({ rule: "l1.path.read" });
    expect(decide(p, "read_file", { path: "~" })).toMatchObject({ rule: "l1.path.read" });
    // Not a home: a file whose name starts with ~, or ~user (which server-filesystem reads literally).
    expect(decide(p, "read_file", { path: "~notes.txt" })).toEqual({ allow: true });
    const noHome = resolvePolicy(
      PolicySchema.parse({
        version: 1,
        server: "files",
        tools: { read_file: { args: { path: "path.read" }, read: [`${home}/projects/**`] } },
      }),
      undefined,
      { cwd: join(home, "projects") },
    );
    expect(decide(noHome, "read_file", { path: "~/x" })).toMatchObject({ rule: "l1.path.home" });
  });

  it("refuses a ref that git would read as an option, and treats a remote path as no local file", () => {
    const p = resolvePolicy(git(), undefined, { cwd: work });
    expect(decide(p, "git_diff", { repo_path: work, target: "main~2" })).toEqual({ allow: true });
    expect(decide(p, "git_diff", { repo_path: work, target: "--output=/tmp/x" })).toMatchObject({
      rule: "l1.ref.option",
    });
    expect(decide(p, "get_file_contents", { owner: "o", repo: "r", path: "/etc/passwd" })).toEqual({
      allow: true,
    });
  });

  it("refuses a relative path where the folder the server reads it against is unknown, never an absolute one", () => {
    const unknown = PolicySchema.parse({
      version: 1,
      server: "files",
      relativePaths: "refuse",
      tools: { read_file: { args: { path: "path.read" }, read: [`${work}/**`] } },
    });
    const p = resolvePolicy(unknown, undefined, { cwd: work });
    expect(decide(p, "read_file", { path: "readme.txt" })).toMatchObject({ rule: "l1.path.relative" });
    expect(decide(p, "read_file", { path: join(work, "readme.txt") })).toEqual({ allow: true });
  });

  it("checks that a base names path arguments of the tool", () => {
    expect(() =>
      PolicySchema.parse({
        version: 1,
        server: "git",
        tools: { git_add: { args: { files: "path.write", repo: "text" }, base: { files: "repo" } } },
      }),
    ).toThrow(/repo.{0,2} must be a path argument/);
  });

  it("derives refs, remote paths and paths relative to the repository from mcp-server-git's and a GitHub server's schemas", () => {
    const schema = (properties: Record<string, unknown>, required: string[]) => ({
      type: "object",
      properties,
      required,
    });
    const s = { type: "string" };
    const tools = [
      {
        name: "git_add",
        inputSchema: schema({ repo_path: s, files: { type: "array", items: s } }, ["repo_path", "files"]),
      },
      {
        name: "git_diff",
        inputSchema: schema({ repo_path: s, target: s, context_lines: { type: "integer" } }, [
          "repo_path",
          "target",
        ]),
      },
      {
        name: "git_checkout",
        inputSchema: schema({ repo_path: s, branch_name: s }, ["repo_path", "branch_name"]),
      },
      {
        name: "get_file_contents",
        inputSchema: schema({ owner: s, repo: s, path: s, branch: s }, ["owner", "repo", "path"]),
      },
      { name: "run_query", inputSchema: schema({ sql: s }, ["sql"]) },
      { name: "read_file", inputSchema: schema({ path: s }, ["path"]) },
    ];
    const draft = derivePolicy("s", tools, "s", { roots: [work] });
    expect(draft.tools.git_add).toMatchObject({
      args: { repo_path: "path.write", files: "path.write" },
      base: { files: "repo_path" },
    });
    expect(draft.tools.git_diff?.args).toEqual({
      repo_path: "path.read",
      target: "ref",
      context_lines: "scalar",
    });
    expect(draft.tools.git_checkout?.args).toEqual({ repo_path: "path.write", branch_name: "ref" });
    expect(draft.tools.get_file_contents?.args).toEqual({
      owner: "text",
      repo: "text",
      path: "path.remote",
      branch: "ref",
    });
    // The number of statements matters only where SQL runs; a base only where one is found.
    expect(draft.tools.run_query?.sqlStatements).toBe("many");
    expect(draft.tools.read_file).not.toHaveProperty("sqlStatements");
    expect(draft.tools.read_file).not.toHaveProperty("base");
    // The draft parses, with the schema's defaults filled in.
    expect(PolicySchema.parse(draft).tools.read_file?.sqlStatements).toBe("many");
    // The tool a derive asks where relative paths go: one path read, nothing else needed.
    expect(probeTool(tools)).toEqual({ tool: "read_file", arg: "path" });
  });
});
