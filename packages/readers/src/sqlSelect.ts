/**
 * SELECT and expressions, after SQLite's grammar (parse.y; sqlite.org/lang_select.html and
 * lang_expr.html). Expressions are read for their shape, not their types: operands and operators
 * alternate, parentheses, CASE ... END, CAST, EXISTS, IN, BETWEEN ... AND, window functions. Every
 * function called is recorded, and every table a FROM, a JOIN or an IN names, with each SELECT
 * inside a statement. A chain of operators is a loop; only parentheses and CASE nest, each level
 * counted against the cursor's depth bound, so no input nests the reader deeper than that.
 */
import { IDJ, IDS, JOIN_KW, NM, nameOf, type SqlCursor } from "./sqlCursor.js";

const BINARY = new Set("|| -> ->> * / % + - << >> & | < <= > >= = == != <>".split(" "));
const LIKE = new Set(["LIKE", "GLOB", "REGEXP", "MATCH"]);
const LITERAL_KEYWORDS = new Set(["NULL", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP"]);
const SELECT_START = new Set(["SELECT", "VALUES", "WITH"]);
const FRAME = new Set(["RANGE", "ROWS", "GROUPS"]);

export const startsSelect = (c: SqlCursor, ahead = 0) => SELECT_START.has(c.kw(ahead) ?? "");

/** An expression. */
export function expr(c: SqlCursor): void {
  const chain = { betweens: 0, like: false };
  for (;;) {
    while (c.isKw("NOT") || c.isOp("-") || c.isOp("+") || c.isOp("~")) c.take();
    operand(c);
    if (!operator(c, chain)) break;
  }
  if (chain.betweens > 0) c.fail('the "AND" of a BETWEEN');
}

function exprList(c: SqlCursor): void {
  do expr(c);
  while (c.acceptOp(","));
}

function operand(c: SqlCursor): void {
  const token = c.peek();
  if (token.type === "number" || token.type === "blob" || token.type === "variable") c.take();
  // 'a'.'b' names a column, as a string may name a table; alone, a string is a literal.
  else if (token.type === "string") {
    if (c.isOp(".", 1)) column(c);
    else c.take();
  } else if (token.type === "op" && token.text === "(") parenthesized(c);
  else if (token.type === "op") c.fail("an expression");
  else wordOperand(c);
}

function wordOperand(c: SqlCursor): void {
  const k = c.kw();
  const call = c.isOp("(", 1);
  if (k !== undefined && LITERAL_KEYWORDS.has(k)) {
    c.take();
  } else if (k === "CASE") {
    caseExpr(c);
  } else if (k === "EXISTS") {
    c.take();
    subquery(c);
  } else if (k === "CAST") {
    cast(c);
  } else if (k === "RAISE") {
    raise(c);
  } else if (c.isName(IDJ)) {
    if (call) functionCall(c);
    else column(c);
  } else {
    c.fail("an expression");
  }
}

/** `column`, `table.column`, `schema.table.column`. */
function column(c: SqlCursor): void {
  if (c.writer) c.writer.reads = true;
  c.take();
  for (let i = 0; i < 2 && c.acceptOp("."); i++) c.name(NM, "a column name");
}

/** `( select )`, `( expr )`, a row value `( expr, expr, ... )`. */
function parenthesized(c: SqlCursor): void {
  c.open();
  if (startsSelect(c)) select(c);
  else exprList(c);
  c.close();
}

function subquery(c: SqlCursor): void {
  c.open();
  select(c);
  c.close();
}

function caseExpr(c: SqlCursor): void {
  c.enter(c.take());
  if (!c.isKw("WHEN")) expr(c);
  c.expectKw("WHEN");
  do {
    expr(c);
    c.expectKw("THEN");
    expr(c);
  } while (c.acceptKw("WHEN"));
  if (c.acceptKw("ELSE")) expr(c);
  c.expectKw("END");
  c.depth--;
}

function cast(c: SqlCursor): void {
  c.take();
  c.open();
  expr(c);
  c.expectKw("AS");
  typeName(c);
  c.close();
}

/** RAISE(IGNORE) or RAISE(ROLLBACK | ABORT | FAIL, message), in a trigger's body. */
function raise(c: SqlCursor): void {
  c.take();
  c.open();
  if (!c.acceptKw("IGNORE")) {
    c.expectKw("ROLLBACK", "ABORT", "FAIL");
    c.expectOp(",");
    expr(c);
  }
  c.close();
}

/**
 * A type: names (`VARCHAR`, `UNSIGNED BIG INT`) and `(n)` or `(n, m)`. As in SQLite, a GENERATED
 * ALWAYS that follows is more of the type, and the AS after it makes the column generated.
 */
export function typeName(c: SqlCursor): void {
  let words = 0;
  while (c.isName(IDS)) {
    c.take();
    words++;
  }
  if (words === 0 || !c.isOp("(")) return;
  c.open();
  signedNumber(c);
  if (c.acceptOp(",")) signedNumber(c);
  c.close();
}

export function signedNumber(c: SqlCursor): void {
  if (!c.acceptOp("+")) c.acceptOp("-");
  if (c.peek().type !== "number") c.fail("a number");
  c.take();
}

/** `name(args)`, aggregates (`count(DISTINCT x)`, `count(*)`, `group_concat(x ORDER BY y)`), FILTER, OVER. */
function functionCall(c: SqlCursor): void {
  const token = c.take();
  c.call(nameOf(token), token.start);
  c.open();
  if (c.isOp("*") && c.isOp(")", 1)) c.take();
  else if (!c.isOp(")")) {
    if (!c.acceptKw("DISTINCT")) c.acceptKw("ALL");
    if (!c.isOp(")")) exprList(c);
    if (c.acceptKw("ORDER")) {
      c.expectKw("BY");
      sortList(c);
    }
  }
  c.close();
  if (c.acceptKw("FILTER")) {
    c.open();
    c.expectKw("WHERE");
    expr(c);
    c.close();
  }
  if (c.acceptKw("OVER")) {
    if (c.isOp("(")) windowSpec(c);
    else c.name(NM, "a window name");
  }
}

/** After an operand: postfix operators, then a binary one (true: an operand must follow). */
function operator(c: SqlCursor, chain: { betweens: number; like: boolean }): boolean {
  for (;;) {
    const token = c.peek();
    if (token.type === "op") {
      if (!BINARY.has(token.text)) return false;
      c.take();
      return true;
    }
    const k = token.keyword;
    if (k === "ISNULL" || k === "NOTNULL") c.take();
    else if (k === "COLLATE") {
      c.take();
      c.name(IDS, "a collation");
    } else if (k === "NOT" && c.isKw("NULL", 1)) {
      c.pos += 2;
    } else if (k === "IN" || (k === "NOT" && c.isKw("IN", 1))) {
      inTail(c);
    } else return binaryKeyword(c, chain);
  }
}

/** IS [NOT] [DISTINCT FROM], AND, OR, [NOT] IN / LIKE / BETWEEN, ESCAPE. */
function binaryKeyword(c: SqlCursor, chain: { betweens: number; like: boolean }): boolean {
  let k = c.kw();
  if (k === "AND") {
    // The AND of a BETWEEN ... AND ... is the BETWEEN's.
    if (chain.betweens > 0) chain.betweens--;
    c.take();
    return true;
  }
  if (k === "OR" && chain.betweens > 0) return c.fail('the "AND" of a BETWEEN');
  if (k === "OR") {
    c.take();
    return true;
  }
  if (k === "IS") {
    c.take();
    c.acceptKw("NOT");
    if (c.acceptKw("DISTINCT")) c.expectKw("FROM");
    return true;
  }
  if (k === "ESCAPE" && chain.like) {
    c.take();
    chain.like = false;
    return true;
  }
  const not = k === "NOT";
  if (not) k = c.kw(1);
  if (k === "BETWEEN" || (k !== undefined && LIKE.has(k))) {
    if (not) c.take();
    c.take();
    if (k === "BETWEEN") chain.betweens++;
    else chain.like = true;
    return true;
  }
  if (not) c.fail('"IN", "LIKE", "BETWEEN" or "NULL" after "NOT"', c.peek(1));
  return false;
}

/** `[NOT] IN (list | select)`, `IN table`, `IN table_function(args)`. */
function inTail(c: SqlCursor): void {
  if (c.acceptKw("NOT")) c.expectKw("IN");
  else c.take();
  if (c.isOp("(")) {
    c.open();
    if (startsSelect(c)) select(c);
    else if (!c.isOp(")")) exprList(c);
    c.close();
  } else {
    const table = c.qualified(NM, "a list or a table after IN");
    if (c.isOp("(")) tableFunctionArgs(c, table.name, table.at);
    else c.table(table);
  }
}

function tableFunctionArgs(c: SqlCursor, name: string, at: number): void {
  c.call(name, at);
  c.open();
  if (!c.isOp(")")) exprList(c);
  c.close();
}

/** ORDER BY terms, and an index's columns: `expr [COLLATE x] [ASC | DESC] [NULLS FIRST | LAST]`. */
export function sortList(c: SqlCursor): void {
  do {
    expr(c);
    if (!c.acceptKw("ASC")) c.acceptKw("DESC");
    if (c.acceptKw("NULLS")) c.expectKw("FIRST", "LAST");
  } while (c.acceptOp(","));
}

/**
 * A SELECT inside another statement: `[WITH ...] core (compound core)* [ORDER BY ...] [LIMIT ...]`.
 * Each core that is a SELECT is recorded as a statement inside the one read.
 */
export function select(c: SqlCursor): void {
  if (c.isKw("WITH")) withClause(c);
  selectBody(c, false);
}

/** A SELECT after its WITH; `own`: it is the statement read, whose first core is no statement inside it. */
export function selectBody(c: SqlCursor, own: boolean): void {
  selectCore(c, own);
  while (c.isKw("UNION") || c.isKw("INTERSECT") || c.isKw("EXCEPT")) {
    if (c.take().keyword === "UNION") c.acceptKw("ALL");
    selectCore(c, false);
  }
  if (c.acceptKw("ORDER")) {
    c.expectKw("BY");
    sortList(c);
  }
  if (c.acceptKw("LIMIT")) {
    expr(c);
    if (c.acceptKw("OFFSET") || c.acceptOp(",")) expr(c);
  }
}

/** WITH [RECURSIVE] name [(columns)] AS [NOT] [MATERIALIZED] (select), ... */
export function withClause(c: SqlCursor): void {
  c.take();
  c.acceptKw("RECURSIVE");
  do {
    c.name(NM, "the name of a common table expression");
    if (c.isOp("(")) nameList(c);
    c.expectKw("AS");
    if (c.acceptKw("NOT")) c.expectKw("MATERIALIZED");
    else c.acceptKw("MATERIALIZED");
    subquery(c);
  } while (c.acceptOp(","));
}

/** `(name, name, ...)`: columns of a CTE, a view, an INSERT, USING, UPDATE OF. */
export function nameList(c: SqlCursor): void {
  c.open();
  do c.name(NM, "a column name");
  while (c.acceptOp(","));
  c.close();
}

function selectCore(c: SqlCursor, own: boolean): void {
  if (c.acceptKw("VALUES")) {
    do parenthesizedList(c);
    while (c.acceptOp(","));
    return;
  }
  if (!own) c.head(true, "SELECT");
  c.expectKw("SELECT", "VALUES");
  if (!c.acceptKw("DISTINCT")) c.acceptKw("ALL");
  resultColumns(c);
  if (c.acceptKw("FROM")) joinSource(c);
  if (c.acceptKw("WHERE")) expr(c);
  if (c.acceptKw("GROUP")) {
    c.expectKw("BY");
    exprList(c);
  }
  if (c.acceptKw("HAVING")) expr(c);
  if (c.acceptKw("WINDOW")) {
    do {
      c.name(NM, "a window name");
      c.expectKw("AS");
      windowSpec(c);
    } while (c.acceptOp(","));
  }
}

function parenthesizedList(c: SqlCursor): void {
  c.open();
  exprList(c);
  c.close();
}

/** Result columns (of a SELECT, of RETURNING): `*`, `table.*`, `expr [[AS] alias]`. */
export function resultColumns(c: SqlCursor): void {
  do {
    if (c.acceptOp("*")) {
      if (c.writer) c.writer.reads = true;
      continue;
    }
    if (c.isName(NM) && c.isOp(".", 1) && c.isOp("*", 2)) {
      if (c.writer) c.writer.reads = true;
      c.pos += 3;
      continue;
    }
    expr(c);
    alias(c);
  } while (c.acceptOp(","));
}

/** `AS name`, or a bare name or string. */
function alias(c: SqlCursor): void {
  if (c.acceptKw("AS")) c.name(NM, "an alias");
  else if (c.isName(IDS)) c.take();
}

/** FROM's tables and subqueries, with their joins. */
export function joinSource(c: SqlCursor): void {
  tableOrSubquery(c);
  for (;;) {
    if (!c.acceptOp(",") && !joinOperator(c)) return;
    tableOrSubquery(c);
  }
}

/** JOIN, or up to three of NATURAL, LEFT, RIGHT, FULL, OUTER, INNER, CROSS before JOIN. */
function joinOperator(c: SqlCursor): boolean {
  if (c.acceptKw("JOIN")) return true;
  if (!c.isName(JOIN_KW)) return false;
  for (let i = 0; i < 3 && c.isName(JOIN_KW); i++) c.take();
  c.expectKw("JOIN");
  return true;
}

function tableOrSubquery(c: SqlCursor): void {
  if (c.isOp("(")) {
    c.open();
    if (startsSelect(c)) select(c);
    else joinSource(c);
    c.close();
    alias(c);
  } else {
    const table = c.qualified(NM, "a table");
    if (c.isOp("(")) tableFunctionArgs(c, table.name, table.at);
    c.table(table);
    alias(c);
    if (c.acceptKw("INDEXED")) {
      c.expectKw("BY");
      c.name(NM, "an index name");
    } else if (c.isKw("NOT") && c.isKw("INDEXED", 1)) {
      c.pos += 2;
    }
  }
  if (c.acceptKw("ON")) expr(c);
  else if (c.isKw("USING")) {
    c.take();
    nameList(c);
  }
}

/** A window: `( [base] [PARTITION BY ...] [ORDER BY ...] [frame] )`. */
function windowSpec(c: SqlCursor): void {
  c.open();
  // PARTITION, RANGE, ROWS and GROUPS are keywords here, never the base window's name.
  if (c.isName(NM) && !c.isKw("PARTITION") && !FRAME.has(c.kw() ?? "")) c.take();
  if (c.acceptKw("PARTITION")) {
    c.expectKw("BY");
    exprList(c);
  }
  if (c.acceptKw("ORDER")) {
    c.expectKw("BY");
    sortList(c);
  }
  if (FRAME.has(c.kw() ?? "")) frame(c);
  c.close();
}

/** RANGE | ROWS | GROUPS, one bound or BETWEEN two, and EXCLUDE. */
function frame(c: SqlCursor): void {
  c.take();
  if (c.acceptKw("BETWEEN")) {
    frameBound(c);
    c.expectKw("AND");
    frameBound(c);
  } else {
    frameBound(c);
  }
  if (c.acceptKw("EXCLUDE")) {
    if (c.acceptKw("NO")) c.expectKw("OTHERS");
    else if (c.acceptKw("CURRENT")) c.expectKw("ROW");
    else c.expectKw("GROUP", "TIES");
  }
}

function frameBound(c: SqlCursor): void {
  if (c.acceptKw("UNBOUNDED")) c.expectKw("PRECEDING", "FOLLOWING");
  else if (c.acceptKw("CURRENT")) c.expectKw("ROW");
  else {
    expr(c);
    c.expectKw("PRECEDING", "FOLLOWING");
  }
}
