/**
 * What the modules a reading passes through (words.ts, params.ts, commands.ts, builtins.ts) may
 * ask of the walk (reader.ts's Reader): its tables, its bounds, and the recursive steps (a nested
 * script, a parameter expansion, a command line) that would otherwise make those modules import
 * one another in a loop.
 */
import type { Grammar, ShNode } from "./grammar.js";
import type {
  Dynamic,
  EnvSetting,
  Field,
  FileRedirect,
  Invocation,
  Seg,
  ShellContext,
  Stdin,
  Unknown,
} from "./model.js";
import type { Scope } from "./scope.js";

/** How `dispatch` runs a command line. */
export interface Dispatch {
  /** Run as a program even if a function or builtin has the name (a wrapper execs it). */
  programOnly?: boolean;
  /** Skip functions but not builtins (`command x`). */
  skipFunctions?: boolean;
  via?: string;
  cwd?: string | undefined;
}

export interface Walker {
  readonly g: Grammar;
  readonly ctx: ShellContext;
  readonly invocations: Invocation[];
  readonly dynamics: Dynamic[];
  readonly environment: EnvSetting[];
  readonly expanded: Set<string>;
  listsNames: boolean;
  /** The reading asked the filesystem (ShellContext.isDirectory): it holds for this call only. */
  usedFilesystem: boolean;
  /** One step of the reading's budget. */
  step(): void;
  /** Read a script nested in the line in `scope`. */
  script(src: string, scope: Scope, stdin: Stdin, what: string): void;
  callFunction(name: string, args: Field[] | undefined, scope: Scope, stdin: Stdin): void;
  /** Every way a word expands (fields). */
  expand(word: ShNode, scope: Scope): Field[][];
  /** A parameter expansion, every way it may be: segments of text, as words.ts builds them. */
  param(pe: ShNode, scope: Scope, quoted: boolean): Seg[][];
  /** Run each command line: a function's body, a builtin, or a program. */
  dispatch(
    argvs: Field[][],
    env: Invocation["env"],
    scope: Scope,
    stdin: Stdin,
    files: FileRedirect[],
    how: Dispatch,
  ): void;
  substitution(stmts: ShNode[], scope: Scope): Unknown;
  processSubstitution(stmts: ShNode[], scope: Scope): string[];
  wrapped(read: () => void): void;
  arithmetic(node: ShNode | null, scope: Scope): void;
  subscriptName(what: string): void;
}
