/**
 * SQL arguments, read with SQLite's grammar (the policy's `readSql`), whatever classes the policy
 * grants. Refused: a text that does not parse (with the parser's reason); a statement that reaches
 * beyond the database or weakens it (ATTACH, load_extension, readfile, writable_schema, ...); and
 * several statements in one call, but only where the server runs them all: a server that runs one
 * statement per call refuses the rest itself, and each statement is L1's to judge anyway.
 *
 * Comments never matter by themselves: the grammar skips them, so a `--` cannot hide anything from
 * the reading. Tautologies (`OR 1=1`) and UNION are injection only where text is spliced into SQL,
 * which is why identifiers must be plain words (`identifiers.ts`); in a `sql` argument, whose whole
 * point is a query, they are SQL.
 */
import { readSql } from "@mcpguard/readers";
import type { Finding, Scope } from "./context.js";

export function checkSql(value: string, scope: Scope): Finding | undefined {
  const reading = readSql(value);
  if (!reading.ok) {
    return scope.on("l2.sql.unparsable")
      ? scope.finding("l2.sql.unparsable", `does not parse as SQLite: ${reading.reason}`)
      : undefined;
  }
  if (scope.on("l2.sql.dangerous")) {
    const dangerous = reading.statements.find((s) => s.dangerous)?.dangerous;
    if (dangerous)
      return scope.finding("l2.sql.dangerous", `uses ${dangerous.verb}, which ${dangerous.reason}`);
  }
  const count = reading.statements.length;
  if (count > 1 && scope.ctx.sqlStatements !== "one" && scope.on("l2.sql.stacked")) {
    return scope.finding("l2.sql.stacked", `stacks ${count} statements in one call`);
  }
  return undefined;
}
