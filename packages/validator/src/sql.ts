/**
 * SQL arguments, read with the policy's lexer (comments removed and string literals blanked, so
 * keywords inside them never count). Refused: literals or comments left open, comments (the
 * classic way to cut off the rest of a query), several statements in one call, and the functions
 * and statements that reach the filesystem, load code or rewrite the schema.
 */
import { parseSql } from "@mcpguard/policy";
import type { Finding, Scope } from "./context.js";

const DANGEROUS: readonly [RegExp, string][] = [
  [/\bload_extension\s*\(/i, "load_extension"],
  [/^\s*(?:ATTACH|DETACH)\b/i, "ATTACH / DETACH"],
  [/^\s*PRAGMA\b/i, "PRAGMA"],
  [/\bwritable_schema\b/i, "writable_schema"],
  [/\bINTO\s+(?:OUTFILE|DUMPFILE)\b/i, "INTO OUTFILE"],
  [/\bLOAD_FILE\s*\(/i, "LOAD_FILE"],
  [/\bLOAD\s+DATA\b/i, "LOAD DATA"],
  [/\b(?:readfile|writefile|edit|fts3_tokenizer)\s*\(/i, "a file or tokenizer function"],
  [/\bxp_cmdshell\b/i, "xp_cmdshell"],
  [/\bCOPY\b[\s\S]*\b(?:TO|FROM)\s+PROGRAM\b/i, "COPY ... PROGRAM"],
];

export function checkSql(value: string, scope: Scope): Finding | undefined {
  const parsed = parseSql(value);
  if (parsed.unterminated && scope.on("l2.sql.unterminated")) {
    return scope.finding("l2.sql.unterminated", "leaves a string literal, quoted name or comment open");
  }
  if (parsed.comments && scope.on("l2.sql.comment")) {
    return scope.finding("l2.sql.comment", "contains an SQL comment, which can cut off the rest of a query");
  }
  if (scope.on("l2.sql.dangerous")) {
    for (const { code } of parsed.statements) {
      const hit = DANGEROUS.find(([pattern]) => pattern.test(code));
      if (hit) {
        return scope.finding(
          "l2.sql.dangerous",
          `uses ${hit[1]}, which reaches files, loads code or changes the schema`,
        );
      }
    }
  }
  if (parsed.statements.length > 1 && scope.on("l2.sql.stacked")) {
    return scope.finding("l2.sql.stacked", `stacks ${parsed.statements.length} statements in one call`);
  }
  return undefined;
}
