/**
 * SQLite's statements, read after its grammar (parse.y; the syntax diagrams of sqlite.org/lang.html)
 * from the tokens of its tokenizer (`sqlLexer.ts`). Synchronous and linear: no backtracking (a
 * decision looks at most three tokens ahead), and nesting is bounded (`MAX_DEPTH`).
 *
 * A text is statements split at `;` (a trigger's body, between BEGIN and END, holds its own). Each
 * is read to the end: its verb, then the skeleton of that verb, with expressions read for their
 * shape (`sqlSelect.ts`). What is recorded is what a judgment needs: the statement and the
 * statements inside it (each SELECT, a trigger's body, what EXPLAIN explains), the table each
 * writes, every function called and every table named. Where the text is not SQL that SQLite would
 * read, there is no reading, and the reason says what was expected and where. The reader does not
 * judge names (a table that does not exist, a wrong count of arguments): SQLite does.
 */

import {
  ID,
  IDS,
  NM,
  nameOf,
  SqlCursor,
  type SqlHead,
  type SqlName,
  type SqlStatementRead,
} from "./sqlCursor.js";
import { SqlSyntaxError, tokenize } from "./sqlLexer.js";
import {
  expr,
  joinSource,
  nameList,
  resultColumns,
  select,
  selectBody,
  signedNumber,
  sortList,
  startsSelect,
  typeName,
  withClause,
} from "./sqlSelect.js";

export type { SqlHead, SqlStatementRead } from "./sqlCursor.js";

export type SqlRead = { ok: true; statements: SqlStatementRead[] } | { ok: false; reason: string };

/** The statements of `sql`, read with SQLite's grammar; or why it is not SQL that SQLite reads. */
export function readSqlite(sql: string): SqlRead {
  try {
    const c = new SqlCursor(sql, tokenize(sql));
    const statements: SqlStatementRead[] = [];
    while (!c.atEnd()) {
      if (c.acceptOp(";")) continue;
      c.read = SqlCursor.fresh();
      statement(c);
      statements.push(c.read);
      if (!c.atEnd() && !c.acceptOp(";")) c.fail("the end of the statement");
    }
    return { ok: true, statements };
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
    return { ok: false, reason: `${error.problem} at ${position(sql, error.at)}` };
  }
}

/** `line L, column C` of an offset, both counted from 1. */
function position(sql: string, at: number): string {
  let line = 1;
  let start = 0;
  for (let i = sql.indexOf("\n"); i !== -1 && i < at; i = sql.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return `line ${line}, column ${at - start + 1}`;
}

/** `[EXPLAIN [QUERY PLAN]] command`. */
function statement(c: SqlCursor): void {
  if (!c.isKw("EXPLAIN")) {
    command(c, false);
    return;
  }
  c.head(false, "EXPLAIN");
  c.take();
  if (c.acceptKw("QUERY")) c.expectKw("PLAN");
  if (c.isKw("EXPLAIN")) c.fail("a statement to explain");
  command(c, true);
}

const COMMANDS: Readonly<Record<string, (c: SqlCursor, head: SqlHead) => void>> = {
  WITH: withStatement,
  SELECT: (c, head) => selectStatement(c, head),
  VALUES: (c, head) => selectStatement(c, head),
  INSERT: insert,
  REPLACE: insert,
  UPDATE: update,
  DELETE: deleteFrom,
  CREATE: create,
  DROP: drop,
  ALTER: alter,
  ATTACH: attach,
  DETACH: detach,
  VACUUM: vacuum,
  PRAGMA: pragma,
  ANALYZE: analyze,
  REINDEX: analyze,
  BEGIN: transaction,
  COMMIT: transaction,
  END: transaction,
  ROLLBACK: transaction,
  SAVEPOINT: savepoint,
  RELEASE: savepoint,
};

/** One statement, by its first keyword. */
function command(c: SqlCursor, nested: boolean): void {
  const k = c.kw();
  const read = k !== undefined && Object.hasOwn(COMMANDS, k) ? COMMANDS[k] : undefined;
  if (!read) c.fail("a statement");
  read(c, c.head(nested));
}

function selectStatement(c: SqlCursor, head: SqlHead): void {
  head.verb = c.isKw("VALUES") ? "VALUES" : "SELECT";
  selectBody(c, true);
}

/** WITH ... then SELECT, INSERT, UPDATE or DELETE. */
function withStatement(c: SqlCursor, head: SqlHead): void {
  withClause(c);
  const k = c.kw();
  if (k === "SELECT" || k === "VALUES") selectStatement(c, head);
  else if (k === "INSERT" || k === "REPLACE") insert(c, head);
  else if (k === "UPDATE") update(c, head);
  else if (k === "DELETE") deleteFrom(c, head);
  else c.fail("SELECT, VALUES, INSERT, REPLACE, UPDATE or DELETE after WITH");
}

function conflictResolution(c: SqlCursor): void {
  c.expectKw("ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE");
}

/** The table a statement writes: recorded as a table and as the statement's target. */
function target(c: SqlCursor, head: SqlHead): SqlName {
  const table = c.qualified(NM, "a table");
  c.table(table);
  head.target = table.name;
  return table;
}

/** Read a write statement with `head` as the statement its column names make read. */
function writing(c: SqlCursor, head: SqlHead, read: (c: SqlCursor, head: SqlHead) => void): void {
  const outer = c.writer;
  c.writer = head;
  try {
    read(c, head);
  } finally {
    c.writer = outer;
  }
}

function insert(c: SqlCursor, head: SqlHead): void {
  writing(c, head, insertStatement);
}
function update(c: SqlCursor, head: SqlHead): void {
  writing(c, head, updateStatement);
}
function deleteFrom(c: SqlCursor, head: SqlHead): void {
  writing(c, head, deleteStatement);
}

/** INSERT [OR x] | REPLACE INTO t [AS a] [(cols)] (VALUES ... | select | DEFAULT VALUES) [upsert] [RETURNING]. */
function insertStatement(c: SqlCursor, head: SqlHead): void {
  head.verb = c.take().keyword === "REPLACE" ? "REPLACE" : "INSERT";
  if (head.verb === "INSERT" && c.acceptKw("OR")) conflictResolution(c);
  c.expectKw("INTO");
  target(c, head);
  if (c.acceptKw("AS")) c.name(NM, "an alias");
  if (c.isOp("(")) nameList(c);
  if (c.acceptKw("DEFAULT")) c.expectKw("VALUES");
  else {
    if (!startsSelect(c)) c.fail("VALUES, SELECT or DEFAULT VALUES");
    select(c);
    while (c.isKw("ON") && c.isKw("CONFLICT", 1)) upsert(c);
  }
  returning(c);
}

/** ON CONFLICT [(columns) [WHERE expr]] DO NOTHING | DO UPDATE SET ... [WHERE expr]. */
function upsert(c: SqlCursor): void {
  c.pos += 2;
  if (c.isOp("(")) {
    c.open();
    sortList(c);
    c.close();
    if (c.acceptKw("WHERE")) expr(c);
  }
  c.expectKw("DO");
  if (c.acceptKw("NOTHING")) return;
  c.expectKw("UPDATE", "NOTHING");
  c.expectKw("SET");
  setList(c);
  if (c.acceptKw("WHERE")) expr(c);
}

/** `column = expr` and `(a, b) = expr`, separated by commas. */
function setList(c: SqlCursor): void {
  do {
    if (c.isOp("(")) nameList(c);
    else c.name(NM, "a column name");
    c.expectOp("=");
    expr(c);
  } while (c.acceptOp(","));
}

function returning(c: SqlCursor): void {
  if (c.acceptKw("RETURNING")) resultColumns(c);
}

/** The table of UPDATE and DELETE: `[schema.]table [AS alias] [INDEXED BY i | NOT INDEXED]`. */
function qualifiedTarget(c: SqlCursor, head: SqlHead): void {
  target(c, head);
  if (c.acceptKw("AS")) c.name(NM, "an alias");
  if (c.acceptKw("INDEXED")) {
    c.expectKw("BY");
    c.name(NM, "an index name");
  } else if (c.isKw("NOT") && c.isKw("INDEXED", 1)) {
    c.pos += 2;
  }
}

/** ORDER BY and LIMIT of UPDATE and DELETE (SQLITE_ENABLE_UPDATE_DELETE_LIMIT). */
function orderAndLimit(c: SqlCursor): void {
  if (c.acceptKw("ORDER")) {
    c.expectKw("BY");
    sortList(c);
  }
  if (c.acceptKw("LIMIT")) {
    expr(c);
    if (c.acceptKw("OFFSET") || c.acceptOp(",")) expr(c);
  }
}

/** UPDATE [OR x] t SET ... [FROM ...] [WHERE ...] [RETURNING ...]. */
function updateStatement(c: SqlCursor, head: SqlHead): void {
  head.verb = "UPDATE";
  c.take();
  if (c.acceptKw("OR")) conflictResolution(c);
  qualifiedTarget(c, head);
  c.expectKw("SET");
  setList(c);
  if (c.acceptKw("FROM")) joinSource(c);
  if (c.acceptKw("WHERE")) expr(c);
  returning(c);
  orderAndLimit(c);
}

/** DELETE FROM t [WHERE ...] [RETURNING ...]. */
function deleteStatement(c: SqlCursor, head: SqlHead): void {
  head.verb = "DELETE";
  c.take();
  c.expectKw("FROM");
  qualifiedTarget(c, head);
  if (c.acceptKw("WHERE")) expr(c);
  returning(c);
  orderAndLimit(c);
}

/** IF NOT EXISTS. */
function ifNotExists(c: SqlCursor): void {
  if (!c.acceptKw("IF")) return;
  c.expectKw("NOT");
  c.expectKw("EXISTS");
}

/** CREATE [TEMP] TABLE | VIEW | TRIGGER, CREATE [UNIQUE] INDEX, CREATE VIRTUAL TABLE. */
function create(c: SqlCursor, head: SqlHead): void {
  c.take();
  const temp = c.acceptKw("TEMP");
  const k = c.kw();
  if (k === "TABLE") createTable(c, head);
  else if (k === "VIEW") createView(c, head);
  else if (k === "TRIGGER") createTrigger(c, head);
  else if (temp) c.fail("TABLE, VIEW or TRIGGER after TEMP");
  else if (k === "UNIQUE" || k === "INDEX") createIndex(c, head);
  else if (k === "VIRTUAL") createVirtualTable(c, head);
  else c.fail("TABLE, INDEX, VIEW, TRIGGER or VIRTUAL TABLE");
}

function createTable(c: SqlCursor, head: SqlHead): void {
  head.verb = "CREATE TABLE";
  c.take();
  ifNotExists(c);
  c.table(c.qualified(NM, "a table name"));
  if (c.acceptKw("AS")) {
    select(c);
    return;
  }
  c.open();
  columnDefinition(c);
  while (c.acceptOp(",")) {
    if (startsTableConstraint(c)) {
      tableConstraints(c);
      break;
    }
    columnDefinition(c);
  }
  c.close();
  // Table options: WITHOUT ROWID, STRICT.
  if (c.isKw("WITHOUT") || c.isName(NM)) {
    do {
      if (c.acceptKw("WITHOUT")) c.name(NM, "ROWID");
      else c.name(NM, "a table option");
    } while (c.acceptOp(","));
  }
}

/** `name [type] [constraints]`. */
function columnDefinition(c: SqlCursor): void {
  c.name(NM, "a column name");
  typeName(c);
  for (;;) {
    if (c.acceptKw("CONSTRAINT")) c.name(NM, "a constraint name");
    else if (!columnConstraint(c)) return;
  }
}

/** One column constraint; false when there is none here. */
function columnConstraint(c: SqlCursor): boolean {
  switch (c.kw()) {
    case "PRIMARY":
      c.take();
      c.expectKw("KEY");
      if (!c.acceptKw("ASC")) c.acceptKw("DESC");
      onConflict(c);
      c.acceptKw("AUTOINCREMENT");
      return true;
    case "NOT":
      if (c.isKw("DEFERRABLE", 1)) return deferrable(c);
      c.take();
      c.expectKw("NULL", "DEFERRABLE");
      onConflict(c);
      return true;
    case "NULL":
    case "UNIQUE":
      c.take();
      onConflict(c);
      return true;
    case "CHECK":
      c.take();
      return parenthesizedExpression(c, false);
    case "AS":
      c.take();
      return parenthesizedExpression(c, true);
    default:
      return otherConstraint(c);
  }
}

function otherConstraint(c: SqlCursor): boolean {
  switch (c.kw()) {
    case "DEFAULT":
      c.take();
      defaultValue(c);
      return true;
    case "COLLATE":
      c.take();
      c.name(IDS, "a collation");
      return true;
    case "REFERENCES":
      foreignKey(c);
      return true;
    case "DEFERRABLE":
      return deferrable(c);
    default:
      return false;
  }
}

/** `(expr)`; after a generated column's, STORED or VIRTUAL. */
function parenthesizedExpression(c: SqlCursor, generated: boolean): true {
  c.open();
  expr(c);
  c.close();
  if (generated && c.isName(ID)) c.take();
  return true;
}

/** DEFAULT (expr) | [+|-] literal | name. */
function defaultValue(c: SqlCursor): void {
  if (c.isOp("(")) {
    parenthesizedExpression(c, false);
    return;
  }
  const signed = c.acceptOp("+") || c.acceptOp("-");
  const token = c.peek();
  const k = token.keyword;
  const literal =
    token.type === "number" ||
    token.type === "string" ||
    token.type === "blob" ||
    k === "NULL" ||
    k === "CURRENT_DATE" ||
    k === "CURRENT_TIME" ||
    k === "CURRENT_TIMESTAMP";
  if (literal || (!signed && c.isName(ID))) c.take();
  else c.fail("a default value");
}

function onConflict(c: SqlCursor): void {
  if (!c.isKw("ON")) return;
  c.take();
  c.expectKw("CONFLICT");
  conflictResolution(c);
}

/** REFERENCES t [(columns)] [ON DELETE|UPDATE action | MATCH name]... [[NOT] DEFERRABLE ...]. */
function foreignKey(c: SqlCursor): void {
  c.take();
  c.table(c.qualified(NM, "a table name"));
  if (c.isOp("(")) nameList(c);
  for (;;) {
    if (c.acceptKw("MATCH")) c.name(NM, "a match type");
    else if (c.acceptKw("ON")) {
      c.expectKw("DELETE", "UPDATE");
      foreignKeyAction(c);
    } else break;
  }
  if (c.isKw("DEFERRABLE") || (c.isKw("NOT") && c.isKw("DEFERRABLE", 1))) deferrable(c);
}

function foreignKeyAction(c: SqlCursor): void {
  if (c.acceptKw("SET")) c.expectKw("NULL", "DEFAULT");
  else if (c.acceptKw("NO")) c.expectKw("ACTION");
  else c.expectKw("CASCADE", "RESTRICT", "SET", "NO");
}

/** [NOT] DEFERRABLE [INITIALLY DEFERRED | IMMEDIATE]. */
function deferrable(c: SqlCursor): true {
  c.acceptKw("NOT");
  c.expectKw("DEFERRABLE");
  if (c.acceptKw("INITIALLY")) c.expectKw("DEFERRED", "IMMEDIATE");
  return true;
}

const TABLE_CONSTRAINTS = new Set(["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]);
const startsTableConstraint = (c: SqlCursor) => TABLE_CONSTRAINTS.has(c.kw() ?? "");

/** Table constraints, separated by commas (or by nothing, as SQLite allows). */
function tableConstraints(c: SqlCursor): void {
  do {
    if (c.acceptKw("CONSTRAINT")) c.name(NM, "a constraint name");
    const k = c.expectKw("PRIMARY", "UNIQUE", "CHECK", "FOREIGN");
    if (k === "CHECK") parenthesizedExpression(c, false);
    else if (k === "FOREIGN") {
      c.expectKw("KEY");
      nameList(c);
      if (!c.isKw("REFERENCES")) c.fail("REFERENCES");
      foreignKey(c);
      continue;
    } else {
      if (k === "PRIMARY") c.expectKw("KEY");
      c.open();
      sortList(c);
      c.acceptKw("AUTOINCREMENT");
      c.close();
    }
    onConflict(c);
  } while (c.acceptOp(",") || startsTableConstraint(c));
}

/** CREATE [TEMP] VIEW [IF NOT EXISTS] v [(columns)] AS select. */
function createView(c: SqlCursor, head: SqlHead): void {
  head.verb = "CREATE VIEW";
  c.take();
  ifNotExists(c);
  c.qualified(NM, "a view name");
  if (c.isOp("(")) nameList(c);
  c.expectKw("AS");
  select(c);
}

/** CREATE [UNIQUE] INDEX [IF NOT EXISTS] i ON t (columns) [WHERE expr]. */
function createIndex(c: SqlCursor, head: SqlHead): void {
  head.verb = "CREATE INDEX";
  c.acceptKw("UNIQUE");
  c.expectKw("INDEX");
  ifNotExists(c);
  c.qualified(NM, "an index name");
  c.expectKw("ON");
  c.table(c.qualified(NM, "a table name"));
  c.open();
  sortList(c);
  c.close();
  if (c.acceptKw("WHERE")) expr(c);
}

/** CREATE VIRTUAL TABLE [IF NOT EXISTS] t USING module [(arguments)]. */
function createVirtualTable(c: SqlCursor, head: SqlHead): void {
  head.verb = "CREATE VIRTUAL TABLE";
  c.take();
  c.expectKw("TABLE");
  ifNotExists(c);
  c.table(c.qualified(NM, "a table name"));
  c.expectKw("USING");
  head.module = c.name(NM, "a module name");
  if (c.isOp("(")) moduleArguments(c);
}

/**
 * A module's arguments are its own text, which SQLite hands over unread: any tokens, parentheses
 * balanced. A name given to an option (`content=t` of fts5) may be a table the module reads: it
 * is recorded as one.
 */
function moduleArguments(c: SqlCursor): void {
  c.take();
  for (let depth = 1; depth > 0; ) {
    const token = c.take();
    if (token.type === "end" || (token.type === "op" && token.text === ";")) c.fail('")"', token);
    if (token.type === "op" && token.text === "(") depth++;
    else if (token.type === "op" && token.text === ")") depth--;
    else if (token.type === "op" && token.text === "=" && c.isName(NM)) {
      c.table({ name: nameOf(c.peek()), at: c.peek().start });
    }
  }
}

/**
 * CREATE [TEMP] TRIGGER [IF NOT EXISTS] t [BEFORE | AFTER | INSTEAD OF] DELETE | INSERT | UPDATE
 * [OF columns] ON table [FOR EACH ROW] [WHEN expr] BEGIN statement; ... END.
 */
function createTrigger(c: SqlCursor, head: SqlHead): void {
  head.verb = "CREATE TRIGGER";
  c.take();
  ifNotExists(c);
  c.qualified(NM, "a trigger name");
  if (!c.acceptKw("BEFORE") && !c.acceptKw("AFTER") && c.acceptKw("INSTEAD")) c.expectKw("OF");
  const event = c.expectKw("DELETE", "INSERT", "UPDATE");
  if (event === "UPDATE" && c.acceptKw("OF")) {
    do c.name(NM, "a column name");
    while (c.acceptOp(","));
  }
  c.expectKw("ON");
  c.table(c.qualified(NM, "a table name"));
  if (c.acceptKw("FOR")) {
    c.expectKw("EACH");
    c.expectKw("ROW");
  }
  if (c.acceptKw("WHEN")) expr(c);
  c.expectKw("BEGIN");
  do {
    triggerStatement(c);
    c.expectOp(";");
  } while (!c.acceptKw("END"));
}

/** A statement of a trigger's body: INSERT, REPLACE, UPDATE, DELETE or SELECT. */
function triggerStatement(c: SqlCursor): void {
  const k = c.kw();
  if (k === "INSERT" || k === "REPLACE") insert(c, c.head(true));
  else if (k === "UPDATE") update(c, c.head(true));
  else if (k === "DELETE") deleteFrom(c, c.head(true));
  else if (startsSelect(c)) select(c);
  else c.fail("INSERT, UPDATE, DELETE or SELECT in a trigger's body (or END after a ;)");
}

/** DROP TABLE | INDEX | VIEW | TRIGGER [IF EXISTS] [schema.]name. */
function drop(c: SqlCursor, head: SqlHead): void {
  c.take();
  const kind = c.expectKw("TABLE", "INDEX", "VIEW", "TRIGGER");
  head.verb = `DROP ${kind}`;
  if (c.acceptKw("IF")) c.expectKw("EXISTS");
  const name = c.qualified(NM, `a ${kind.toLowerCase()} name`);
  if (kind === "TABLE") c.table(name);
}

/** ALTER TABLE t RENAME TO n | RENAME [COLUMN] a TO b | ADD [COLUMN] definition | DROP [COLUMN] c. */
function alter(c: SqlCursor, head: SqlHead): void {
  head.verb = "ALTER TABLE";
  c.take();
  c.expectKw("TABLE");
  c.table(c.qualified(NM, "a table name"));
  const k = c.expectKw("RENAME", "ADD", "DROP");
  if (k === "RENAME" && c.acceptKw("TO")) {
    head.action = "RENAME TO";
    c.name(NM, "a table name");
    return;
  }
  c.acceptKw("COLUMN");
  head.action = `${k} COLUMN`;
  if (k === "ADD") {
    columnDefinition(c);
    return;
  }
  c.name(NM, "a column name");
  if (k === "RENAME") {
    c.expectKw("TO");
    c.name(NM, "a column name");
  }
}

/** ATTACH [DATABASE] file AS schema [KEY key]. */
function attach(c: SqlCursor, head: SqlHead): void {
  head.verb = "ATTACH";
  c.take();
  c.acceptKw("DATABASE");
  expr(c);
  c.expectKw("AS");
  expr(c);
  if (c.acceptKw("KEY")) expr(c);
}

function detach(c: SqlCursor, head: SqlHead): void {
  head.verb = "DETACH";
  c.take();
  c.acceptKw("DATABASE");
  expr(c);
}

/** VACUUM [schema] [INTO file]. */
function vacuum(c: SqlCursor, head: SqlHead): void {
  head.verb = "VACUUM";
  c.take();
  if (c.isName(NM)) c.take();
  if (c.acceptKw("INTO")) {
    head.into = true;
    expr(c);
  }
}

/** PRAGMA [schema.]name [= value | (value)]; a value is a signed number, a name, ON, DELETE or DEFAULT. */
function pragma(c: SqlCursor, head: SqlHead): void {
  head.verb = "PRAGMA";
  c.take();
  const { name } = c.qualified(NM, "a pragma name");
  let valued = false;
  if (c.acceptOp("=")) {
    valued = true;
    pragmaValue(c);
  } else if (c.isOp("(")) {
    valued = true;
    c.open();
    pragmaValue(c);
    c.close();
  }
  head.pragma = { name, valued };
}

function pragmaValue(c: SqlCursor): void {
  const token = c.peek();
  if (token.type === "number" || c.isOp("+") || c.isOp("-")) signedNumber(c);
  else if (c.isName(NM) || c.isKw("ON") || c.isKw("DELETE") || c.isKw("DEFAULT")) c.take();
  else c.fail("a pragma value");
}

/** ANALYZE | REINDEX [[schema.]name]. */
function analyze(c: SqlCursor, head: SqlHead): void {
  head.verb = c.take().keyword as string;
  if (c.isName(NM)) c.qualified(NM);
}

/** BEGIN [DEFERRED | IMMEDIATE | EXCLUSIVE], COMMIT | END, ROLLBACK [TO [SAVEPOINT] s]: [TRANSACTION [name]]. */
function transaction(c: SqlCursor, head: SqlHead): void {
  const k = c.take().keyword;
  head.verb = k === "END" ? "COMMIT" : (k as string);
  if (k === "BEGIN" && !c.acceptKw("DEFERRED") && !c.acceptKw("IMMEDIATE")) c.acceptKw("EXCLUSIVE");
  if (c.acceptKw("TRANSACTION") && c.isName(NM)) c.take();
  if (k === "ROLLBACK" && c.acceptKw("TO")) {
    c.acceptKw("SAVEPOINT");
    c.name(NM, "a savepoint name");
  }
}

/** SAVEPOINT s, RELEASE [SAVEPOINT] s. */
function savepoint(c: SqlCursor, head: SqlHead): void {
  const k = c.take().keyword as string;
  head.verb = k;
  if (k === "RELEASE") c.acceptKw("SAVEPOINT");
  c.name(NM, "a savepoint name");
}
