/**
 * Path arguments. Each path is judged in every form a server might open: as written, decoded,
 * normalised lexically (what `os.path.abspath` and `path.resolve` do before opening), resolved
 * through the real filesystem with `..` collapsed first (policy `canonicalPath`), and resolved the
 * way the kernel walks it, where a `..` after a symlink climbs from the link's target. A path is
 * refused when any form escapes the roots by a technique (encoding, `..`, a look-alike prefix, a
 * symlink) or lands on a sensitive file.
 */
import { resolve } from "node:path";
import { canonicalPath } from "@mcpguard/policy";
import type { Finding, Scope } from "./context.js";
import { describeSensitivity, display, sensitivity } from "./sensitive.js";

/** Percent-encoded dot, slash, backslash or NUL, also double-encoded, overlong UTF-8 or `%u`. */
const ENCODED =
  /%(?:25)*(?:2e|2f|5c|00)|%c0%[0-9a-f]{2}|%c1%[0-9a-f]{2}|%e0%8[0-9a-f]%[0-9a-f]{2}|%u(?:002e|002f|005c|2215|2216)/i;
const PERCENT = /%([0-9a-f]{2})/gi;
const DOT_DOT = /(?:^|[/\\])\.\.(?:[/\\]|$)/;
const BACKSLASH = /\\/g;

function decode(path: string): string {
  let current = path;
  for (let i = 0; i < 3 && current.includes("%"); i++) {
    const next = current.replace(PERCENT, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === current) break;
    current = next;
  }
  return current;
}

export function checkPath(value: string, write: boolean, scope: Scope): Finding | undefined {
  if (scope.on("l2.path.encoded") && ENCODED.test(value)) {
    return scope.finding(
      "l2.path.encoded",
      "hides path syntax (a dot, slash, backslash or NUL) in percent-encoding",
    );
  }
  // Backslashes count as separators: some servers and libraries treat them so.
  const path = decode(value).replace(BACKSLASH, "/");
  const climbs = DOT_DOT.test(path);
  const cwd = scope.pathBase;
  const lexical = resolve(cwd, path);
  const roots = scope.ctx.roots;

  if (climbs && scope.on("l2.path.traversal") && !scope.withinRoots(lexical)) {
    return scope.finding(
      "l2.path.traversal",
      `uses ".." to climb out of the allowed directories to ${display(lexical, scope)}`,
    );
  }
  const { canonical, physical: kernel } = (scope.ctx.resolvePath ?? canonicalPath)(path, cwd);

  if (scope.on("l2.path.prefix-sibling")) {
    for (const form of [lexical, canonical]) {
      if (scope.withinRoots(form)) continue;
      const root = roots.find((r) => r !== "/" && form.startsWith(r));
      if (root) {
        return scope.finding(
          "l2.path.prefix-sibling",
          `names ${form}, a sibling that only shares a prefix with ${root}`,
        );
      }
    }
  }
  if (scope.on("l2.path.symlink-escape") && scope.withinRoots(lexical)) {
    const escaped = [canonical, kernel].find((form) => !scope.withinRoots(form));
    if (escaped) {
      return scope.finding(
        "l2.path.symlink-escape",
        `follows a symlink out of the allowed directories to ${display(escaped, scope)}`,
      );
    }
  }
  if (scope.on("l2.path.sensitive")) {
    for (const form of new Set([lexical, canonical, kernel])) {
      const kind = sensitivity(form, write, scope);
      if (kind) {
        return scope.finding(
          "l2.path.sensitive",
          `resolves to ${display(form, scope)}, ${describeSensitivity(kind)}`,
        );
      }
    }
  }
  return undefined;
}
