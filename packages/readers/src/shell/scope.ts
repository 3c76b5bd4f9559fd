/**
 * The shell's state as the reading follows it: variables (each a set of values it may hold, or
 * unknown), functions, the working directory and the positional parameters. A subshell or a
 * command substitution reads with a copy; branches and loops merge what they may leave behind.
 */

import type { ShNode } from "./grammar.js";
import type { Dialect, Field, Unknown } from "./model.js";
import { unknownField } from "./model.js";

/** Most values one variable or word is followed with; past it the value is taken as unknown. */
export const MAX_WAYS = 16;

export type Value =
  /** Set, to one of these (each one field's worth of text). */
  | { kind: "scalar"; ways: Field[] }
  /** A bash array: its elements, or unknown. */
  | { kind: "array"; elements: Field[] | undefined }
  | { kind: "unset" };

export const UNSET: Value = { kind: "unset" };

/** The folder (and the other one it may be) of what the shell runs or opens now. */
export function placeOf(scope: Scope): { cwd: string | undefined; cwdElse?: string } {
  return scope.cwdElse === undefined ? { cwd: scope.cwd } : { cwd: scope.cwd, cwdElse: scope.cwdElse };
}

export function scalar(...ways: Field[]): Value {
  return { kind: "scalar", ways };
}

export function unknownValue(unknown: Unknown): Value {
  return scalar(unknownField(unknown));
}

/**
 * Positional parameters from the words of a call: a glob may expand to any number of files, so
 * each word after one is a parameter whose place is not known (`f a* b`: $2 may be a file).
 */
export function positionalOf(words: readonly Field[]): Field[] {
  const at = words.findIndex((f) => f.pattern);
  if (at === -1) return [...words];
  const unknown: Unknown = { kind: "text", origin: "a word after a glob, whose place only the run knows" };
  return [...words.slice(0, at + 1), ...words.slice(at + 1).map(() => unknownField(unknown))];
}

export class Scope {
  constructor(
    readonly vars: Map<string, Value>,
    readonly functions: Map<string, ShNode>,
    public cwd: string | undefined,
    /** `$1`, `$2`, ...: known, or unknown (inside a function, or after `shift` of unknown). */
    public positional: Field[] | undefined,
    readonly dialect: Dialect,
    /** Names marked for export: a program the line runs reads them. */
    readonly exported: Set<string>,
  ) {}

  /** `$0`: the name the shell was started with (`sh -c 'script' name`), unknown at the top. */
  arg0: Field | undefined;

  /** bash's `set -P` (`set -o physical`): cd walks links, so a `..` climbs from a link's target. */
  physical = false;

  /** `set -e`: a command that fails (a cd) ends the shell, so what follows runs where it succeeded. */
  errexit = false;

  /** bash's `shopt -s cdable_vars`: `cd NAME` goes to the value of the variable NAME when no folder NAME is there. */
  cdableVars = false;

  /** bash's `shopt -s lastpipe`: the last command of a pipeline runs in this shell, not a subshell. */
  lastpipe = false;

  /**
   * The other folder the shell may be in (a `cd` that may have failed, in a list that goes on
   * either way: `cd /etc; cd x; cat passwd` reads `x/passwd`, or `/etc/passwd` when there is no x),
   * beside `cwd`; undefined when there is none. More than two makes the folder unknown.
   */
  cwdElse: string | undefined;

  /**
   * Where the shell was before its last `cd`, until what follows shows whether it matters: the
   * next command of an `&&` runs only where the cd succeeded; any other goes on either way (settle).
   */
  beforeCd: readonly (string | undefined)[] | undefined;

  /** The folders the shell may be in: one, two, or [undefined] (unknown). */
  folders(): (string | undefined)[] {
    return this.cwdElse === undefined ? [this.cwd] : [this.cwd, this.cwdElse];
  }

  /** Set the folders the shell may be in: more than two, or one unknown, is unknown. */
  setFolders(folders: readonly (string | undefined)[]): void {
    const distinct = [...new Set(folders)];
    const unknown = distinct.includes(undefined) || distinct.length > 2 || distinct.length === 0;
    this.cwd = unknown ? undefined : distinct[0];
    this.cwdElse = unknown ? undefined : distinct[1];
  }

  /**
   * After a `cd` the next command follows whether or not it succeeded: either folder. With
   * `exits` (the next command of a list under `set -e`, outside a condition, where a failed cd
   * ends the shell) it runs only where the cd succeeded.
   */
  settle(exits = false): void {
    if (!this.beforeCd) return;
    if (!exits) this.setFolders([...this.folders(), ...this.beforeCd]);
    this.beforeCd = undefined;
  }

  static top(cwd: string, dialect: Dialect, positional: Field[] = []): Scope {
    return new Scope(new Map(), new Map(), cwd, positional, dialect, new Set());
  }

  /** A copy for a subshell, a substitution or one branch of a conditional. */
  fork(): Scope {
    const copy = new Scope(
      new Map(this.vars),
      new Map(this.functions),
      this.cwd,
      this.positional,
      this.dialect,
      new Set(this.exported),
    );
    copy.arg0 = this.arg0;
    copy.physical = this.physical;
    copy.errexit = this.errexit;
    copy.cdableVars = this.cdableVars;
    copy.lastpipe = this.lastpipe;
    copy.cwdElse = this.cwdElse;
    copy.beforeCd = this.beforeCd;
    return copy;
  }

  /** A new shell process (`bash -c`): it inherits the exported variables and the directory. */
  child(dialect: Dialect, positional: Field[], cwd: string | undefined, arg0?: Field): Scope {
    const vars = new Map<string, Value>();
    for (const name of this.exported) {
      const value = this.vars.get(name);
      if (value) vars.set(name, value);
    }
    const child = new Scope(vars, new Map(), cwd, positional, dialect, new Set(this.exported));
    child.arg0 = arg0;
    return child;
  }

  /** After a branch that may or may not have run: each variable may hold what either left. */
  merge(other: Scope): void {
    this.settle();
    other.settle();
    for (const name of new Set([...this.vars.keys(), ...other.vars.keys()])) {
      const a = this.vars.get(name);
      const b = other.vars.get(name);
      if (a === b) continue;
      this.vars.set(name, union(a ?? UNSET, b ?? UNSET));
    }
    for (const [name, body] of other.functions) if (!this.functions.has(name)) this.functions.set(name, body);
    for (const name of other.exported) this.exported.add(name);
    this.setFolders([...this.folders(), ...other.folders()]);
    if (this.positional !== other.positional) this.positional = undefined;
    this.physical ||= other.physical;
    this.cdableVars ||= other.cdableVars;
    this.lastpipe ||= other.lastpipe;
    // A branch may have turned errexit off: only where both keep it on is it on.
    this.errexit &&= other.errexit;
  }

  /** Whether every variable holds what it holds in `other` (a loop has nothing new to give). */
  same(other: Scope): boolean {
    if (
      this.cwd !== other.cwd ||
      this.cwdElse !== other.cwdElse ||
      this.beforeCd !== other.beforeCd ||
      this.vars.size !== other.vars.size ||
      this.physical !== other.physical
    )
      return false;
    for (const [name, value] of this.vars) {
      if (!sameValue(value, other.vars.get(name) ?? UNSET)) return false;
    }
    return true;
  }
}

function fieldKey(f: Field): string {
  return `${f.pattern ? "p" : "-"}${f.unknown ? `${f.unknown.kind}:${f.unknown.dir ?? ""}` : ""}\u0001${f.text}`;
}

function sameValue(a: Value, b: Value): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "scalar" && b.kind === "scalar") {
    const keys = new Set(a.ways.map(fieldKey));
    return a.ways.length === b.ways.length && b.ways.every((f) => keys.has(fieldKey(f)));
  }
  if (a.kind === "array" && b.kind === "array") {
    if (!a.elements || !b.elements) return a.elements === b.elements;
    return a.elements.map(fieldKey).join("\u0002") === b.elements.map(fieldKey).join("\u0002");
  }
  return true;
}

/** The values a variable may hold after one of two paths; an unset one counts as empty. */
function union(a: Value, b: Value): Value {
  if (a.kind === "array" || b.kind === "array") {
    return { kind: "array", elements: sameValue(a, b) && a.kind === "array" ? a.elements : undefined };
  }
  const ways = [...waysOf(a), ...waysOf(b)];
  const seen = new Set<string>();
  const distinct = ways.filter((f) => {
    const key = fieldKey(f);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (distinct.length > MAX_WAYS) return unknownValue(widen(distinct));
  return { kind: "scalar", ways: distinct };
}

export function waysOf(value: Value): Field[] {
  if (value.kind === "scalar") return value.ways;
  if (value.kind === "array") return value.elements?.slice(0, 1) ?? [unknownField(TOO_VARIED)];
  return [{ text: "" }];
}

const TOO_VARIED: Unknown = { kind: "text", origin: "a value with too many possible forms" };

/** What is known of any of several values: a number if all are, else any text. */
export function widen(fields: readonly Field[]): Unknown {
  if (fields.every((f) => f.unknown?.kind === "number" || /^-?\d+$/.test(f.text))) {
    return { kind: "number", origin: fields.find((f) => f.unknown)?.unknown?.origin ?? "a number" };
  }
  const origin = fields.find((f) => f.unknown)?.unknown?.origin ?? TOO_VARIED.origin;
  return { kind: "text", origin };
}
