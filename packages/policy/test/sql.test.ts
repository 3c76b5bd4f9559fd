import { readSql, type SqlStatement } from "@mcpguard/readers";
import { describe, expect, it } from "vitest";
import { resolvePolicy } from "../src/load.ts";
import { Policy } from "../src/schema.ts";

/** The statements of a text that must parse. */
function statements(sql: string): SqlStatement[] {
  const reading = readSql(sql);
  if (!reading.ok) throw new Error(`${sql}: ${reading.reason}`);
  return reading.statements;
}
/** The classes each statement needs, in order of appearance. */
const classes = (sql: string) => statements(sql).map((s) => s.needs.map((n) => n.sqlClass));
const dangerous = (sql: string) => statements(sql).find((s) => s.dangerous)?.dangerous;

describe("readSql: what each statement does", () => {
  it.each([
    ["SELECT * FROM users", ["read"]],
    ["VALUES (1), (2)", ["read"]],
    ["SELECT 1 UNION ALL SELECT 2", ["read"]],
    ["WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3) SELECT * FROM n", ["read"]],
    ["EXPLAIN QUERY PLAN SELECT * FROM users", ["read"]],
    ["SELECT * FROM pragma_table_info('users')", ["read"]],
    ["SELECT type, name FROM sqlite_master", ["read"]],
    ["PRAGMA table_info(users)", ["read"]],
    ["PRAGMA index_list('users')", ["read"]],
    ["PRAGMA main.integrity_check(10)", ["read"]],
    ["PRAGMA foreign_key_list(users)", ["read"]],
    ["PRAGMA journal_mode", ["read"]],
    ["PRAGMA user_version", ["read"]],
    ["INSERT INTO users (name) VALUES ('Dana') RETURNING id", ["write", "read"]],
    ["INSERT INTO users (name) VALUES ('Dana')", ["write"]],
    ["REPLACE INTO users (id, name) VALUES (1, 'x')", ["write"]],
    ["INSERT INTO t VALUES (1) ON CONFLICT(id) DO UPDATE SET a = excluded.a", ["write", "read"]],
    ["UPDATE users SET name = 'x' WHERE id = 1 RETURNING *", ["write", "read"]],
    ["UPDATE users SET name = 'x'", ["write"]],
    ["DELETE FROM users WHERE id = 3", ["write", "read"]],
    ["DELETE FROM users RETURNING *", ["write", "read"]],
    ["DELETE FROM users", ["write"]],
    ["WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", ["write", "read"]],
    ["PRAGMA user_version = 3", ["write"]],
    ["PRAGMA foreign_keys = ON", ["write"]],
    ["PRAGMA optimize", ["write"]],
    ["ANALYZE", ["write"]],
    ["VACUUM", ["write"]],
    ["BEGIN", ["write"]],
    ["CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, a TEXT NOT NULL)", ["schema"]],
    ["CREATE TABLE t2 AS SELECT * FROM users", ["schema", "read"]],
    ["CREATE INDEX i ON products(price)", ["schema"]],
    ["CREATE VIEW v AS SELECT name FROM products", ["schema", "read"]],
    ["CREATE VIRTUAL TABLE docs USING fts5(body)", ["schema"]],
    ["ALTER TABLE users ADD COLUMN created_at TEXT", ["schema"]],
    ["ALTER TABLE users RENAME TO people", ["schema"]],
    ["ALTER TABLE users RENAME COLUMN name TO full_name", ["schema"]],
    ["DROP TABLE users", ["drop"]],
    ["DROP TABLE IF EXISTS main.users", ["drop"]],
    ["DROP INDEX i", ["drop"]],
    ["DROP VIEW v", ["drop"]],
    ["DROP TRIGGER t", ["drop"]],
    ["ALTER TABLE users DROP COLUMN email", ["drop"]],
    ["EXPLAIN DROP TABLE users", ["read", "drop"]],
  ])("%s", (sql, expected) => {
    expect(classes(sql)).toEqual([expected]);
  });

  it.each([
    ["DELETE FROM t WHERE id IN (SELECT id FROM u)", ["write", "read"]],
    ["UPDATE t SET a = (VALUES (1))", ["write"]],
    ["INSERT INTO t SELECT 1", ["write", "read"]],
    ["PRAGMA user_version = -1", ["write"]],
    ["PRAGMA cache_size = +2000", ["write"]],
    ["CREATE INDEX i ON t (a) WHERE a IN (SELECT a FROM u)", ["schema", "read"]],
    ["EXPLAIN QUERY PLAN DELETE FROM t", ["read", "write"]],
    ["COMMIT", ["write"]],
    ["END TRANSACTION", ["write"]],
    ["ROLLBACK TO SAVEPOINT s", ["write"]],
    ["RELEASE s", ["write"]],
    ["REINDEX t", ["write"]],
  ])("needs the classes of what is inside: %s", (sql, expected) => {
    expect(classes(sql)).toEqual([expected]);
  });

  it("judges a trigger by its body's statements too", () => {
    expect(classes("CREATE TRIGGER tr AFTER INSERT ON users BEGIN DELETE FROM products; END")).toEqual([
      ["schema", "write"],
    ]);
  });

  it("reads comments and literals as the grammar does: never as statements", () => {
    expect(classes("-- DROP TABLE users\nSELECT 1 /* ; DELETE FROM users */")).toEqual([["read"]]);
    expect(classes("SELECT 'x; DROP TABLE users; --' AS s")).toEqual([["read"]]);
    expect(classes("SELECT count(*) FROM users; -- sanity check")).toEqual([["read"]]);
    expect(classes("SELECT 'It''s'; ")).toEqual([["read"]]);
    expect(classes("SELECT * FROM notes WHERE body = 'load_extension( ATTACH PRAGMA'")).toEqual([["read"]]);
    expect(statements("/* nothing */")).toEqual([]);
  });

  it("splits statements as SQLite does, each judged", () => {
    expect(classes("SELECT 1; DROP TABLE users")).toEqual([["read"], ["drop"]]);
    expect(statements("SELECT 1; DROP TABLE users").map((s) => s.verb)).toEqual(["SELECT", "DROP TABLE"]);
  });

  it.each([
    ["SELECT load_extension('/tmp/x.so')", "load_extension()"],
    ["SELECT \"LOAD_EXTENSION\"('/tmp/x.so')", "load_extension()"],
    ["SELECT readfile('/etc/passwd')", "readfile()"],
    ["SELECT writefile('/tmp/x', 'y')", "writefile()"],
    ["SELECT edit('x', 'vi')", "edit()"],
    ["SELECT fts3_tokenizer('simple')", "fts3_tokenizer()"],
    ["SELECT * FROM fsdir('/')", "fsdir()"],
    ["SELECT * FROM sqlite_dbpage", "sqlite_dbpage"],
    ["ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH"],
    ["DETACH DATABASE x", "DETACH"],
    ["VACUUM INTO '/tmp/copy.db'", "VACUUM INTO"],
    ["PRAGMA writable_schema = 1", "PRAGMA writable_schema"],
    ["PRAGMA trusted_schema = ON", "PRAGMA trusted_schema"],
    ["PRAGMA journal_mode = OFF", "PRAGMA journal_mode"],
    ["PRAGMA main.journal_mode('wal')", "PRAGMA journal_mode"],
    ["UPDATE sqlite_master SET sql = 'x'", "UPDATE"],
    ["INSERT INTO main.sqlite_schema VALUES (1)", "INSERT"],
    ["CREATE VIRTUAL TABLE z USING zipfile('/tmp/a.zip')", "CREATE VIRTUAL TABLE"],
    // Wherever it hides: a CTE, a subquery, a default, a trigger's body, a view.
    ["WITH x AS (SELECT readfile('/etc/passwd') AS f) SELECT * FROM x", "readfile()"],
    ["SELECT * FROM users WHERE name IN (SELECT load_extension('x'))", "load_extension()"],
    ["CREATE TABLE t (a TEXT DEFAULT (readfile('/etc/passwd')))", "readfile()"],
    [
      "CREATE TRIGGER tr AFTER INSERT ON users BEGIN SELECT writefile('/tmp/x', new.name); END",
      "writefile()",
    ],
    ["CREATE VIEW v AS SELECT readfile('/etc/shadow')", "readfile()"],
    // However it is written, and wherever a table can stand.
    ["SELECT [ReadFile] /* */ ('/etc/passwd')", "readfile()"],
    ["SELECT * FROM main.'fsdir'('.')", "fsdir()"],
    ["SELECT 1 WHERE 'x' IN fsdir('.')", "fsdir()"],
    ["SELECT * FROM zipfile", "zipfile"],
    ['SELECT * FROM t, "SQLITE_DBPAGE"', "sqlite_dbpage"],
    ["SELECT 1 WHERE 1 IN 'sqlite_dbpage'", "sqlite_dbpage"],
    ["SELECT * FROM (t JOIN (main.sqlite_dbpage))", "sqlite_dbpage"],
    ["CREATE VIRTUAL TABLE f USING fts5(x, content='sqlite_dbpage')", "sqlite_dbpage"],
    ["REPLACE INTO temp.sqlite_temp_master VALUES (1)", "REPLACE"],
    ["DELETE FROM [sqlite_schema]", "DELETE"],
    ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE sqlite_master SET sql = ''; END", "UPDATE"],
    ["EXPLAIN ATTACH 'x.db' AS x", "ATTACH"],
    ['PRAGMA "writable_schema" = 1', "PRAGMA writable_schema"],
    ["VACUUM main INTO 'copy.db'", "VACUUM INTO"],
    ['CREATE VIRTUAL TABLE z USING "ZipFile"', "CREATE VIRTUAL TABLE"],
  ])("dangerous whatever the policy: %s", (sql, verb) => {
    expect(dangerous(sql)?.verb).toBe(verb);
  });

  it("does not take a column, a table or a literal named like a dangerous function for one", () => {
    expect(dangerous("SELECT editor, attachment, edit FROM docs")).toBeUndefined();
    expect(dangerous("CREATE TABLE edit (eval TEXT, readfile INT)")).toBeUndefined();
    expect(dangerous("INSERT INTO edit (eval) VALUES ('readfile(x)')")).toBeUndefined();
    expect(dangerous("SELECT * FROM eval JOIN edit USING (id)")).toBeUndefined();
    expect(dangerous("SELECT 'readfile(x)' AS note")).toBeUndefined();
    expect(dangerous("PRAGMA journal_mode")).toBeUndefined();
  });

  it("marks statements it does not know", () => {
    expect(statements("PRAGMA some_future_pragma = 1")[0]?.unknown).toBe("PRAGMA some_future_pragma");
  });

  it("refuses what does not parse, with the reason and where in one line", () => {
    const reasons = {
      "SELECT * FROM users WHERE name = 'x": "an unterminated string at line 1, column 34",
      'SELECT "name FROM users': "an unterminated quoted name at line 1, column 8",
      "SELEC 1": 'expected a statement but found "SELEC" at line 1, column 1',
      DROP: "expected TABLE, INDEX, VIEW or TRIGGER but found the end of the text at line 1, column 5",
      "SELECT 1 FROM t WHERE a b": 'expected the end of the statement but found "b" at line 1, column 25',
      "SELECT 1,\n  2 +": "expected an expression but found the end of the text at line 2, column 6",
    };
    for (const [sql, reason] of Object.entries(reasons)) {
      expect(readSql(sql)).toEqual({ ok: false, reason });
    }
    // A long word may be a secret of the argument: not repeated.
    const secret = "Zq3VmT8rWx1LpN6yHc0B";
    expect(readSql(`SELECT 1 FROM t WHERE ${secret} ${secret}`)).toEqual({
      ok: false,
      reason: "expected the end of the statement but found a name at line 1, column 44",
    });
    expect(readSql(`SELECT 1 FROM t WHERE a '${secret}'`)).toMatchObject({
      reason: expect.not.stringContaining(secret),
    });
  });

  it("reads at once what made the former parser backtrack for seconds", () => {
    expect(readSql(`SELECT ${"(".repeat(40)}1`)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^expected "\)" but found the end of the text/),
    });
    expect(classes(`SELECT ${"(".repeat(40)}1${")".repeat(40)}`)).toEqual([["read"]]);
  });

  it("refuses a text longer than it reads", () => {
    const reading = readSql(`SELECT '${"x".repeat(100_001)}'`);
    expect(reading).toMatchObject({ ok: false, reason: expect.stringMatching(/longer than/) });
  });
});

describe("policy classes", () => {
  const resolve = (sql: string[]) =>
    resolvePolicy(
      Policy.parse({ version: 1, server: "db", tools: { query: { args: { sql: "sql" }, sql } } }),
      undefined,
      { cwd: "/w" },
    ).tools.get("query");

  it("reads ddl as schema and drop, and defaults to read and many statements", () => {
    expect([...(resolve(["read", "ddl"])?.sql ?? [])]).toEqual(["read", "schema", "drop"]);
    expect(resolve(["read"])?.sqlStatements).toBe("many");
    expect(() => resolve(["dangerous"])).toThrow();
  });
});
