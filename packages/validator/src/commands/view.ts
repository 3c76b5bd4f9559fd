/**
 * A command line as the command rules read it (from the policy's shell reading), and the word
 * helpers they share: where a word points on disk once `~` and `$HOME` are expanded, and which
 * file a word may name.
 */
import { resolve } from "node:path";
import type { FullReading, Redirect } from "@mcpguard/readers";
import type { Scope } from "../context.js";
import type { Invocation } from "./invocations.js";

export interface CommandView {
  /** The command line (NFKC). */
  text: string;
  /** Every program and builtin it runs, through pipelines, substitutions, wrappers and nested scripts. */
  invocations: readonly Invocation[];
  redirects: readonly Redirect[];
  reading: FullReading;
  scope: Scope;
}

/** A rule returns why the command is refused, or undefined. */
export type CommandRule = (view: CommandView) => string | undefined;

const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The absolute path a word names, `~` and `$HOME` expanded (kept as `~` when HOME is unknown). */
export function place(word: string, scope: Scope): string {
  const home = scope.ctx.home;
  const expanded = home ? word.replace(HOME_PREFIX, home) : word.replace(HOME_PREFIX, "~");
  return expanded.startsWith("~") ? expanded : resolve(scope.cwd, expanded);
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
