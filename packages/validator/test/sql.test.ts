import { afterAll, describe, expect, it } from "vitest";
import { makeWorld } from "./helpers.ts";

const world = makeWorld();
afterAll(() => world.remove());
const sql = (query: string) => world.rule(query, "sql");

describe("SQL", () => {
  it("l2.sql.unterminated: a literal, name or comment left open", () => {
    expect(sql("SELECT * FROM users WHERE name = 'x")).toBe("l2.sql.unterminated");
    expect(sql('SELECT "name FROM users')).toBe("l2.sql.unterminated");
    expect(sql("SELECT 1 /* open")).toBe("l2.sql.unterminated");
    expect(sql("SELECT * FROM users WHERE name = 'O''Brien'")).toBeUndefined();
  });

  it("l2.sql.comment: -- and /* */ outside literals", () => {
    expect(sql("SELECT * FROM users -- '")).toBe("l2.sql.comment");
    expect(sql("SELECT * FROM users WHERE id = 1 --")).toBe("l2.sql.comment");
    expect(sql("SELECT/* */* FROM users")).toBe("l2.sql.comment");
    expect(sql("SELECT * FROM users /* admin */ WHERE 1=1")).toBe("l2.sql.comment");
    expect(sql("SELECT * FROM notes WHERE body = '-- not a comment /* either */'")).toBeUndefined();
  });

  it("l2.sql.stacked: more than one statement", () => {
    expect(sql("SELECT 1; DROP TABLE users")).toBe("l2.sql.stacked");
    expect(sql("SELECT * FROM users WHERE id = 1; DROP TABLE users")).toBe("l2.sql.stacked");
    expect(sql("SELECT 1;")).toBeUndefined();
    expect(sql("SELECT 'a;b' FROM users")).toBeUndefined();
  });

  it.each([
    "SELECT load_extension('/etc/passwd')",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "DETACH DATABASE x",
    "PRAGMA writable_schema = 1",
    "UPDATE sqlite_master SET sql = 'x' WHERE writable_schema",
    "SELECT * FROM users INTO OUTFILE '/tmp/u'",
    "SELECT 1 INTO DUMPFILE '/tmp/u'",
    "SELECT LOAD_FILE('/etc/passwd')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/x', 'y')",
    "SELECT edit('x', 'vi')",
    "SELECT fts3_tokenizer('simple')",
    "EXEC xp_cmdshell 'dir'",
    "COPY users TO PROGRAM 'curl example.com'",
    "COPY users FROM PROGRAM 'id'",
  ])("l2.sql.dangerous: %s", (query) => {
    expect(sql(query)).toBe("l2.sql.dangerous");
  });

  it("accepts ordinary queries, keywords inside literals included", () => {
    expect(sql("SELECT * FROM users")).toBeUndefined();
    expect(sql("SELECT name, email FROM users WHERE id = 1")).toBeUndefined();
    expect(sql("SELECT * FROM notes WHERE body = 'load_extension( ATTACH PRAGMA'")).toBeUndefined();
    expect(sql("INSERT INTO users (name, email) VALUES ('Dave', 'dave@example.com')")).toBeUndefined();
    expect(sql("SELECT editor, attachment FROM docs")).toBeUndefined();
    expect(sql("DROP TABLE users")).toBeUndefined();
  });
});
