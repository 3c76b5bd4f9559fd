/**
 * SQL read with SQLite's grammar (`sqlReader.ts`), and each statement judged by what it does.
 * Comments and literals are the tokenizer's to skip: a `DROP` in a comment or a string is no
 * statement. A text that does not parse has no reading, and the reason says why.
 *
 * Classes a policy grants (`ddl` in a policy means schema and drop):
 * - read: SELECT, WITH ... SELECT, VALUES, EXPLAIN, pragmas that report;
 * - write: INSERT, REPLACE, UPDATE, DELETE (upserts too), pragmas that change a setting,
 *   ANALYZE, REINDEX, VACUUM, transactions;
 * - schema (additive): CREATE TABLE / INDEX / VIEW / TRIGGER, ALTER TABLE ADD COLUMN / RENAME;
 * - drop (destructive): DROP TABLE / INDEX / VIEW / TRIGGER, ALTER TABLE DROP COLUMN.
 *
 * A statement needs the classes of every statement inside it: a trigger's body, a CTE, the
 * statement after EXPLAIN. An INSERT, UPDATE or DELETE that names a column in an expression
 * (WHERE, SET, an upsert, RETURNING) or returns whole rows reads the table too, and needs read, as
 * SQLite's authorizer says (SQLITE_READ). Dangerous whatever the policy, because it reaches beyond the
 * database or weakens it: ATTACH / DETACH, VACUUM INTO, functions and tables that reach files,
 * load code or edit raw pages (load_extension, readfile, writefile, edit, fts3_tokenizer, fsdir,
 * zipfile, sqlite_dbpage, ...), virtual tables of other modules than FTS and R*Tree, writes to
 * the schema table, and pragmas that change how the database protects itself.
 */

import { pragmaEffect, type StatementClass } from "./sqlPragmas.js";

export type { StatementClass } from "./sqlPragmas.js";

import { readSqlite, type SqlHead, type SqlStatementRead } from "./sqlReader.js";

/** Longest SQL text that is read at all; the sqlite servers take 10 000 characters. */
const MAX_SQL_LENGTH = 100_000;

export interface SqlStatement {
  /** What it is, as a person names it: `SELECT`, `PRAGMA table_info`, `ALTER TABLE DROP COLUMN`. */
  verb: string;
  /** The classes it needs, each with the statement (itself or one inside it) that needs it. */
  needs: { sqlClass: StatementClass; verb: string }[];
  /** Set when no policy may grant it: the statement and what it reaches. */
  dangerous?: { verb: string; reason: string };
  /** Set when it holds a statement this reading does not know: that statement's verb. */
  unknown?: string;
}

export type SqlReading = { ok: true; statements: SqlStatement[] } | { ok: false; reason: string };

const CLASS_OF: Readonly<Record<string, StatementClass>> = {
  SELECT: "read",
  VALUES: "read",
  EXPLAIN: "read",
  INSERT: "write",
  REPLACE: "write",
  UPDATE: "write",
  DELETE: "write",
  ANALYZE: "write",
  REINDEX: "write",
  VACUUM: "write",
  BEGIN: "write",
  COMMIT: "write",
  ROLLBACK: "write",
  SAVEPOINT: "write",
  RELEASE: "write",
  "CREATE TABLE": "schema",
  "CREATE INDEX": "schema",
  "CREATE VIEW": "schema",
  "CREATE TRIGGER": "schema",
  "DROP TABLE": "drop",
  "DROP INDEX": "drop",
  "DROP VIEW": "drop",
  "DROP TRIGGER": "drop",
};

/** Functions (and table-valued functions) that reach beyond the database or hide statements. */
const DANGEROUS_FUNCTIONS = new Map([
  ["load_extension", "loads a shared library into the database engine"],
  ["readfile", "reads a file"],
  ["writefile", "writes a file"],
  ["edit", "starts an editor"],
  ["fts3_tokenizer", "registers a native tokenizer by its address"],
  ["fsdir", "lists directories of the filesystem"],
  ["lsdir", "lists directories of the filesystem"],
  ["zipfile", "reads and writes zip archives"],
  ["zipfile_cds", "reads zip archives"],
  ["sqlite_dbpage", "reads and writes raw database pages"],
  ["sqlite_dbdata", "reads raw database pages"],
  ["sqlite_dbptr", "reads raw database pages"],
  ["eval", "runs SQL held in a string, which no one has read"],
  ["load_file", "reads a file"],
]);
/** Tables that are views of raw pages: reading or writing them is as dangerous as the function. */
const RAW_TABLES = new Set(["sqlite_dbpage", "sqlite_dbdata", "sqlite_dbptr"]);
/** Table-valued functions named as a table, without arguments (`FROM zipfile`). */
const FILE_TABLES = new Set(["fsdir", "lsdir", "zipfile", "zipfile_cds"]);
/** The schema table under its four names: writable only with writable_schema, never through a tool. */
const SCHEMA_TABLES = new Set(["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"]);
/** Virtual-table modules that keep to the database (full-text search, R*Trees). */
const SAFE_MODULES = new Set(["fts3", "fts4", "fts5", "rtree", "rtree_i32", "geopoly"]);

type Effect = StatementClass | { dangerous: string } | "unknown";

/** The verb of a statement as a person names it. */
function verbOf(head: SqlHead): string {
  if (head.pragma) return `PRAGMA ${head.pragma.name}`;
  if (head.action) return `${head.verb} ${head.action}`;
  if (head.into) return "VACUUM INTO";
  return head.verb;
}

/** What one statement does by itself; the statements inside it are judged on their own. */
function effectOf(head: SqlHead): Effect {
  switch (head.verb) {
    case "PRAGMA":
      return head.pragma ? pragmaEffect(head.pragma.name, head.pragma.valued) : "unknown";
    case "ALTER TABLE":
      return head.action === "DROP COLUMN" ? "drop" : "schema";
    case "ATTACH":
      return { dangerous: "opens another database file" };
    case "DETACH":
      return { dangerous: "detaches a database file" };
    case "VACUUM":
      return head.into ? { dangerous: "writes a copy of the database to a file" } : "write";
    case "CREATE VIRTUAL TABLE":
      if (head.module !== undefined && SAFE_MODULES.has(head.module)) return "schema";
      return {
        dangerous: `makes a virtual table of the module "${head.module}", which can reach files or load code`,
      };
    case "INSERT":
    case "REPLACE":
    case "UPDATE":
    case "DELETE":
      return head.target !== undefined && (SCHEMA_TABLES.has(head.target) || RAW_TABLES.has(head.target))
        ? { dangerous: "writes the schema table or raw pages directly" }
        : "write";
    default:
      return Object.hasOwn(CLASS_OF, head.verb) ? (CLASS_OF[head.verb] as StatementClass) : "unknown";
  }
}

/** What a function or a table named in a statement reaches, if it reaches too far. */
function tableDanger(name: string): string | undefined {
  if (RAW_TABLES.has(name)) return "reads and writes raw database pages";
  return FILE_TABLES.has(name) ? DANGEROUS_FUNCTIONS.get(name) : undefined;
}

function need(statement: SqlStatement, sqlClass: StatementClass, verb: string): void {
  if (!statement.needs.some((n) => n.sqlClass === sqlClass)) statement.needs.push({ sqlClass, verb });
}

/** One top-level statement: its verb, the classes of every statement in it, and the first danger. */
function judge(read: SqlStatementRead): SqlStatement {
  const statement: SqlStatement = { verb: verbOf(read.head), needs: [] };
  for (const head of [read.head, ...read.inner]) {
    const effect = effectOf(head);
    if (effect === "unknown") statement.unknown ??= verbOf(head);
    else if (typeof effect === "object")
      statement.dangerous ??= { verb: verbOf(head), reason: effect.dangerous };
    else need(statement, effect, verbOf(head));
    if (head.reads && typeof effect !== "object") need(statement, "read", verbOf(head));
  }
  for (const call of read.calls) {
    const reason = DANGEROUS_FUNCTIONS.get(call.name);
    if (reason !== undefined) statement.dangerous ??= { verb: `${call.name}()`, reason };
  }
  for (const table of read.tables) {
    const reason = tableDanger(table.name);
    if (reason !== undefined) statement.dangerous ??= { verb: table.name, reason };
  }
  return statement;
}

function read(sql: string): SqlReading {
  if (sql.length > MAX_SQL_LENGTH) {
    return { ok: false, reason: `it is longer than the ${MAX_SQL_LENGTH} characters mcpguard reads` };
  }
  const reading = readSqlite(sql);
  return reading.ok ? { ok: true, statements: reading.statements.map(judge) } : reading;
}

/** Readings of the last texts read: L1 and L2 read the same argument of a call. */
const readings = new Map<string, SqlReading>();
const REMEMBERED = 32;

/** The statements of `sql` under SQLite's grammar, each judged; or why it does not parse. */
export function readSql(sql: string): SqlReading {
  let reading = readings.get(sql);
  if (reading === undefined) {
    reading = read(sql);
    if (readings.size >= REMEMBERED) readings.delete(readings.keys().next().value as string);
    readings.set(sql, reading);
  }
  return reading;
}
