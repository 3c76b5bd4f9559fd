/**
 * The reader's position in the tokens of one text, and what it has found so far in the statement
 * it reads: the statements inside it, the functions it calls and the tables it names.
 */
import { FALLBACK_KEYWORDS, JOIN_KEYWORDS, SqlSyntaxError, type SqlToken } from "./sqlLexer.js";

/** A statement, top-level or inside another, with what decides what it does. */
export interface SqlHead {
  /** `SELECT`, `VALUES`, `INSERT`, `REPLACE`, `CREATE TABLE`, `ALTER TABLE`, `PRAGMA`, ... */
  verb: string;
  /** Offset of its first token. */
  at: number;
  /** INSERT, REPLACE, UPDATE, DELETE: the table it writes (lower case, without its schema). */
  target?: string;
  /** CREATE VIRTUAL TABLE: the module, lower case. */
  module?: string;
  /** PRAGMA: its name, lower case, and whether it is given a value (`= v` or `(v)`). */
  pragma?: { name: string; valued: boolean };
  /** ALTER TABLE: `ADD COLUMN`, `RENAME TO`, `RENAME COLUMN` or `DROP COLUMN`. */
  action?: string;
  /** VACUUM INTO a file. */
  into?: boolean;
  /**
   * INSERT, REPLACE, UPDATE, DELETE: it names a column in an expression (WHERE, SET, an upsert,
   * RETURNING) or returns whole rows (`RETURNING *`), so it reads the table too (SQLite's
   * authorizer says SQLITE_READ).
   */
  reads?: boolean;
}

/** A function or a table named in a statement: its name, lower case and dequoted, and where. */
export interface SqlName {
  name: string;
  at: number;
}

/** One top-level statement as read: itself, the statements inside it, every call and table in it. */
export interface SqlStatementRead {
  head: SqlHead;
  /** In the order they start: CTEs and subqueries (each SELECT), a trigger's body, what EXPLAIN explains. */
  inner: SqlHead[];
  /** Every function called, table-valued ones (`FROM fsdir('.')`) included. */
  calls: SqlName[];
  /** Every table named after FROM, JOIN, IN, INTO, UPDATE, DELETE FROM, TABLE, ON (an index's or a trigger's). */
  tables: SqlName[];
}

/** Deepest nesting of parentheses and CASEs read (SQLite 3.40 stops at about 100 parentheses). */
const MAX_DEPTH = 100;

/** Classes of names in SQLite's grammar: `nm`, `ids`, `idj`, `id` are unions of these. */
export const ID = 1;
const STRING = 2;
const INDEXED = 4;
export const JOIN_KW = 8;
/** Any name of a table, a column, a schema: an identifier, a string, INDEXED or a join keyword. */
export const NM = ID | STRING | INDEXED | JOIN_KW;
/** An alias without AS, a type name, a collation. */
export const IDS = ID | STRING;
/** A function's or a column's name in an expression. */
export const IDJ = ID | INDEXED | JOIN_KW;

const END: Omit<SqlToken, "start" | "end"> = { type: "end", text: "", keyword: undefined };

/** Lower case in ASCII only, as SQLite compares names. */
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

export class SqlCursor {
  pos = 0;
  depth = 0;
  read: SqlStatementRead = SqlCursor.fresh();
  /** The INSERT, REPLACE, UPDATE or DELETE being read, whose column names make it read. */
  writer: SqlHead | undefined;
  readonly #end: SqlToken;

  constructor(
    readonly sql: string,
    readonly tokens: readonly SqlToken[],
  ) {
    this.#end = { ...END, start: sql.length, end: sql.length };
  }

  static fresh(): SqlStatementRead {
    return { head: { verb: "", at: 0 }, inner: [], calls: [], tables: [] };
  }

  peek(ahead = 0): SqlToken {
    return this.tokens[this.pos + ahead] ?? this.#end;
  }
  /** The keyword of the token `ahead`, if it is a keyword. */
  kw(ahead = 0): string | undefined {
    return this.peek(ahead).keyword;
  }
  isKw(keyword: string, ahead = 0): boolean {
    return this.peek(ahead).keyword === keyword;
  }
  isOp(op: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.type === "op" && token.text === op;
  }
  atEnd(): boolean {
    return this.pos >= this.tokens.length;
  }
  take(): SqlToken {
    const token = this.peek();
    if (token.type !== "end") this.pos++;
    return token;
  }
  acceptKw(keyword: string): boolean {
    if (!this.isKw(keyword)) return false;
    this.pos++;
    return true;
  }
  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.pos++;
    return true;
  }
  expectKw(keyword: string, ...or: string[]): string {
    const k = this.kw();
    if (k === keyword || (k !== undefined && or.includes(k))) {
      this.pos++;
      return k;
    }
    const all = [keyword, ...or];
    return this.fail(all.length > 1 ? `${all.slice(0, -1).join(", ")} or ${all.at(-1)}` : keyword);
  }
  expectOp(op: string): void {
    if (!this.acceptOp(op)) this.fail(`"${op}"`);
  }

  /** `(` that opens a nesting: counted against {@link MAX_DEPTH}. */
  open(): void {
    const token = this.peek();
    this.expectOp("(");
    this.enter(token);
  }
  close(): void {
    this.expectOp(")");
    this.depth--;
  }
  enter(token: SqlToken): void {
    if (++this.depth > MAX_DEPTH) {
      throw new SqlSyntaxError(`it nests deeper than ${MAX_DEPTH} levels`, token.start);
    }
  }

  /** Whether the token `ahead` is a name of one of the classes `kinds` (ID, STRING, ...). */
  isName(kinds: number, ahead = 0): boolean {
    const token = this.peek(ahead);
    switch (token.type) {
      case "quoted":
        return (kinds & ID) !== 0;
      case "string":
        return (kinds & STRING) !== 0;
      case "word": {
        const k = token.keyword;
        if (k === undefined || FALLBACK_KEYWORDS.has(k)) return (kinds & ID) !== 0;
        if (k === "INDEXED") return (kinds & INDEXED) !== 0;
        return JOIN_KEYWORDS.has(k) && (kinds & JOIN_KW) !== 0;
      }
      default:
        return false;
    }
  }
  /** Take a name of the classes `kinds`; its value, lower case. */
  name(kinds = NM, what = "a name"): string {
    if (!this.isName(kinds)) this.fail(what);
    return nameOf(this.take());
  }
  /** `[schema.]name`: the name, and where it is. */
  qualified(kinds = NM, what = "a name"): SqlName {
    const at = this.peek().start;
    let name = this.name(kinds, what);
    if (this.acceptOp(".")) name = this.name(NM, what);
    return { name, at };
  }

  /** A statement that starts here; nested ones are listed in the top-level statement's `inner`. */
  head(nested: boolean, verb = ""): SqlHead {
    const head: SqlHead = { verb, at: this.peek().start };
    if (nested) this.read.inner.push(head);
    else this.read.head = head;
    return head;
  }
  call(name: string, at: number): void {
    this.read.calls.push({ name, at });
  }
  table(name: SqlName): void {
    this.read.tables.push(name);
  }

  /** Refuse the text at the current token: it is not what SQLite's grammar takes here. */
  fail(expected?: string, token = this.peek()): never {
    const found = token.type === "end" ? "the end of the text" : describe(token);
    throw new SqlSyntaxError(
      expected ? `expected ${expected} but found ${found}` : `unexpected ${found}`,
      token.start,
    );
  }
}

/**
 * A token as a reason names it. Short words and numbers are quoted; strings, quoted names and long
 * words are not, since the reason goes to the agent and the audit log and could carry a secret.
 */
function describe(token: SqlToken): string {
  switch (token.type) {
    case "word":
      return token.keyword || token.text.length <= 12 ? `"${token.text}"` : "a name";
    case "number":
      return token.text.length <= 12 ? token.text : "a number";
    case "op":
      return `"${token.text}"`;
    case "quoted":
      return "a quoted name";
    case "string":
      return "a string";
    case "blob":
      return "a blob";
    case "variable":
      return "a parameter";
    default:
      return "the end of the text";
  }
}

/** What a name token stands for: dequoted, lower case in ASCII. */
export function nameOf(token: SqlToken): string {
  const text = token.text;
  if (token.type === "word") return asciiLower(text);
  const body = text.slice(1, -1);
  const open = text[0] as string;
  if (open === "[") return asciiLower(body);
  return asciiLower(body.replaceAll(open + open, open));
}
