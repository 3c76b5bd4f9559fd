/**
 * Reading a shell command line with the shell's grammar (mvdan-sh): {@link readShell} gives what
 * the line runs and touches, or why it cannot be read ("the command does not parse as shell: ...").
 */

import { accessSync, constants, statSync } from "node:fs";
import { NestedParseError, ReadLimit } from "./limits.js";
import type { ReadResult, ShellContext, ShellReading } from "./model.js";
import { Reader, type RedirectAt } from "./reader.js";
import { Scope } from "./scope.js";

export { GIT_CONFIG_VALUED, gitKeyKind, gitSubcommand } from "./git.js";
export { warmShellGrammar } from "./grammar.js";
export {
  type Field,
  type Invocation,
  type ShellContext,
  UNKNOWN_MARK,
} from "./model.js";
export { optionUses, programWords } from "./options.js";
export {
  PROGRAM_FACTS,
  VARIABLE_FACTS,
} from "./programOptions.js";
export { envPrefixCommand } from "./wrappers.js";

export type FullReading = ShellReading & { redirects: RedirectAt[] };

/**
 * ShellContext.isDirectory as the layers give it: a folder that exists now and that this process
 * (the server's user) may enter. The server may remove it before its line runs: a race the
 * kernel layer, not the reading, closes.
 */
export function enterableDirectory(path: string): boolean {
  try {
    if (!statSync(path).isDirectory()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // Not there, not a folder, or not to be entered.
    return false;
  }
}

/** A few readings of the last lines, so that L1 and L2 read a call's command once. */
const recent = new Map<string, ReadResult & { reading?: FullReading }>();
const RECENT = 8;

const contextKeys = new WeakMap<ShellContext, string>();

function key(src: string, ctx: ShellContext): string {
  let prefix = contextKeys.get(ctx);
  if (prefix === undefined) {
    const present = ctx.present ? [...ctx.present].sort().join(",") : "";
    prefix = JSON.stringify([
      ctx.cwd,
      ctx.home ?? null,
      ctx.tmp ?? null,
      ctx.environmentKnown ?? false,
      present,
    ]);
    contextKeys.set(ctx, prefix);
  }
  return `${prefix}\u0000${src}`;
}

/** What the line runs and touches, as far as it is known before it runs. */
export function readShell(
  src: string,
  ctx: ShellContext,
): { ok: true; reading: FullReading } | { ok: false; reason: string; rule: string } {
  const k = key(src, ctx);
  const hit = recent.get(k);
  if (hit) return hit as { ok: true; reading: FullReading };
  const { result, usedFilesystem } = readUncached(src, ctx);
  if (usedFilesystem) return result;
  if (recent.size >= RECENT) recent.delete(recent.keys().next().value as string);
  recent.set(k, result);
  return result;
}

function readUncached(src: string, ctx: ShellContext): { result: ReadOutcome; usedFilesystem: boolean } {
  const reader = new Reader(ctx);
  return { result: readWith(reader, src, ctx), usedFilesystem: reader.usedFilesystem };
}

type ReadOutcome = { ok: true; reading: FullReading } | { ok: false; reason: string; rule: string };

function readWith(reader: Reader, src: string, ctx: ShellContext): ReadOutcome {
  try {
    reader.script(src, Scope.top(ctx.cwd, "posix"), { kind: "inherit" }, "the command");
  } catch (error) {
    if (error instanceof NestedParseError) {
      return {
        ok: false,
        rule: "command.unparsable",
        reason: `the command does not parse as shell: ${error.message}`,
      };
    }
    if (error instanceof ReadLimit)
      return { ok: false, rule: "command.complex", reason: `${error.message}, too much to check` };
    if (error instanceof RangeError)
      return { ok: false, rule: "command.complex", reason: "the command nests too deeply to check" };
    throw error;
  }
  return { ok: true, reading: reader.reading() };
}
