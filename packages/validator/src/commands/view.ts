/**
 * A command line as the command rules read it (from the policy's shell reading), and the word
 * helpers they share: where a word points on disk once `~` and `$HOME` are expanded, and which
 * file a word may name.
 */
import { resolve } from "node:path";
import type { FullReading, Redirect } from "@mcpguard/readers";
import type { Scope } from "../context.js";
import type { Invocation } from "./invocations.js";

/** A redirect, and the folder the shell is in when it opens its file (undefined: known at run time only). */
export interface PlacedRedirect extends Redirect {
  cwd: string | undefined;
}

export interface CommandView {
  /** The command line (NFKC). */
  text: string;
  /** Every program and builtin it runs, through pipelines, substitutions, wrappers and nested scripts. */
  invocations: readonly Invocation[];
  redirects: readonly PlacedRedirect[];
  reading: FullReading;
  scope: Scope;
}

/** A rule returns why the command is refused, or undefined. */
export type CommandRule = (view: CommandView) => string | undefined;

const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The absolute path a word names, `~` and `$HOME` expanded (kept as `~` when HOME is unknown),
 * relative to `cwd`, the folder the shell is in when the word is used (after the line's own `cd`s:
 * `cd .git && printf ... >> config` writes `.git/config`); the scope's folder while no `cd` moved
 * it. Undefined for a relative word where that folder is known only at run time.
 */
export function place(word: string, scope: Scope, cwd: string | undefined): string | undefined {
  const home = scope.ctx.home;
  const expanded = home ? word.replace(HOME_PREFIX, home) : word.replace(HOME_PREFIX, "~");
  if (expanded.startsWith("~")) return expanded;
  if (expanded.startsWith("/")) return resolve(expanded);
  if (cwd === undefined) return undefined;
  return resolve(cwd === scope.ctx.cwd ? scope.cwd : cwd, expanded);
}

/**
 * The paths a relative word may name where its folder is known only at run time, for the checks
 * that judge a path by what it spells: the word in some folder (`/…/word`), and, written, in a
 * repository's `.git` (`config`, `hooks/…`): a `cd` the line makes at run time may go there.
 */
export function unplaced(word: string, write: boolean): string[] {
  const somewhere = `/\u0000/${word}`;
  return write ? [somewhere, `/\u0000/.git/${word}`] : [somewhere];
}

/** Where a word of an invocation or a redirect may point: its place, or what unplaced() gives. */
export function placesOf(word: string, scope: Scope, cwd: string | undefined, write: boolean): string[] {
  const path = place(word, scope, cwd);
  return path === undefined ? unplaced(word, write) : [path];
}

/**
 * The file a word may name: the word itself, the value of `name=value` and `--opt=value`, or the
 * file of `@file`. Bare options, URLs and words known only at run time name none.
 */
export function fileWord(word: string): string | undefined {
  if (word.includes("\u0000")) return undefined;
  const eq = word.indexOf("=");
  const value = eq > 0 && !word.startsWith("/") ? word.slice(eq + 1) : word;
  if (value === word && word.startsWith("-")) return undefined;
  const file = value.startsWith("@") ? value.slice(1) : value;
  return file && !URL_LIKE.test(file) ? file : undefined;
}
