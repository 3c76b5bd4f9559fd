import { afterAll, describe, expect, it } from "vitest";
import { inspectArguments } from "../src/index.ts";
import { makeWorld } from "./helpers.ts";

const world = makeWorld();
afterAll(() => world.remove());
const sql = (query: string, sqlStatements?: "one" | "many") => world.rule(query, "sql", { sqlStatements });

describe("SQL", () => {
  it("l2.sql.unparsable: what SQLite's grammar refuses, a literal or name left open among it", () => {
    expect(sql("SELECT * FROM users WHERE name = 'x")).toBe("l2.sql.unparsable");
    expect(sql('SELECT "name FROM users')).toBe("l2.sql.unparsable");
    expect(sql("SELEC * FROM users")).toBe("l2.sql.unparsable");
    expect(sql("EXEC xp_cmdshell 'dir'")).toBe("l2.sql.unparsable");
    expect(sql("COPY users TO PROGRAM 'curl example.com'")).toBe("l2.sql.unparsable");
    expect(sql("SELECT * FROM users WHERE name = 'O''Brien'")).toBeUndefined();
  });

  it("says why a text does not parse", () => {
    const finding = inspectArguments({ q: "SELECT * FROM users WHERE name = 'x" }, { q: "sql" }, world.ctx);
    expect(finding?.reason).toMatch(
      /"q" does not parse as SQLite: an unterminated string at line 1, column 34$/,
    );
  });

  it("comments never matter by themselves", () => {
    expect(sql("SELECT * FROM users -- '")).toBeUndefined();
    expect(sql("SELECT * FROM users WHERE id = 1 --")).toBeUndefined();
    expect(sql("SELECT/* */* FROM users")).toBeUndefined();
    expect(sql("-- cheapest first\nSELECT name FROM products ORDER BY price LIMIT 1")).toBeUndefined();
    expect(
      sql("SELECT count(*) FROM products /* WHERE price > 100; DELETE FROM products */"),
    ).toBeUndefined();
    expect(sql("SELECT * FROM notes WHERE body = '-- not a comment /* either */'")).toBeUndefined();
  });

  it("l2.sql.stacked: several statements, where the server runs them all", () => {
    expect(sql("SELECT 1; DROP TABLE users")).toBe("l2.sql.stacked");
    expect(sql("SELECT * FROM users WHERE id = 1; DROP TABLE users", "many")).toBe("l2.sql.stacked");
    // A server that runs one statement per call refuses the rest itself (L1 judges each anyway).
    expect(sql("SELECT * FROM users WHERE id = 1; DROP TABLE users", "one")).toBeUndefined();
    expect(sql("SELECT 1;")).toBeUndefined();
    expect(sql("SELECT count(*) FROM users; -- sanity check")).toBeUndefined();
    expect(sql("SELECT 'a;b' FROM users")).toBeUndefined();
  });

  it.each([
    "SELECT load_extension('/etc/passwd')",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "DETACH DATABASE x",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = OFF",
    "VACUUM INTO '/tmp/copy.db'",
    "UPDATE sqlite_master SET sql = 'x' WHERE name = 't'",
    "SELECT LOAD_FILE('/etc/passwd')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/x', 'y')",
    "SELECT edit('x', 'vi')",
    "SELECT fts3_tokenizer('simple')",
    "WITH f AS (SELECT readfile('/etc/passwd')) SELECT * FROM f",
    "CREATE TRIGGER t AFTER INSERT ON users BEGIN SELECT load_extension('x'); END",
  ])("l2.sql.dangerous: %s", (query) => {
    expect(sql(query, "one")).toBe("l2.sql.dangerous");
  });

  it("accepts ordinary queries, keywords inside literals included", () => {
    expect(sql("SELECT * FROM users")).toBeUndefined();
    expect(sql("SELECT name, email FROM users WHERE id = 1")).toBeUndefined();
    expect(sql("SELECT * FROM notes WHERE body = 'load_extension( ATTACH PRAGMA'")).toBeUndefined();
    expect(sql("INSERT INTO users (name, email) VALUES ('Dave', 'dave@example.com')")).toBeUndefined();
    expect(sql("SELECT editor, attachment FROM docs")).toBeUndefined();
    expect(sql("PRAGMA table_info(users)")).toBeUndefined();
    expect(sql("PRAGMA integrity_check")).toBeUndefined();
    // A tautology or a UNION is SQL in a sql argument, whose point is a query.
    expect(sql("SELECT * FROM users WHERE 1 = 1 UNION SELECT name, email, 0 FROM users")).toBeUndefined();
    // What the policy grants is L1's: L2 looks for techniques.
    expect(sql("DROP TABLE users")).toBeUndefined();
  });
});
