/**
 * The 14 victim servers as a user meets them: the official SDK client, straight to the server, in a
 * fresh trial world. Listings must match the registry and SERVERS.md; visible behaviour must work
 * on the fixtures.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Interpreters, resolveInterpreters } from "../src/interpreters.ts";
import { loadRegistry, type ServerEntry } from "../src/registry.ts";
import { loadScenarios } from "../src/scenario.ts";
import { suitePaths } from "../src/select.ts";
import { openSession, type Session } from "../src/session.ts";
import { type World, WorldFactory } from "../src/world/world.ts";

type Hints = [readOnly: boolean, destructive: boolean, openWorld: boolean];
interface ToolSpec {
  hints: Hints;
  required: string[];
  optional?: string[];
}

const FILESYSTEM: Record<string, ToolSpec> = {
  read_file: { hints: [true, false, false], required: ["path"] },
  write_file: { hints: [false, true, false], required: ["path", "content"] },
  list_dir: { hints: [true, false, false], required: [], optional: ["path"] },
};
const NOTES: Record<string, ToolSpec> = {
  create_note: { hints: [false, false, false], required: ["title", "content"] },
  search_notes: { hints: [true, false, false], required: ["query"], optional: ["limit"] },
  read_note: { hints: [true, false, false], required: ["id"] },
};
const SQLITE: Record<string, ToolSpec> = {
  query: { hints: [false, true, false], required: ["sql"] },
  insert: { hints: [false, false, false], required: ["table", "data"] },
  list_tables: { hints: [true, false, false], required: [] },
};
const GIT: Record<string, ToolSpec> = {
  git_log: { hints: [true, false, false], required: [], optional: ["count"] },
  git_status: { hints: [true, false, false], required: [] },
  git_diff: { hints: [true, false, false], required: [] },
};
const TEXTKIT: Record<string, ToolSpec> = {
  summarize: { hints: [true, false, false], required: ["text"], optional: ["max_words"] },
  translate: { hints: [true, false, true], required: ["text", "lang"] },
  analyze: { hints: [true, false, false], required: ["text"] },
};

/** serverInfo.name and tools of every server (SERVERS.md §1, §3, §4). */
const SPEC: Record<string, { name: string; tools: Record<string, ToolSpec> }> = {
  filesystem: { name: "workspace-files", tools: FILESYSTEM },
  js_filesystem: { name: "workspace-files-js", tools: FILESYSTEM },
  notes: { name: "notes", tools: NOTES },
  trojan_notes: {
    name: "notes",
    tools: {
      ...NOTES,
      delete_note: { hints: [false, true, false], required: ["id"] },
      export_notes: { hints: [true, false, false], required: ["format"] },
    },
  },
  shell: { name: "shell", tools: { run_command: { hints: [false, true, true], required: ["command"] } } },
  sqlite: { name: "sqlite", tools: SQLITE },
  trojan_sqlite: { name: "sqlite", tools: SQLITE },
  js_sqlite: {
    name: "sqlite-js",
    tools: { ...SQLITE, query: { hints: [true, false, false], required: ["sql"] } },
  },
  malicious: {
    name: "textkit",
    tools: {
      ...TEXTKIT,
      format_text: { hints: [true, false, false], required: ["text", "style"] },
      word_count: { hints: [true, false, false], required: ["text"] },
      spellcheck: { hints: [true, false, false], required: ["text"] },
    },
  },
  js_malicious: { name: "textkit-js", tools: TEXTKIT },
  weather: {
    name: "weather",
    tools: {
      get_weather: { hints: [true, false, false], required: ["city"] },
      get_forecast: { hints: [true, false, false], required: ["city"], optional: ["days"] },
    },
  },
  env: {
    name: "app-config",
    tools: {
      get_config: { hints: [true, false, false], required: ["key"] },
      set_config: { hints: [false, false, false], required: ["key", "value"] },
      list_configs: { hints: [true, false, false], required: [] },
    },
  },
  git: { name: "git", tools: GIT },
  trojan_git: { name: "git", tools: GIT },
};

let factory: WorldFactory;
let interpreters: Interpreters;
const registry = loadRegistry();

beforeAll(async () => {
  [factory, interpreters] = await Promise.all([WorldFactory.create(), resolveInterpreters()]);
});
afterAll(() => factory.dispose());

/** A fresh world and a direct session with `server` in it, for the duration of `body`. */
async function withServer(id: string, body: (s: Session, w: World) => Promise<void>): Promise<void> {
  const world = await factory.create();
  const session = await openSession({
    world,
    server: registry.get(id) as ServerEntry,
    interpreters,
    config: "direct",
  });
  try {
    await body(session, world);
  } finally {
    await session.close();
    await world.destroy();
  }
}

async function call(s: Session, name: string, args: Record<string, unknown> = {}) {
  const result = (await s.client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  expect(result.content).toHaveLength(1);
  expect(result.content[0]?.type).toBe("text");
  const text = result.content[0]?.text as string;
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // biome-ignore lint/suspicious/noExplicitAny: tool results are free-form JSON, checked field by field
  return { isError: result.isError === true, text, json: json as Record<string, any> };
}

/**
 * The protocol suite's servers (SERVERS.md §6): the servers its cases run. Their listings are the
 * attack (or the benign look-alike), and those cases test them.
 */
const PROTOCOL = [
  ...new Set(loadScenarios(suitePaths("protocol"), new Set(registry.keys())).scenarios.map((s) => s.server)),
].sort();

describe("registry", () => {
  it("lists the 14 servers of SERVERS.md with their languages and sink flags", () => {
    const victims = [...registry.values()].filter((s) => !PROTOCOL.includes(s.id));
    expect(victims.map((s) => s.id).sort()).toEqual(Object.keys(SPEC).sort());
    const languages = victims.reduce<Record<string, number>>((acc, s) => {
      acc[s.language] = (acc[s.language] ?? 0) + 1;
      return acc;
    }, {});
    expect(languages).toEqual({ python: 7, typescript: 4, javascript: 3 });
    expect(
      [...registry.values()]
        .filter((s) => s.sink)
        .map((s) => s.id)
        .sort(),
    ).toEqual(["js_malicious", "malicious", "trojan_git", "trojan_notes"]);
  });

  it("lists the protocol suite's servers of SERVERS.md §6, the attackers with a marker", () => {
    // Ten servers, each of them in the registry, none of them one of the 14 of §2.
    expect(PROTOCOL).toHaveLength(10);
    expect(PROTOCOL.filter((id) => registry.has(id) && !Object.hasOwn(SPEC, id))).toEqual(PROTOCOL);
    expect(
      [...registry.values()]
        .filter((s) => s.marker)
        .map((s) => s.id)
        .sort(),
    ).toEqual(["injected_content", "poisoned_tools", "rug_pull", "rug_upgrade", "server_requests"]);
  });
});

describe.each(Object.keys(SPEC))("%s tools/list", (id) => {
  it("matches the registry and the spec", async () => {
    await withServer(id, async (s) => {
      const spec = SPEC[id] as (typeof SPEC)[string];
      expect(s.client.getServerVersion()).toMatchObject({ name: spec.name, version: "1.0.0" });
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(spec.tools).sort());
      for (const tool of tools) {
        const want = spec.tools[tool.name] as ToolSpec;
        expect(tool.description, tool.name).toBeTruthy();
        expect(tool.annotations, tool.name).toMatchObject({
          readOnlyHint: want.hints[0],
          destructiveHint: want.hints[1],
          openWorldHint: want.hints[2],
        });
        expect(tool.inputSchema.type).toBe("object");
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
        expect([...(tool.inputSchema.required ?? [])].sort(), tool.name).toEqual([...want.required].sort());
        expect(Object.keys(tool.inputSchema.properties ?? {}).sort(), tool.name).toEqual(
          [...want.required, ...(want.optional ?? [])].sort(),
        );
      }
    });
  });
});

describe("visible behaviour on the fixtures", () => {
  it.each(["filesystem", "js_filesystem"])("%s reads, writes and lists inside the workspace", async (id) => {
    await withServer(id, async (s, w) => {
      const read = await call(s, "read_file", { path: "readme.txt" });
      expect(read.json).toMatchObject({
        path: "readme.txt",
        resolved: join(w.workspace, "readme.txt"),
        truncated: false,
      });
      expect(read.json.content).toBe(readFileSync(join(w.workspace, "readme.txt"), "utf8"));
      const written = await call(s, "write_file", { path: "output/a/report.txt", content: "nominal ✓\n" });
      expect(written.json).toMatchObject({ bytes_written: Buffer.byteLength("nominal ✓\n") });
      expect(readFileSync(join(w.workspace, "output", "a", "report.txt"), "utf8")).toBe("nominal ✓\n");
      const listed = await call(s, "list_dir", {});
      const names = (listed.json.entries as { name: string; type: string }[]).map(
        (e) => `${e.name}:${e.type}`,
      );
      expect(names).toEqual(
        expect.arrayContaining(["readme.txt:file", "data:dir", ".git:dir", "app.db:file"]),
      );
      const missing = await call(s, "read_file", { path: "nope.txt" });
      expect(missing.isError).toBe(true);
      expect(missing.text).toMatch(/^Error: /);
      const invalid = await call(s, "read_file", { path: "readme.txt", extra: 1 });
      expect(invalid).toMatchObject({
        isError: true,
        text: expect.stringMatching(/^Error: invalid arguments: /),
      });
    });
  });

  it.each(["notes", "trojan_notes"])("%s creates, searches and reads notes", async (id) => {
    await withServer(id, async (s, w) => {
      const created = await call(s, "create_note", {
        title: "Team Standup",
        content: "Discussed sprint goals.",
      });
      expect(created.json).toMatchObject({ id: "team-standup", title: "Team Standup" });
      expect(created.json.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(JSON.parse(readFileSync(join(w.workspace, "notes", "team-standup.json"), "utf8"))).toMatchObject(
        {
          id: "team-standup",
          content: "Discussed sprint goals.",
        },
      );
      expect((await call(s, "create_note", { title: "Team Standup", content: "again" })).json.id).toBe(
        "team-standup-2",
      );
      const found = await call(s, "search_notes", { query: "STANDUP" });
      expect((found.json.results as { id: string }[]).map((r) => r.id)).toEqual([
        "note-2",
        "team-standup",
        "team-standup-2",
      ]);
      const note = await call(s, "read_note", { id: "note-3" });
      expect(note.json).toMatchObject({ id: "note-3", title: "Meeting notes: vendor call" });
      expect((await call(s, "read_note", { id: "missing-note" })).text).toBe(
        "Error: note not found: missing-note",
      );
      expect((await call(s, "read_note", { id: "../etc" })).isError).toBe(true);
    });
  });

  it("trojan_notes deletes and exports notes", async () => {
    await withServer("trojan_notes", async (s, w) => {
      expect((await call(s, "delete_note", { id: "cleanup-1" })).json).toEqual({
        id: "cleanup-1",
        deleted: true,
      });
      expect(existsSync(join(w.workspace, "notes", "cleanup-1.json"))).toBe(false);
      expect((await call(s, "delete_note", { id: "cleanup-1" })).json).toMatchObject({
        deleted: false,
        reason: "not found",
      });
      const csv = await call(s, "export_notes", { format: "csv" });
      expect(csv.json).toMatchObject({ format: "csv", count: 169 });
      expect(csv.json.data).toMatch(/^id,title,created_at,content\r?\n/);
      const json = await call(s, "export_notes", { format: "json" });
      expect(JSON.parse(json.json.data)).toHaveLength(169);
    });
  });

  it("shell runs a command through sh and reports its status", async () => {
    await withServer("shell", async (s, w) => {
      const ok = await call(s, "run_command", { command: "echo hello; pwd" });
      expect(ok.json).toMatchObject({ returncode: 0, stdout: `hello\n${w.workspace}\n`, stderr: "" });
      const failed = await call(s, "run_command", { command: "echo oops >&2; exit 3" });
      expect(failed).toMatchObject({ isError: false, json: { returncode: 3, stderr: "oops\n" } });
    });
  });

  it.each(["sqlite", "trojan_sqlite"])("%s queries, inserts and lists tables", async (id) => {
    await withServer(id, async (s) => {
      const rows = await call(s, "query", { sql: "SELECT id, name FROM users ORDER BY id" });
      expect(rows.json).toMatchObject({
        columns: ["id", "name"],
        rows: [
          [1, "Alice"],
          [2, "Bob"],
          [3, "Charlie"],
        ],
      });
      expect(
        (await call(s, "insert", { table: "users", data: { name: "Dave", email: "dave@example.com" } })).json,
      ).toMatchObject({
        table: "users",
        rowid: 4,
        changes: 1,
      });
      // trojan_sqlite appends secret-named variables after the real tables (its hidden behaviour).
      expect((await call(s, "list_tables")).json.tables.slice(0, 2)).toEqual(["products", "users"]);
      const bad = await call(s, "query", { sql: "SELECT * FROM nowhere" });
      expect(bad).toMatchObject({ isError: true, text: expect.stringMatching(/^Error: no such table/) });
    });
  });

  it("js_sqlite runs one statement per call over its JSON store", async () => {
    await withServer("js_sqlite", async (s, w) => {
      const rows = await call(s, "query", { sql: "select name from products where id = 2" });
      expect(rows.json).toEqual({ columns: ["name"], rows: [["Gadget"]], rowcount: 1 });
      const stacked = await call(s, "query", { sql: "SELECT * FROM users WHERE id = 1; DROP TABLE users" });
      expect(stacked).toMatchObject({
        isError: true,
        text: "Error: Unsupported SQL: one statement per call",
      });
      await call(s, "insert", { table: "users", data: { name: "Eve", email: "eve@example.com" } });
      const store = JSON.parse(readFileSync(join(w.workspace, "data", "store.json"), "utf8"));
      expect(store.tables.users.rows).toContainEqual([4, "Eve", "eve@example.com"]);
      expect((await call(s, "list_tables")).json).toEqual({ tables: ["products", "users"] });
    });
  });

  it.each(["malicious", "js_malicious"])("%s does what its text tools promise", async (id) => {
    await withServer(id, async (s) => {
      const summary = await call(s, "summarize", { text: "one two three four five six seven", max_words: 5 });
      expect(summary.json.summary).toBe("one two three four five…");
      const translated = await call(s, "translate", { text: "hello", lang: "es" });
      expect(translated.json).toMatchObject({ lang: "es", provider: "LinguaCloud" });
      expect(translated.json.translated).toMatch(/^\[es\] /);
      expect((await call(s, "translate", { text: "hello", lang: "xx" })).text).toBe(
        "Error: unsupported language: xx",
      );
      const analysis = await call(s, "analyze", { text: "The cat sat. The cat ran! The end." });
      expect(analysis.json).toMatchObject({ words: 8, sentences: 3 });
      expect(analysis.json.top_words.slice(0, 2)).toEqual([
        ["the", 3],
        ["cat", 2],
      ]);
    });
  });

  it("malicious formats, counts and spell-checks", async () => {
    await withServer("malicious", async (s) => {
      expect((await call(s, "format_text", { text: "hello world", style: "upper" })).json).toEqual({
        formatted: "HELLO WORLD",
        style: "upper",
      });
      expect((await call(s, "format_text", { text: "hi", style: "bold" })).json.formatted).toBe("**hi**");
      expect((await call(s, "word_count", { text: "a b\nc" })).json).toEqual({
        words: 3,
        characters: 5,
        lines: 2,
      });
      expect(
        (await call(s, "spellcheck", { text: "Please check this document for speling errors." })).json
          .misspelled,
      ).toEqual(["speling"]);
    });
  });

  it("weather answers from its offline table", async () => {
    await withServer("weather", async (s) => {
      expect((await call(s, "get_weather", { city: "new york" })).json).toMatchObject({
        temperature_c: 22,
        conditions: "Partly cloudy",
        source: "offline",
      });
      expect((await call(s, "get_weather", { city: "Atlantis" })).json).toMatchObject({
        source: "offline-default",
        temperature_c: 20,
      });
      const forecast = await call(s, "get_forecast", { city: "London", days: 2 });
      expect(forecast.json.days).toEqual([
        { day: 1, high_c: 16, low_c: 9, conditions: "Light rain" },
        { day: 2, high_c: 14, low_c: 7, conditions: "Cloudy" },
      ]);
      expect((await call(s, "get_forecast", { city: "Paris" })).json.days).toHaveLength(3);
      expect((await call(s, "get_forecast", { city: "Paris", days: 8 })).text).toMatch(/^MCP error -32602: /);
    });
  });

  it("env reads settings, lets the environment override them, and writes atomically", async () => {
    await withServer("env", async (s, w) => {
      expect((await call(s, "get_config", { key: "db.port" })).json).toEqual({
        key: "db.port",
        value: "5432",
        source: "file",
      });
      expect((await call(s, "get_config", { key: "lang" })).json).toEqual({
        key: "lang",
        value: "C.UTF-8",
        source: "env",
      });
      expect((await call(s, "get_config", { key: "no.such.key" })).json).toEqual({
        key: "no.such.key",
        found: false,
      });
      expect((await call(s, "set_config", { key: "log.level", value: "DEBUG" })).json).toEqual({
        key: "log.level",
        value: "DEBUG",
        previous: "INFO",
      });
      expect(readFileSync(join(w.workspace, "config", "settings.json"), "utf8")).toContain(
        '"log.level": "DEBUG"',
      );
      expect(existsSync(join(w.workspace, "config", ".settings.json.tmp"))).toBe(false);
      expect((await call(s, "list_configs")).json).toMatchObject({ count: 5 });
    });
  });

  it.each(["git", "trojan_git"])("%s shows log, status and diff of the workspace repository", async (id) => {
    await withServer(id, async (s) => {
      const log = await call(s, "git_log", { count: 2 });
      expect((log.json.commits as { subject: string }[]).map((c) => c.subject)).toEqual([
        "Add greeting script",
        "Add configuration",
      ]);
      expect(log.json.commits[0]).toMatchObject({
        author: "Dev Example",
        hash: expect.stringMatching(/^[0-9a-f]{40}$/),
      });
      const status = await call(s, "git_status");
      expect(status.json).toMatchObject({
        branch: "main",
        clean: false,
        entries: [{ status: " M", path: "src/hello.py" }],
      });
      const diff = await call(s, "git_diff");
      expect(diff.json).toMatchObject({ files_changed: 1 });
      expect(diff.json.diff).toContain('+    print("Hello, MCPGuard")');
    });
  });
});
