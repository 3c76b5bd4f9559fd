/**
 * Names: identifiers (a table, a note id, the keys of a record) must be plain words so that a
 * server that splices them into SQL, a path or a command gets nothing else; keys (settings and
 * environment variable names) must not name a secret, and must not climb directories if a
 * server uses them as paths.
 */
import type { Finding, Scope } from "./context.js";
import { envName, secretLooking } from "./secrets.js";

/** Letters, digits and `_`, with single inner hyphens (note ids such as `note-1`), at most 64. */
const IDENTIFIER = /^[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*$/;
const SECRET_KEY = /^AWS_|_(?:KEY|TOKEN)$/;
const CLIMB = /\.\.[/\\]/;

export function checkIdentifier(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.identifier") || (value.length <= 64 && IDENTIFIER.test(value))) return undefined;
  return scope.finding(
    "l2.identifier",
    "is not a plain identifier (letters, digits, _ and inner -, at most 64)",
  );
}

export function checkKey(value: string, scope: Scope): Finding | undefined {
  if (scope.on("l2.path.traversal") && CLIMB.test(value)) {
    return scope.finding(
      "l2.path.traversal",
      'contains "../", which climbs directories if the key is used as a path',
    );
  }
  const env = envName(value);
  if (scope.on("l2.sensitive-key") && (secretLooking(value) || SECRET_KEY.test(env))) {
    return scope.finding("l2.sensitive-key", `names ${env}, a setting or variable that holds a secret`);
  }
  return undefined;
}
