/**
 * The SQL reader against SQLite itself. Generated texts (differential/sqlGenerator.ts) go to one
 * Python process that hands each to the SQLite library (differential/sqliteOracle.py: ctypes,
 * sqlite3_prepare_v2's own split, the authorizer's calls, each statement run in a fresh in-memory
 * database in a scratch folder); the reader's reading of the same text must agree:
 *
 * - it reads the text exactly when SQLite parses it, into as many statements;
 * - each statement needs every class the authorizer shows it using (SQLITE_READ of a column, a
 *   recursive CTE: read; INSERT, UPDATE, DELETE, transactions, savepoints, ANALYZE, REINDEX: write;
 *   CREATE and ALTER: schema, or drop for DROP COLUMN; DROP: drop), unless the reader refuses it as
 *   dangerous or unknown. SQLITE_SELECT alone reads no table (a VALUES list, the rows of a
 *   multi-row INSERT, `SELECT 1`): the reader may say read for it or not. What SQLite does to do a
 *   DDL statement (the schema table's rows, a CREATE INDEX's read of its table, ALTER's functions)
 *   is the DDL's;
 * - ATTACH, DETACH, the functions that reach files or load code, and any file the run made are
 *   dangerous in the reader; each PRAGMA is the one SQLite ran, with or without its value; every
 *   function SQLite calls is one the reader saw called.
 *
 * MCPGUARD_DIFF_RUNS and MCPGUARD_DIFF_SEED run more texts or other ones.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteUse } from "../src/code/sqlite.ts";
import { UNCONFINED } from "../src/confinement.ts";
import type { Invocation } from "../src/shell/index.ts";
import { readSql, type SqlStatement, type StatementClass } from "../src/sql.ts";
import { readSqlite, type SqlStatementRead } from "../src/sqlReader.ts";
import { SCHEMA, sqlText } from "./differential/sqlGenerator.ts";
import { runTool, type ToolRun } from "./differential/toolRuns.ts";

const PYTHON = "/usr/bin/python3";
const ORACLE = join(import.meta.dirname, "differential", "sqliteOracle.py");
const RUNS = Number(process.env.MCPGUARD_DIFF_RUNS ?? 1000);
const SEED = Number(process.env.MCPGUARD_DIFF_SEED ?? 30);

type Action = [number, string | null, string | null, string | null, string | null];
interface OracleStatement {
  sql: string;
  actions: Action[];
  runError?: string;
  files?: string[];
}
interface OracleText {
  statements: OracleStatement[];
  error?: string;
}

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-sqldiff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function oracle(texts: string[]): { version: string; results: OracleText[] } {
  const run = spawnSync(PYTHON, [ORACLE], {
    input: JSON.stringify({ scratch, setup: SCHEMA, texts }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`the SQLite oracle failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// The authorizer's action codes (sqlite3.h).
const CREATE = new Set([1, 2, 3, 4, 5, 6, 7, 8, 29]);
const DROP = new Set([10, 11, 12, 13, 14, 15, 16, 17, 30]);
const ALTER = 26;
const [DELETE, INSERT, PRAGMA, READ, TRANSACTION, UPDATE, ATTACH, DETACH] = [9, 18, 19, 20, 22, 23, 24, 25];
const [REINDEX, ANALYZE, FUNCTION, SAVEPOINT, RECURSIVE] = [27, 28, 31, 32, 33];
/** The tables SQLite keeps for itself, which DDL, ANALYZE and pragma tables read and write. */
const INTERNAL = /^sqlite_(?:master|temp_master|schema|temp_schema|stat\d|sequence)$/;
/** Functions that reach files or load code: SQLite calls them; the reader must refuse them. */
const DANGEROUS_FUNCTIONS = new Set(["load_extension", "readfile", "writefile", "edit"]);
/** Keywords and operators that SQLite runs as functions: CURRENT_TIME and its kin, LIKE, ->, ... */
const BUILT_IN = new Set([
  "current_time",
  "current_date",
  "current_timestamp",
  "like",
  "glob",
  "regexp",
  "match",
  "->",
  "->>",
]);
const SYNTAX = /syntax error|unrecognized token|incomplete input|should come after|parser stack overflow/;

/** The classes SQLite's authorizer shows a top-level statement using, its own bookkeeping left out. */
function sqliteClasses(actions: Action[]): Set<StatementClass> {
  // Actions of a trigger or a view the statement set off are the trigger's or the view's.
  const own = actions.filter((a) => a[4] === null);
  const ddl = own.some(([code]) => CREATE.has(code) || DROP.has(code) || code === ALTER || code === ANALYZE);
  // CREATE TABLE ... AS SELECT reads what its SELECT reads; a CHECK reads the table it makes.
  const tableAs = own.some(([code]) => code === 2 || code === 4);
  const made = new Set(own.filter(([code]) => CREATE.has(code)).map((a) => a[1]));
  const classes = new Set<StatementClass>();
  for (const [code, a1] of own) {
    if (a1 !== null && INTERNAL.test(a1) && code !== PRAGMA) continue;
    if (CREATE.has(code)) classes.add("schema");
    else if (DROP.has(code)) classes.add("drop");
    else if (code === ALTER) classes.add("schema");
    else if (ddl) {
      // A DROP's delete of its rows, a CREATE INDEX's read of its table, ALTER's and ANALYZE's
      // own functions: what the DDL does to do itself.
      if (tableAs && code === READ && !made.has(a1)) classes.add("read");
    } else if (code === READ || code === RECURSIVE) classes.add("read");
    else if ([INSERT, UPDATE, DELETE, TRANSACTION, SAVEPOINT, REINDEX, ANALYZE].includes(code))
      classes.add("write");
  }
  return classes;
}

function describeNeeds(statement: SqlStatement): string {
  return statement.needs.map((n) => n.sqlClass).join(",");
}

/** Every way the reader's reading of `sql` differs from what SQLite did with it. */
function compare(sql: string, real: OracleText): string[] {
  const problems: string[] = [];
  const judged = readSql(sql);
  const raw = readSqlite(sql);
  const syntaxError = real.error !== undefined && SYNTAX.test(real.error);
  if (!judged.ok || !raw.ok) {
    // Known, and refused: SQLite hands a virtual table's arguments to its module, `;` and all.
    if (/\bUSING\b/i.test(sql) && !judged.ok && /found ";"/.test(judged.reason)) return problems;
    if (real.error === undefined)
      problems.push(`the reader refuses what SQLite parses: ${judged.ok ? "" : judged.reason}`);
    return problems;
  }
  if (syntaxError) {
    problems.push(`the reader reads what SQLite refuses (${real.error})`);
    return problems;
  }
  // A statement SQLite could not prepare (a name it does not know) ends its split there.
  const complete = real.error === undefined;
  const count = judged.statements.length;
  const seen = real.statements.length + (complete ? 0 : 1);
  if (complete ? count !== seen : count < seen)
    problems.push(
      `the reader reads ${count} statements, SQLite ${real.statements.length}${complete ? "" : "+"}`,
    );
  real.statements.forEach((s, i) => {
    const mine = judged.statements[i];
    const read = raw.statements[i];
    if (!mine || !read) return;
    problems.push(
      ...compareStatement(s, mine, read).map((p) => `statement ${i + 1} (${s.sql.trim()}): ${p}`),
    );
  });
  return problems;
}

function compareStatement(real: OracleStatement, mine: SqlStatement, read: SqlStatementRead): string[] {
  const problems: string[] = [];
  const own = real.actions.filter((a) => a[4] === null);
  const danger =
    own.find(([code]) => code === ATTACH || code === DETACH) ??
    own.find(([code, , name]) => code === FUNCTION && DANGEROUS_FUNCTIONS.has(name ?? ""));
  if (danger && !mine.dangerous)
    problems.push(`SQLite ran ${JSON.stringify(danger)}, the reader finds no danger`);
  if (real.files && !mine.dangerous)
    problems.push(`its run made ${real.files.join(", ")}, the reader finds no danger`);
  for (const [code, , name] of own) {
    if (code !== FUNCTION || name === null || name.startsWith("sqlite_") || BUILT_IN.has(name)) continue;
    if (own.some(([c]) => c === ALTER)) continue;
    if (!read.calls.some((c) => c.name === name.toLowerCase()))
      problems.push(`SQLite calls ${name}(), which the reader did not see`);
  }
  const pragma = own.find(([code]) => code === PRAGMA);
  if (pragma) {
    const head = [read.head, ...read.inner].find((h) => h.pragma);
    const valued = pragma[2] !== null;
    if (head?.pragma?.name !== pragma[1]?.toLowerCase() || head?.pragma?.valued !== valued)
      problems.push(
        `SQLite ran PRAGMA ${pragma[1]}${valued ? ` = ${pragma[2]}` : ""}, the reader read ${JSON.stringify(head?.pragma)}`,
      );
  }
  if (mine.dangerous || mine.unknown) return problems;
  const needs = new Set(mine.needs.map((n) => n.sqlClass));
  for (const c of sqliteClasses(real.actions)) {
    // DROP COLUMN is an ALTER TABLE to the authorizer; the reader calls it drop.
    if (c === "schema" && needs.has("drop") && mine.needs.some((n) => n.verb === "ALTER TABLE DROP COLUMN"))
      continue;
    if (!needs.has(c))
      problems.push(`SQLite's authorizer shows ${c}; the reader needs ${describeNeeds(mine)}`);
  }
  return problems;
}

/** Disagreements by kind (their texts' details left out), each with its shortest text. */
function summary(problems: { sql: string; p: string }[]): string[] {
  const kinds = new Map<string, { sql: string; p: string; n: number }>();
  for (const problem of problems) {
    const kind = problem.p.replace(/^statement \d+ \([\s\S]*?\): /, "").replace(/"[^"]*"|'[^']*'|\d+/g, "_");
    const seen = kinds.get(kind);
    if (!seen || problem.sql.length < seen.sql.length) kinds.set(kind, { ...problem, n: (seen?.n ?? 0) + 1 });
    else seen.n++;
  }
  return [...kinds.values()].map((k) => `${k.p} (${k.n}x)\n    ${JSON.stringify(k.sql)}`);
}

const available =
  existsSync(PYTHON) && spawnSync(PYTHON, [ORACLE], { input: '{"scratch": "/", "texts": []}' }).status === 0;

/** What the generated texts found, one text of each kind: each failed before its fix. */
const FOUND = [
  // A write that reads: SQLITE_READ of the columns it names or returns.
  "DELETE FROM t1 WHERE b",
  "UPDATE t2 SET c = c",
  "DELETE FROM t1 RETURNING *",
  "INSERT INTO t1 VALUES (1, 2, 3) RETURNING a",
  // A register of SQLite's nested statements, a syntax error at the top.
  "SELECT 1 LIMIT #2",
];

describe.skipIf(!available)("the SQL reader against SQLite", () => {
  it("agrees with SQLite on what the generated texts found", () => {
    const { results } = oracle(FOUND);
    const problems = FOUND.flatMap((sql, i) =>
      compare(sql, results[i] as OracleText).map((p) => `${sql}: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  it(`agrees with SQLite on ${RUNS} generated texts (seed ${SEED})`, () => {
    const texts = fc.sample(sqlText, { seed: SEED, numRuns: RUNS });
    const { results } = oracle(texts);
    const problems = texts.flatMap((sql, i) =>
      compare(sql, results[i] as OracleText).map((p) => ({ sql, p })),
    );
    expect(summary(problems)).toEqual([]);
  });
});

/**
 * The sqlite3 shell (code/sqlite.ts) against the sqlite3 shell itself: command lines of
 * dot-commands and SQL, each argument one command as the shell runs it, in a folder of their own
 * with logging stand-ins on PATH (toolOracle.py). Whenever the reader lets one through under
 * C-app, its run must have run no command and written and read no file.
 */
const SQLITE3 = "/usr/bin/sqlite3";
const DOT = [
  ".print hi",
  ".mode csv",
  ".headers on",
  ".schema",
  ".tables",
  ".dump",
  ".show",
  ".nullvalue N",
  ".width 5",
  ".databases",
  ".parameter init",
  ".parameter list",
  ".parameter set @x 1",
  ".parameter set @x 'a.txt'",
  ".parameter set @x writefile('w.txt','x')",
  ".parameter set @x readfile('a.txt')",
  ".parameter set @x edit('x','id')",
  ".parameter set @x (SELECT(writefile('w.txt','y')))",
  ".parameter set @x abs(-1)",
  ".shell id",
  ".system date",
  ".output o.txt",
  ".once o.txt",
  ".read prog.sed",
  ".open o.db",
  ".save o.db",
  ".import a.txt t",
  "SELECT 1;",
  "CREATE TABLE t(a);",
  "SELECT readfile('a.txt');",
  "SELECT writefile('w.txt', 'x');",
  "SELECT edit('x', 'id');",
  "ATTACH 'o.db' AS o;",
  "VACUUM INTO 'v.db';",
  "SELECT name FROM fsdir('.');",
  "SELECT length(:x);",
];
const sqliteLine = fc
  .array(fc.constantFrom(...DOT), { minLength: 1, maxLength: 3 })
  .map((cmds) => [":memory:", ...cmds]);

function sqliteViolations(argv: string[], run: ToolRun): string[] {
  const fields = ["sqlite3", ...argv].map((text) => ({ text }));
  const use = sqliteUse(fields, { stdin: { kind: "inherit" } } as unknown as Invocation, UNCONFINED);
  if (use.refusal !== undefined) return [];
  return [
    ...run.commands.map((c) => `it ran ${c}`),
    ...run.written.map((f) => `it wrote ${f}`),
    ...run.read.map((f) => `it read ${f}`),
  ];
}

/** What the generated command lines found: a value of .parameter set is SQL, and is run. */
const SQLITE_FOUND = [
  [":memory:", ".parameter set @x writefile('w.txt','x')"],
  [":memory:", ".parameter set @x readfile('a.txt')"],
  [":memory:", ".parameter set @x edit('x','id')"],
];

describe.skipIf(!available || !existsSync(SQLITE3))(
  "the sqlite3 shell's reader against the sqlite3 shell",
  () => {
    it("refuses what the generated command lines found, each of which runs, reads or writes", () => {
      const runs = runTool(
        SQLITE3,
        SQLITE_FOUND.map((argv) => ({ argv })),
      );
      SQLITE_FOUND.forEach((argv, i) => {
        const run = runs[i] as ToolRun;
        expect([...run.commands, ...run.written, ...run.read], argv.join(" ")).not.toEqual([]);
        expect(sqliteViolations(argv, run)).toEqual([]);
      });
    });

    it(`accounts for every command, read and write of ${RUNS / 5} generated command lines`, () => {
      const lines = fc.sample(sqliteLine, { seed: SEED, numRuns: RUNS / 5 });
      const runs = runTool(
        SQLITE3,
        lines.map((argv) => ({ argv })),
      );
      const problems = lines.flatMap((argv, i) =>
        sqliteViolations(argv, runs[i] as ToolRun).map((p) => `${argv.join(" | ")}: ${p}`),
      );
      expect([...new Set(problems)]).toEqual([]);
    });
  },
);
