/**
 * A lexical reading of SQL: statements split on `;` outside literals, each classified by its verb.
 * Comments and string literals are recognised so that keywords inside them never count, and so
 * that their presence can be reported.
 */
import type { SqlClass } from "./schema.js";

export interface SqlStatement {
  /** The statement with comments removed and string literals replaced by `''`. */
  code: string;
  verb: string;
  sqlClass: SqlClass | "unknown";
}

export interface ParsedSql {
  statements: SqlStatement[];
  /** `--` or `/* ... *\/` outside literals. */
  comments: boolean;
  /** A literal or comment that never closes. */
  unterminated: boolean;
}

const READ = new Set(["SELECT", "VALUES", "EXPLAIN", "WITH"]);
const WRITE = new Set(["INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT"]);
const DDL = new Set([
  "CREATE",
  "DROP",
  "ALTER",
  "TRUNCATE",
  "ATTACH",
  "DETACH",
  "PRAGMA",
  "VACUUM",
  "REINDEX",
  "ANALYZE",
  "GRANT",
  "REVOKE",
]);

function classify(code: string): SqlStatement {
  const words = code.toUpperCase().match(/[A-Z_]+/g) ?? [];
  const verb = words[0] ?? "";
  let sqlClass: SqlStatement["sqlClass"] = "unknown";
  if (DDL.has(verb)) sqlClass = "ddl";
  else if (WRITE.has(verb)) sqlClass = "write";
  else if (READ.has(verb)) {
    // `WITH ... INSERT`: a common table expression in front of a write is a write.
    sqlClass = words.some((w) => WRITE.has(w)) ? "write" : words.some((w) => DDL.has(w)) ? "ddl" : "read";
  }
  return { code, verb, sqlClass };
}

export function parseSql(sql: string): ParsedSql {
  const statements: SqlStatement[] = [];
  let comments = false;
  let unterminated = false;
  let current = "";
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const two = sql.slice(i, i + 2);
    if (two === "--") {
      comments = true;
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl;
      current += " ";
      continue;
    }
    if (two === "/*") {
      comments = true;
      const end = sql.indexOf("*/", i + 2);
      if (end === -1) {
        unterminated = true;
        break;
      }
      i = end + 2;
      current += " ";
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`" || ch === "[") {
      const close = ch === "[" ? "]" : ch;
      let j = i + 1;
      for (;;) {
        const next = sql.indexOf(close, j);
        if (next === -1) {
          unterminated = true;
          j = sql.length;
          break;
        }
        if (close !== "]" && sql[next + 1] === close) {
          j = next + 2;
          continue;
        }
        j = next + 1;
        break;
      }
      // Identifiers keep their text (they are not data); string literals become ''.
      current += ch === "'" ? "''" : sql.slice(i, j);
      i = j;
      continue;
    }
    if (ch === ";") {
      if (current.trim()) statements.push(classify(current.trim()));
      current = "";
      i++;
      continue;
    }
    current += ch;
    i++;
  }
  if (current.trim()) statements.push(classify(current.trim()));
  return { statements, comments, unterminated };
}
