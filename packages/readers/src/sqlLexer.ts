/**
 * SQLite's tokenizer, rule for rule: `sqlite3GetToken` in SQLite's `tokenize.c`, whose tokens
 * sqlite.org documents in lang_keywords.html and lang_expr.html. Whitespace and comments (`--` to
 * the end of the line; `/* ... *​/`, which the end of the text closes) separate tokens and are
 * dropped. Strings are '...' with '' for a quote; names may be quoted "...", [...] or `...`, and a
 * quoted name is a name, never a keyword; blobs are x'..' with an even count of hex digits;
 * numbers take `1e5`, `.5`, `5.`, `0x1F` and digit separators (`1_000`); parameters are `?`,
 * `?NNN`, `:name`, `@name`, `$name` and `#name`, with the TCL forms SQLite accepts (`$a::b`,
 * `$a(x)`, in which a `;` or a quote is part of the parameter); `#` and a digit is a register
 * of SQLite's own nested statements, which its parser refuses in a statement of the text.
 *
 * Where SQLite would refuse a text (`unrecognized token`), so does this: a string or a quoted name
 * left open, a malformed number or blob, a character SQLite does not know. A NUL is refused too:
 * SQLite stops reading at it, and what follows it would be read by no one.
 */

type SqlTokenType = "word" | "quoted" | "string" | "blob" | "number" | "variable" | "op" | "end";

export interface SqlToken {
  type: SqlTokenType;
  /** Offsets in the text of its first character and of the character after its last. */
  start: number;
  end: number;
  /** The text as written (an operator's, a word's, a quoted name with its quotes). */
  text: string;
  /** A word that is one of SQLite's keywords: the keyword, upper case (`TEMPORARY` is `TEMP`). */
  keyword?: string;
}

/** Where and why a text is not SQL that SQLite would read. */
export class SqlSyntaxError extends Error {
  override readonly name = "SqlSyntaxError";
  constructor(
    readonly problem: string,
    readonly at: number,
  ) {
    super(problem);
  }
}

/** SQLite's 147 keywords (sqlite.org/lang_keywords.html). */
const KEYWORDS = new Set(
  `ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN
  BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT
  CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC
  DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS EXPLAIN FAIL FILTER
  FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE IMMEDIATE IN
  INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE
  LIMIT MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS
  OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP
  REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT ROLLBACK ROW ROWS SAVEPOINT SELECT SET
  TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING VACUUM
  VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`.split(/\s+/),
);

/** Operators of two characters, then of one; `-`, `->`, `->>` and `/` are read with comments. */
const OPERATORS_2 = new Set(["||", "<=", "<>", "<<", ">=", ">>", "==", "!="]);
const OPERATORS_1 = new Set(["(", ")", ";", "+", "*", "%", ",", "&", "~", "|", "<", ">", "=", "."]);

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/** sqlite3Isspace: tab, newline, vertical tab, form feed, carriage return, space. */
const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
/** IdChar: letters, digits, `_`, `$`, and every character beyond ASCII (a UTF-8 byte >= 0x80). */
const isIdChar = (c: number) => isLetter(c) || isDigit(c) || c === 0x5f || c === 0x24 || c >= 0x80;

/** The tokens of `sql`, comments and whitespace dropped; a {@link SqlSyntaxError} where SQLite would stop. */
export function tokenize(sql: string): SqlToken[] {
  const nul = sql.indexOf("\0");
  if (nul !== -1) throw new SqlSyntaxError("a NUL character (SQLite would read no further)", nul);
  const tokens: SqlToken[] = [];
  let i = 0;
  while (i < sql.length) i = scan(sql, i, tokens);
  markContextKeywords(tokens);
  return tokens;
}

/** Read the token at `i` into `out` (none for whitespace and comments); the offset after it. */
function scan(sql: string, i: number, out: SqlToken[]): number {
  const c = sql.charCodeAt(i);
  // Vertical tab continues whitespace but cannot begin it (SQLite's character classes).
  if (isSpace(c) && c !== 0x0b) {
    let j = i + 1;
    while (isSpace(sql.charCodeAt(j))) j++;
    return j;
  }
  if (c === 0xfeff) return i + 1; // a byte-order mark is whitespace
  if (c === 0x2d) return minus(sql, i, out);
  if (c === 0x2f) return slash(sql, i, out);
  if (c === 0x27 || c === 0x22 || c === 0x60) return quoted(sql, i, out);
  if (c === 0x5b) return bracketed(sql, i, out);
  if (isDigit(c) || (c === 0x2e && isDigit(sql.charCodeAt(i + 1)))) return number(sql, i, out);
  if (c === 0x3f) return numberedVariable(sql, i, out);
  if (c === 0x24 || c === 0x40 || c === 0x3a || c === 0x23) return namedVariable(sql, i, out);
  if ((c === 0x78 || c === 0x58) && sql.charCodeAt(i + 1) === 0x27) return blob(sql, i, out);
  if (isLetter(c) || c === 0x5f || c >= 0x80) return word(sql, i, out);
  return operator(sql, i, out);
}

function push(out: SqlToken[], sql: string, type: SqlTokenType, start: number, end: number): number {
  // Every token has the same shape (keyword included), which keeps the reader's property reads fast.
  out.push({ type, start, end, text: sql.slice(start, end), keyword: undefined });
  return end;
}

/** `--` comment to the end of the line, `->>`, `->`, or minus. */
function minus(sql: string, i: number, out: SqlToken[]): number {
  const next = sql.charCodeAt(i + 1);
  if (next === 0x2d) {
    const eol = sql.indexOf("\n", i + 2);
    return eol === -1 ? sql.length : eol;
  }
  if (next === 0x3e) return push(out, sql, "op", i, sql.charCodeAt(i + 2) === 0x3e ? i + 3 : i + 2);
  return push(out, sql, "op", i, i + 1);
}

/** A block comment, which the end of the text closes (but `/*` as the last two characters is `/` and `*`). */
function slash(sql: string, i: number, out: SqlToken[]): number {
  if (sql.charCodeAt(i + 1) !== 0x2a || i + 2 >= sql.length) return push(out, sql, "op", i, i + 1);
  const close = sql.indexOf("*/", i + 2);
  return close === -1 ? sql.length : close + 2;
}

/** '...' is a string; "..." and `...` are names. A doubled quote stands for the quote. */
function quoted(sql: string, i: number, out: SqlToken[]): number {
  const quote = sql[i] as string;
  let j = i + 1;
  for (;;) {
    const close = sql.indexOf(quote, j);
    if (close === -1) {
      const what = quote === "'" ? "string" : "quoted name";
      throw new SqlSyntaxError(`an unterminated ${what}`, i);
    }
    if (sql[close + 1] !== quote) return push(out, sql, quote === "'" ? "string" : "quoted", i, close + 1);
    j = close + 2;
  }
}

/** [name]: to the first `]`, with no escape. */
function bracketed(sql: string, i: number, out: SqlToken[]): number {
  const close = sql.indexOf("]", i + 1);
  if (close === -1) throw new SqlSyntaxError("an unterminated quoted name", i);
  return push(out, sql, "quoted", i, close + 1);
}

/** Digits, with `_` between two digits (SQLite 3.46 and later). */
function digits(sql: string, j: number, hex: boolean): number {
  const digit = hex ? isHexDigit : isDigit;
  for (;;) {
    const c = sql.charCodeAt(j);
    if (digit(c)) j++;
    else if (c === 0x5f && digit(sql.charCodeAt(j - 1)) && digit(sql.charCodeAt(j + 1))) j++;
    else if (c === 0x5f) throw new SqlSyntaxError("a malformed number", j);
    else return j;
  }
}

function number(sql: string, i: number, out: SqlToken[]): number {
  let j: number;
  const c1 = sql.charCodeAt(i + 1);
  if (sql[i] === "0" && (c1 === 0x78 || c1 === 0x58) && isHexDigit(sql.charCodeAt(i + 2))) {
    j = digits(sql, i + 2, true);
  } else {
    j = digits(sql, i, false);
    if (sql[j] === ".") j = digits(sql, j + 1, false);
    const e = sql.charCodeAt(j);
    const sign = sql[j + 1] === "+" || sql[j + 1] === "-" ? 1 : 0;
    if ((e === 0x65 || e === 0x45) && isDigit(sql.charCodeAt(j + 1 + sign)))
      j = digits(sql, j + 1 + sign, false);
  }
  if (isIdChar(sql.charCodeAt(j))) throw new SqlSyntaxError("a malformed number", i);
  return push(out, sql, "number", i, j);
}

function numberedVariable(sql: string, i: number, out: SqlToken[]): number {
  let j = i + 1;
  while (isDigit(sql.charCodeAt(j))) j++;
  return push(out, sql, "variable", i, j);
}

/** :name, @name, $name, #name; with TCL's `::` inside the name and a `(...)` suffix without spaces. */
function namedVariable(sql: string, i: number, out: SqlToken[]): number {
  let j = i + 1;
  let n = 0;
  for (;;) {
    const c = sql.charCodeAt(j);
    if (isIdChar(c)) {
      n++;
      j++;
    } else if (c === 0x28 && n > 0) {
      j++;
      while (j < sql.length && !isSpace(sql.charCodeAt(j)) && sql[j] !== ")") j++;
      if (sql[j] !== ")") throw new SqlSyntaxError("a malformed parameter", i);
      j++;
      break;
    } else if (c === 0x3a && sql.charCodeAt(j + 1) === 0x3a) {
      j += 2;
    } else {
      break;
    }
  }
  if (n === 0) throw new SqlSyntaxError("a parameter without a name", i);
  // `#1` is a register of SQLite's own nested statements: in a statement of the text, a syntax error.
  if (sql[i] === "#" && isDigit(sql.charCodeAt(i + 1)))
    throw new SqlSyntaxError("a register (#N), not a parameter", i);
  return push(out, sql, "variable", i, j);
}

function blob(sql: string, i: number, out: SqlToken[]): number {
  let j = i + 2;
  while (isHexDigit(sql.charCodeAt(j))) j++;
  if (sql[j] !== "'" || (j - i) % 2 !== 0) throw new SqlSyntaxError("a malformed blob literal", i);
  return push(out, sql, "blob", i, j + 1);
}

function word(sql: string, i: number, out: SqlToken[]): number {
  let j = i;
  // Keywords are letters and `_`; SQLite folds case in ASCII only, so no other word is one.
  let keywordLike = true;
  for (let c = sql.charCodeAt(j); isIdChar(c); c = sql.charCodeAt(++j)) {
    if (!isLetter(c) && c !== 0x5f) keywordLike = false;
  }
  const end = push(out, sql, "word", i, j);
  if (keywordLike && j - i <= 17) {
    const token = out[out.length - 1] as SqlToken;
    const upper = token.text.toUpperCase();
    if (KEYWORDS.has(upper)) token.keyword = upper === "TEMPORARY" ? "TEMP" : upper;
  }
  return end;
}

function operator(sql: string, i: number, out: SqlToken[]): number {
  if (OPERATORS_2.has(sql.slice(i, i + 2))) return push(out, sql, "op", i, i + 2);
  const ch = sql[i] as string;
  if (OPERATORS_1.has(ch)) return push(out, sql, "op", i, i + 1);
  const code = ch.charCodeAt(0);
  const shown =
    code > 0x20 && code < 0x7f ? `"${ch}"` : `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  throw new SqlSyntaxError(`the character ${shown}, which SQLite does not read`, i);
}

/**
 * Keywords that fall back to a name where the keyword does not fit (parse.y's `%fallback ID`): a
 * table or a column may be called `key`, `replace` or `temp`. Where the keyword fits, SQLite's
 * parser takes it as the keyword (`IF` after CREATE TABLE, `CAST` where an operand starts), and so
 * does the reader. TEMPORARY is here as TEMP.
 */
export const FALLBACK_KEYWORDS = new Set(
  `ABORT ACTION AFTER ANALYZE ASC ATTACH BEFORE BEGIN BY CASCADE CAST COLUMN CONFLICT DATABASE
  DEFERRED DESC DETACH DO EACH END EXCLUSIVE EXPLAIN FAIL FOR IGNORE IMMEDIATE INITIALLY INSTEAD
  LIKE GLOB REGEXP MATCH NO PLAN QUERY KEY OF OFFSET PRAGMA RAISE RECURSIVE RELEASE REPLACE RESTRICT
  ROW ROWS ROLLBACK SAVEPOINT TEMP TRIGGER VACUUM VIEW VIRTUAL WITH WITHOUT NULLS FIRST LAST
  CURRENT FOLLOWING PARTITION PRECEDING RANGE UNBOUNDED EXCLUDE GROUPS OTHERS TIES GENERATED ALWAYS
  MATERIALIZED REINDEX RENAME CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP IF`.split(/\s+/),
);
export const JOIN_KEYWORDS = new Set(["CROSS", "FULL", "INNER", "LEFT", "NATURAL", "OUTER", "RIGHT"]);

/** What SQLite's getToken() takes for a name when it looks ahead of WINDOW, OVER and FILTER. */
function nameLike(token: SqlToken | undefined): boolean {
  if (!token) return false;
  if (token.type === "quoted" || token.type === "string") return true;
  if (token.type !== "word") return false;
  const k = token.keyword;
  return (
    k === undefined || k === "WINDOW" || k === "OVER" || FALLBACK_KEYWORDS.has(k) || JOIN_KEYWORDS.has(k)
  );
}

/**
 * WINDOW, OVER and FILTER are keywords only where SQLite's tokenizer says so (analyzeWindowKeyword
 * and its siblings): WINDOW before `name AS`, OVER after `)` before `(` or a name, FILTER after `)`
 * before `(`. Anywhere else they are names.
 */
function markContextKeywords(tokens: SqlToken[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as SqlToken;
    const k = token.keyword;
    if (k !== "WINDOW" && k !== "OVER" && k !== "FILTER") continue;
    const next = tokens[i + 1];
    const afterParen = tokens[i - 1]?.type === "op" && tokens[i - 1]?.text === ")";
    const nextParen = next?.type === "op" && next.text === "(";
    const keyword =
      k === "WINDOW"
        ? nameLike(next) && tokens[i + 2]?.keyword === "AS"
        : k === "OVER"
          ? afterParen && (nextParen || nameLike(next))
          : afterParen && nextParen;
    if (!keyword) token.keyword = undefined;
  }
}
