/**
 * L2 on a tool call's arguments: every string, at any depth, is inspected with the role of its
 * top-level argument (a record's keys as identifiers and its values as text). Every string gets
 * the Unicode, NUL and prompt-injection checks; structured roles are read in their NFKC form and
 * checked for confusables, then by their role's own rules, in the NFKC form and, where it differs,
 * as written. The first finding refuses the call.
 * The walk is bounded: a value nested deeper than `maxDepth` is refused, never walked.
 */

import type { ArgRole } from "@mcpguard/policy";
import { DEFAULT_MAX_DEPTH } from "@mcpguard/protocol";
import { checkCommand } from "./commands/index.js";
import { type Finding, Scope, type ValidatorContext } from "./context.js";
import { checkIdentifier, checkKey } from "./identifiers.js";
import { checkInjection } from "./injection.js";
import { checkPath } from "./paths.js";
import { checkSql } from "./sql.js";
import { checkConfusable, checkInvisible, checkNul, fold } from "./unicode.js";
import { checkUrl } from "./urls.js";

type RoleCheck = (value: string, scope: Scope) => Finding | undefined;

const ROLE_CHECKS: Partial<Record<ArgRole, RoleCheck>> = {
  "path.read": (value, scope) => checkPath(value, false, scope),
  "path.write": (value, scope) => checkPath(value, true, scope),
  url: checkUrl,
  command: checkCommand,
  sql: checkSql,
  identifier: checkIdentifier,
  key: checkKey,
};

function inspectString(value: string, role: ArgRole, scope: Scope): Finding | undefined {
  const roleCheck = Object.hasOwn(ROLE_CHECKS, role) ? ROLE_CHECKS[role] : undefined;
  const universal = checkInvisible(value, scope, roleCheck !== undefined) ?? checkNul(value, scope);
  if (universal) return universal;
  if (!roleCheck) return checkInjection(value, scope);
  const folded = fold(value);
  return (
    checkConfusable(value, scope, role.startsWith("path.")) ??
    checkInjection(folded, scope) ??
    roleCheck(folded, scope) ??
    // The server, its shell and the kernel act on the text as written (`\ufb01x` names another file
    // than `fix`, maybe a link to .git): judged that way too.
    (folded === value ? undefined : roleCheck(value, scope))
  );
}

function inspectValue(value: unknown, role: ArgRole, scope: Scope, depth: number): Finding | undefined {
  if (typeof value === "string") return inspectString(value, role, scope);
  if (value === null || typeof value !== "object") return undefined;
  const maxDepth = scope.ctx.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (depth >= maxDepth) {
    return scope.finding("l2.nesting", `nests objects and arrays deeper than ${maxDepth} levels`);
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const finding = inspectValue(item, role, scope.at(`${scope.label}[${i}]`), depth + 1);
      if (finding) return finding;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = scope.at(`${scope.label}.${key}`);
    const finding =
      inspectString(key, role === "record" ? "identifier" : "text", at) ??
      inspectValue(item, role === "record" ? "text" : role, at, depth + 1);
    if (finding) return finding;
  }
  return undefined;
}

/** The first finding over all arguments (in argument order), or undefined when the call is clean. */
export function inspectArguments(
  args: Record<string, unknown>,
  roles: Readonly<Record<string, ArgRole>>,
  ctx: ValidatorContext,
): Finding | undefined {
  const call = new Scope(ctx);
  const bases = ctx.pathBases;
  for (const [name, value] of Object.entries(args)) {
    const role = (Object.hasOwn(roles, name) && roles[name]) || "text";
    // A path relative to another argument is read where the server reads it.
    const base = bases && Object.hasOwn(bases, name) ? bases[name] : undefined;
    const scope = base === undefined ? call.at(name) : new Scope({ ...ctx, pathBase: base }, name);
    const finding = inspectValue(value, role, scope, 1);
    if (finding) return finding;
  }
  return undefined;
}
