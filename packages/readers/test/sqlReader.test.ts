import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tokenize } from "../src/sqlLexer.ts";
import { readSqlite, type SqlStatementRead } from "../src/sqlReader.ts";

/** The statements of a text that must read. */
function read(sql: string): SqlStatementRead[] {
  const reading = readSqlite(sql);
  if (!reading.ok) throw new Error(`${sql}: ${reading.reason}`);
  return reading.statements;
}
const reason = (sql: string) => {
  const reading = readSqlite(sql);
  return reading.ok ? undefined : reading.reason;
};
/** Each statement as `VERB` followed by the verbs of the statements inside it. */
const verbs = (sql: string) => read(sql).map((s) => [s.head.verb, ...s.inner.map((h) => h.verb)].join(" > "));
const tokens = (sql: string) => tokenize(sql).map((t) => `${t.type}:${t.text}`);

describe("tokenize: SQLite's tokenizer rules", () => {
  it.each([
    ["SELECT -- DROP TABLE t\n1", ["word:SELECT", "number:1"]],
    ["SELECT /* ; DROP */ 1", ["word:SELECT", "number:1"]],
    ["SELECT 1 /* runs to the end; DROP TABLE t", ["word:SELECT", "number:1"]],
    ["SELECT 1 /*", ["word:SELECT", "number:1", "op:/", "op:*"]],
    ["SELECT 'It''s; DROP'", ["word:SELECT", "string:'It''s; DROP'"]],
    [
      'SELECT "a""b", [c d], `e``f`',
      ["word:SELECT", 'quoted:"a""b"', "op:,", "quoted:[c d]", "op:,", "quoted:`e``f`"],
    ],
    ["SELECT x'0aFF', X''", ["word:SELECT", "blob:x'0aFF'", "op:,", "blob:X''"]],
    [
      "1e5 .5 5. 0x1F 1_000 1.5e-3 3E+2",
      ["number:1e5", "number:.5", "number:5.", "number:0x1F", "number:1_000", "number:1.5e-3", "number:3E+2"],
    ],
    [
      "? ?12 :a @b $c #d $e::f $g(x;y)",
      [
        "variable:?",
        "variable:?12",
        "variable::a",
        "variable:@b",
        "variable:$c",
        "variable:#d",
        "variable:$e::f",
        "variable:$g(x;y)",
      ],
    ],
    [
      "a||b->c->>d<<e>>f<=g>=h==i!=j<>k",
      [
        "word:a",
        "op:||",
        "word:b",
        "op:->",
        "word:c",
        "op:->>",
        "word:d",
        "op:<<",
        "word:e",
        "op:>>",
        "word:f",
        "op:<=",
        "word:g",
        "op:>=",
        "word:h",
        "op:==",
        "word:i",
        "op:!=",
        "word:j",
        "op:<>",
        "word:k",
      ],
    ],
    ["a$b _c é", ["word:a$b", "word:_c", "word:é"]],
    ["\ufeffSELECT\t1\f", ["word:SELECT", "number:1"]],
  ])("%j", (sql, expected) => {
    expect(tokens(sql)).toEqual(expected);
  });

  it("marks keywords, never quoted names, and folds case in ASCII only as SQLite does", () => {
    expect(tokenize('select "select" [from] ſelect').map((t) => t.keyword)).toEqual([
      "SELECT",
      undefined,
      undefined,
      undefined,
    ]);
    // ſ upper-cases to S in JavaScript, not in SQLite: no keyword, no statement.
    expect(reason("ſelect 1")).toMatch(/^expected a statement but found "ſelect"/);
  });

  it("takes WINDOW, OVER and FILTER for keywords only where SQLite's tokenizer does", () => {
    const kw = (sql: string, word: string) => tokenize(sql).find((t) => t.text === word)?.keyword;
    expect(kw("SELECT sum(a) OVER (ORDER BY a) FROM t", "OVER")).toBe("OVER");
    expect(kw("SELECT sum(a) OVER w FROM t WINDOW w AS (ORDER BY a)", "WINDOW")).toBe("WINDOW");
    expect(kw("SELECT count(*) FILTER (WHERE a) FROM t", "FILTER")).toBe("FILTER");
    expect(kw("SELECT over, filter FROM t window", "over")).toBeUndefined();
    expect(kw("SELECT over, filter FROM t window", "filter")).toBeUndefined();
    expect(kw("SELECT over, filter FROM t window", "window")).toBeUndefined();
  });

  it.each([
    ["SELECT 'abc", "an unterminated string at line 1, column 8"],
    ['SELECT "abc', "an unterminated quoted name at line 1, column 8"],
    ["SELECT [abc", "an unterminated quoted name at line 1, column 8"],
    ["SELECT `abc", "an unterminated quoted name at line 1, column 8"],
    ["SELECT x'ABC'", "a malformed blob literal at line 1, column 8"],
    ["SELECT x'GG'", "a malformed blob literal at line 1, column 8"],
    ["SELECT 12abc", "a malformed number at line 1, column 8"],
    ["SELECT 1__0", "a malformed number at line 1, column 9"],
    ["SELECT 0x", "a malformed number at line 1, column 8"],
    ["SELECT $a(b c)", "a malformed parameter at line 1, column 8"],
    ["SELECT :", "a parameter without a name at line 1, column 8"],
    // SQLite 3.40: near "#1": syntax error (its nested statements' registers); the differential test found it.
    ["SELECT #1", "a register (#N), not a parameter at line 1, column 8"],
    ["SELECT 1 LIMIT #2", "a register (#N), not a parameter at line 1, column 16"],
    ["SELECT !1", 'the character "!", which SQLite does not read at line 1, column 8'],
    ["SELECT 1 ^ 2", 'the character "^", which SQLite does not read at line 1, column 10'],
    // A vertical tab continues whitespace, and cannot begin it.
    ["SELECT\u000b1", "the character U+000B, which SQLite does not read at line 1, column 7"],
    ["SELECT 1;\0DROP TABLE t", "a NUL character (SQLite would read no further) at line 1, column 10"],
    ["SELECT 1,\n  'x", "an unterminated string at line 2, column 3"],
  ])("refuses %j: %s", (sql, expected) => {
    expect(reason(sql)).toBe(expected);
  });
});

describe("readSqlite: every statement form", () => {
  it.each([
    ["SELECT a FROM t", "SELECT"],
    ["VALUES (1, 2), (3, 4)", "VALUES"],
    ["SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 EXCEPT VALUES (4)", "SELECT > SELECT > SELECT"],
    ["EXPLAIN SELECT 1", "EXPLAIN > SELECT"],
    ["EXPLAIN QUERY PLAN SELECT * FROM t", "EXPLAIN > SELECT"],
    ["WITH x AS (SELECT 1) SELECT * FROM x", "SELECT > SELECT"],
    [
      "WITH RECURSIVE n(i) AS NOT MATERIALIZED (VALUES (1) UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
      "SELECT > SELECT",
    ],
    ["WITH x AS MATERIALIZED (SELECT 1) INSERT INTO t SELECT * FROM x", "INSERT > SELECT > SELECT"],
    ["INSERT INTO t (a, b) VALUES (1, 2)", "INSERT"],
    ["INSERT OR IGNORE INTO main.t DEFAULT VALUES", "INSERT"],
    ["REPLACE INTO t VALUES (1)", "REPLACE"],
    [
      "INSERT INTO t AS x (id) VALUES (1) ON CONFLICT (id) WHERE id > 0 DO UPDATE SET a = excluded.a WHERE x.a < 9 ON CONFLICT DO NOTHING RETURNING *",
      "INSERT",
    ],
    [
      "UPDATE OR ROLLBACK t AS x INDEXED BY i SET a = 1, (b, c) = (2, 3) FROM u WHERE x.id = u.id RETURNING a",
      "UPDATE",
    ],
    ["DELETE FROM main.t AS x NOT INDEXED WHERE id IN (SELECT id FROM u) RETURNING id", "DELETE > SELECT"],
    [
      "CREATE TABLE IF NOT EXISTS main.t (id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT NOT NULL DEFAULT 'x' COLLATE NOCASE, b REAL CHECK (b > 0) REFERENCES u (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, c AS (a || b) STORED, UNIQUE (a, b) ON CONFLICT REPLACE, FOREIGN KEY (c) REFERENCES u) WITHOUT ROWID, STRICT",
      "CREATE TABLE",
    ],
    ["CREATE TEMP TABLE t AS SELECT * FROM u", "CREATE TABLE > SELECT"],
    [
      "CREATE UNIQUE INDEX IF NOT EXISTS i ON t (a COLLATE NOCASE DESC, lower(b)) WHERE a IS NOT NULL",
      "CREATE INDEX",
    ],
    ["CREATE TEMPORARY VIEW IF NOT EXISTS v (x) AS SELECT a FROM t", "CREATE VIEW > SELECT"],
    [
      "CREATE TRIGGER IF NOT EXISTS tr BEFORE UPDATE OF a, b ON t FOR EACH ROW WHEN new.a > 0 BEGIN UPDATE u SET a = new.a; INSERT INTO u SELECT * FROM t; DELETE FROM u WHERE a = old.a; SELECT RAISE(ABORT, 'no'); END",
      "CREATE TRIGGER > UPDATE > INSERT > SELECT > DELETE > SELECT",
    ],
    ["CREATE VIRTUAL TABLE IF NOT EXISTS d USING fts5(body, tokenize = 'porter')", "CREATE VIRTUAL TABLE"],
    ["ALTER TABLE main.t ADD COLUMN c TEXT DEFAULT 'x'", "ALTER TABLE"],
    ["ALTER TABLE t ADD c", "ALTER TABLE"],
    ["ALTER TABLE t RENAME TO u", "ALTER TABLE"],
    ["ALTER TABLE t RENAME COLUMN a TO b", "ALTER TABLE"],
    ["ALTER TABLE t RENAME a TO b", "ALTER TABLE"],
    ["ALTER TABLE t DROP COLUMN a", "ALTER TABLE"],
    ["ALTER TABLE t DROP a", "ALTER TABLE"],
    ["DROP TABLE IF EXISTS main.t", "DROP TABLE"],
    ["DROP INDEX i", "DROP INDEX"],
    ["DROP VIEW v", "DROP VIEW"],
    ["DROP TRIGGER IF EXISTS tr", "DROP TRIGGER"],
    ["ATTACH DATABASE 'x.db' AS x KEY 'k'", "ATTACH"],
    ["ATTACH 'x.db' AS x", "ATTACH"],
    ["DETACH DATABASE x", "DETACH"],
    ["DETACH x", "DETACH"],
    ["VACUUM", "VACUUM"],
    ["VACUUM main INTO 'copy.db'", "VACUUM"],
    ["PRAGMA main.journal_mode = WAL", "PRAGMA"],
    ["PRAGMA user_version = -1", "PRAGMA"],
    ["PRAGMA table_info('t')", "PRAGMA"],
    ["ANALYZE main.t", "ANALYZE"],
    ["REINDEX", "REINDEX"],
    ["BEGIN IMMEDIATE TRANSACTION", "BEGIN"],
    ["COMMIT TRANSACTION", "COMMIT"],
    ["END", "COMMIT"],
    ["ROLLBACK TRANSACTION TO SAVEPOINT s", "ROLLBACK"],
    ["SAVEPOINT s", "SAVEPOINT"],
    ["RELEASE SAVEPOINT s", "RELEASE"],
    ["RELEASE s", "RELEASE"],
  ])("%s", (sql, expected) => {
    expect(verbs(sql)).toEqual([expected]);
  });

  it("records what a judgment needs: targets, modules, pragmas, actions, calls and tables", () => {
    const [insert] = read(
      "INSERT INTO main.\"Users\" (a) SELECT readfile(x) FROM u JOIN fsdir('.') AS f, 'v'",
    );
    expect(insert?.head).toMatchObject({ verb: "INSERT", target: "users" });
    expect(insert?.calls.map((c) => c.name)).toEqual(["readfile", "fsdir"]);
    expect(insert?.tables.map((t) => t.name)).toEqual(["users", "u", "fsdir", "v"]);
    expect(read("CREATE VIRTUAL TABLE z USING ZipFile('a.zip')")[0]?.head.module).toBe("zipfile");
    expect(read("PRAGMA main.Writable_Schema(1)")[0]?.head.pragma).toEqual({
      name: "writable_schema",
      valued: true,
    });
    expect(read("PRAGMA journal_mode")[0]?.head.pragma).toEqual({ name: "journal_mode", valued: false });
    expect(read("ALTER TABLE t DROP a")[0]?.head.action).toBe("DROP COLUMN");
    expect(read("VACUUM INTO 'x'")[0]?.head.into).toBe(true);
    expect(read("SELECT 1 WHERE 1 IN t2")[0]?.tables.map((t) => t.name)).toEqual(["t2"]);
    expect(read("CREATE VIRTUAL TABLE f USING fts5(x, content='Src')")[0]?.tables.map((t) => t.name)).toEqual(
      ["f", "src"],
    );
  });

  it("takes keywords for names where SQLite does, and for keywords where they fit", () => {
    expect(verbs('SELECT key, replace, temp, "select" FROM t AS left')).toEqual(["SELECT"]);
    expect(verbs("CREATE TABLE view (trigger, begin, end)")).toEqual(["CREATE TABLE"]);
    expect(verbs("SELECT a desc FROM t, u key")).toEqual(["SELECT"]);
    expect(reason("CREATE TABLE if (a)")).toMatch(/^expected NOT but found "\("/);
    expect(reason("SELECT cast FROM t")).toMatch(/^expected "\(" but found "FROM"/);
    expect(reason("SELECT 1 left")).toMatch(/^expected the end of the statement but found "left"/);
  });
});

describe("readSqlite: where statements end", () => {
  it("splits at ; outside strings, comments, quoted names and parameters", () => {
    expect(
      verbs("SELECT 'a;b'; SELECT \"c;d\" FROM [e;f] -- ; DROP TABLE t\n; /* ; */ DELETE FROM t"),
    ).toEqual(["SELECT", "SELECT", "DELETE"]);
    expect(verbs("SELECT $a(x;DROP) FROM t")).toEqual(["SELECT"]);
    expect(verbs(";;SELECT 1;;")).toEqual(["SELECT"]);
    expect(read("  -- nothing\n/* at all */ ;")).toEqual([]);
  });

  it("reads a trigger's body to its END, CASE ... END and strings inside", () => {
    expect(
      verbs(
        "CREATE TRIGGER tr AFTER INSERT ON t WHEN CASE WHEN new.a THEN 1 END BEGIN UPDATE t SET a = CASE WHEN a THEN 'END;' END; SELECT 'x;END'; END; DROP TABLE t",
      ),
    ).toEqual(["CREATE TRIGGER > UPDATE > SELECT", "DROP TABLE"]);
    expect(verbs("EXPLAIN CREATE TEMP TRIGGER tr DELETE ON t BEGIN DELETE FROM u; END")).toEqual([
      "EXPLAIN > CREATE TRIGGER > DELETE",
    ]);
  });

  it.each([
    ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u END", 'expected ";"'],
    ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u;", "expected INSERT, UPDATE, DELETE or SELECT"],
    ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN END", "expected INSERT, UPDATE, DELETE or SELECT"],
    ["CREATE TRIGGER tr AFTER INSERT ON t; DELETE FROM u; END", "expected BEGIN"],
    [
      "CREATE TRIGGER tr AFTER INSERT ON t BEGIN CREATE TABLE x (a); END",
      "expected INSERT, UPDATE, DELETE or SELECT",
    ],
    [
      "CREATE TRIGGER tr AFTER INSERT ON t BEGIN ATTACH 'x' AS y; END",
      "expected INSERT, UPDATE, DELETE or SELECT",
    ],
    ["EXPLAIN EXPLAIN SELECT 1", "expected a statement to explain"],
    ["SELECT (1; DROP TABLE t)", 'expected "\\)" but found ";"'],
    ["SELECT * FROM t WHERE a IN (SELECT 1; DROP TABLE t)", 'expected "\\)" but found ";"'],
    // SQLite hands a module everything to the matching ")", a ";" too: refused, not guessed at.
    ["CREATE VIRTUAL TABLE v USING fts5(a; DROP TABLE t)", 'expected "\\)" but found ";"'],
    ["SELECT 1) ; DROP TABLE t", 'expected the end of the statement but found "\\)"'],
    ["SELECT ((1)", 'expected "\\)" but found the end of the text'],
  ])("refuses %j", (sql, expected) => {
    expect(reason(sql)).toMatch(new RegExp(`^${expected}`));
  });
});

describe("readSqlite: adversarial input", () => {
  it("refuses deep nesting quickly, without overflowing the stack", () => {
    const deep = [
      `SELECT ${"(".repeat(100_000)}1${")".repeat(100_000)}`,
      `SELECT ${"f(".repeat(100_000)}1${")".repeat(100_000)}`,
      `SELECT ${"CASE WHEN ".repeat(100_000)}1`,
      `SELECT * FROM ${"(".repeat(100_000)}t${")".repeat(100_000)}`,
      `SELECT ${"(SELECT ".repeat(100_000)}1${")".repeat(100_000)}`,
      `SELECT 1 WHERE a IN ${"(".repeat(100_000)}`,
      `CREATE TABLE t (a CHECK ${"(".repeat(100_000)}1${")".repeat(100_000)})`,
    ];
    for (const sql of deep)
      expect(reason(sql)).toMatch(/^it nests deeper than 100 levels at line 1, column \d+$/);
    // As deep as SQLite goes, and a long flat chain: read.
    expect(verbs(`SELECT ${"(".repeat(99)}1${")".repeat(99)}`)).toEqual(["SELECT"]);
    expect(verbs(`SELECT ${"NOT - ~ + ".repeat(50_000)}1`)).toEqual(["SELECT"]);
    expect(verbs(`CREATE VIRTUAL TABLE v USING fts5${"(".repeat(100_000)}${")".repeat(100_000)}`)).toEqual([
      "CREATE VIRTUAL TABLE",
    ]);
  });

  it("reads a megabyte of tokens in one pass", () => {
    const terms = 1_048_576 / 4;
    const sum = read(`SELECT 1${" + 1".repeat(terms)}`);
    expect(sum).toHaveLength(1);
    expect(read("SELECT 1;".repeat(1_048_576 / 9))).toHaveLength(Math.floor(1_048_576 / 9));
    const ors = `SELECT * FROM t WHERE ${Array.from({ length: 60_000 }, (_, i) => `a = ${i}`).join(" OR ")}`;
    expect(read(ors)[0]?.tables).toEqual([{ name: "t", at: 14 }]);
    expect(read(`SELECT '${"x".repeat(1_048_576)}' /* ${"y".repeat(1_048_576)}`)).toHaveLength(1);
    const calls = read(`SELECT ${Array.from({ length: 100_000 }, () => "f(x)").join(", ")}`)[0]?.calls;
    expect(calls).toHaveLength(100_000);
  });

  it("finds a call however it is written", () => {
    for (const sql of [
      `SELECT "load_extension"/**/('x')`,
      "SELECT [LOAD_EXTENSION] ('x')",
      "SELECT `Load_Extension`\n-- a comment\n('x')",
      "SELECT +load_extension('x')",
      "SELECT 1 FROM t WHERE a = (SELECT (SELECT load_extension('x')))",
      "SELECT count(*) FILTER (WHERE load_extension('x')) OVER (ORDER BY load_extension('y')) FROM t",
      "SELECT CASE WHEN 1 THEN load_extension('x') END",
      "SELECT CAST(load_extension('x') AS TEXT)",
      "WITH x AS (SELECT load_extension('x')) SELECT * FROM x",
      "SELECT * FROM t WHERE a IN load_extension('x')",
      "SELECT * FROM main.'load_extension'('x')",
      "INSERT INTO t VALUES (1) ON CONFLICT DO UPDATE SET a = load_extension('x')",
      "UPDATE t SET a = 1 RETURNING load_extension('x')",
      "DELETE FROM t WHERE load_extension('x') ORDER BY a LIMIT 1",
      "CREATE TABLE t (a DEFAULT (load_extension('x')), CHECK (load_extension('y')))",
      "CREATE INDEX i ON t (load_extension(a)) WHERE load_extension(b)",
      "CREATE VIEW v AS SELECT load_extension('x')",
      "CREATE TRIGGER tr AFTER INSERT ON t WHEN load_extension('x') BEGIN SELECT 1; END",
      "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE u SET a = load_extension('x'); END",
      "ATTACH load_extension('x') AS y",
      "EXPLAIN SELECT load_extension('x')",
    ]) {
      expect(
        read(sql)[0]?.calls.map((c) => c.name),
        sql,
      ).toContain("load_extension");
    }
  });

  it("never takes a keyword in a string, a comment or a quoted name for one", () => {
    expect(
      verbs('SELECT \'DROP TABLE t; ATTACH x\' AS "DELETE", [drop], `attach` FROM "TABLE" -- ATTACH'),
    ).toEqual(["SELECT"]);
    expect(read("SELECT 'load_extension(''x'')', \"readfile\" FROM t")[0]?.calls).toEqual([]);
  });
});

describe("readSqlite: the corpus", () => {
  const root = join(import.meta.dirname, "../../../test_cases");
  /** Every `arguments.sql` in test_cases/**\/*.json. */
  function corpus(): string[] {
    const found = new Set<string>();
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json"));
    for (const file of files) {
      const stack: unknown[] = [JSON.parse(readFileSync(join(root, file), "utf8"))];
      while (stack.length > 0) {
        const value = stack.pop();
        if (typeof value !== "object" || value === null) continue;
        const args = (value as { arguments?: { sql?: unknown } }).arguments;
        if (typeof args?.sql === "string") found.add(args.sql);
        stack.push(...Object.values(value));
      }
    }
    return [...found];
  }

  it("reads every SQL argument of the test cases", () => {
    const texts = corpus();
    expect(texts.length).toBeGreaterThan(50);
    const unread = texts.filter((sql) => !readSqlite(sql).ok);
    expect(unread).toEqual([]);
  });
});
