/**
 * What a command line does, as the layers read it from its syntax tree: every program and builtin
 * it runs (through pipelines, lists, loops, functions, substitutions, `eval` of literal text,
 * `sh -c` of a literal script and wrappers such as `xargs` and `find -exec`), with every word as
 * far as its value is known before the line runs, every file it redirects to, and the constructs
 * whose effect only the shell knows at run time.
 */

/**
 * `posix`: a script for /bin/sh. The servers run it with dash, but /bin/sh is bash on other hosts,
 * so where the two read a construct differently (`$'...'`, `$"..."`, `{a,b}`) both values count.
 * `bash`: a script bash runs (`bash -c`).
 */
export type Dialect = "posix" | "bash";

/** A value only the shell knows at run time, and what is known of it. */
export interface Unknown {
  /**
   * `number`: digits only (arithmetic, `$#`, `$?`): never a path that leaves its directory, never
   * an option that takes a file. `within`: a name inside the directory `dir` (mktemp's file, the
   * `{}` of `find -exec`). `stream`: a pipe the shell opens for a process substitution
   * (`/dev/fd/63`), no file. `text`: anything at all.
   */
  kind: "number" | "within" | "stream" | "text";
  dir?: string;
  /** What the value comes from, for a reason a person reads: "a line read by read". */
  origin: string;
  /** The programs whose output the value is (a command substitution), by base name. */
  producers?: readonly string[];
}

export interface Field {
  /** The field's text; an unknown part stands as "\u0000" ("0" when it is a number). */
  text: string;
  /** Set when a part of the field is known only at run time. */
  unknown?: Unknown;
  /** Unquoted glob characters: the shell matches the text against file names. */
  pattern?: boolean;
}

type RedirectOp = ">" | ">>" | "<" | "<>" | ">|" | "&>" | "&>>";

export interface FileRedirect {
  op: RedirectOp;
  /** The file, each way the word may expand. */
  targets: Field[];
}

/** Where a command's standard input comes from. */
export type Stdin =
  | { kind: "inherit" }
  | { kind: "file" }
  /** A here-document or here-string: its text each way it may expand, or unknown. */
  | { kind: "text"; texts?: string[]; unknown?: Unknown }
  /**
   * The output of the commands before it in a pipeline; `paths` when every line is a file within
   * one of those directories (a find that prints only paths, through line filters: pathStream.ts).
   */
  | { kind: "pipe"; producers: readonly string[]; paths?: readonly string[] };

export interface Invocation {
  /** A program found on PATH or by path; a builtin of the shell; a function the script defines. */
  kind: "program" | "builtin" | "function";
  /** Each way the command line may expand, program first. */
  argvs: Field[][];
  /** `NAME=value` before the command: its environment. */
  env: { name: string; value: Field }[];
  redirects: FileRedirect[];
  stdin: Stdin;
  /** The directory it runs in, when known. */
  cwd: string | undefined;
  /**
   * The other directory it may run in, when a `cd` before it may have failed and the line went on
   * (`cd x; cat y`): each use of a relative path is judged in both.
   */
  cwdElse?: string;
  dialect: Dialect;
  /** The wrapper that runs it (`xargs`, `find`, `timeout`, ...), if any. */
  via?: string;
}

/** A construct whose effect only the shell knows at run time. */
export interface Dynamic {
  /** Finishes "the command ...": "runs eval on text known only at run time". */
  what: string;
  /** Kinds of capability it escapes: exec, files. */
  escapes: readonly ("exec" | "files")[];
  producers?: readonly string[];
}

/** A variable the script sets for a program to read (`export PATH=...`, `LD_PRELOAD=x cmd`). */
export interface EnvSetting {
  name: string;
  value: Field;
}

export interface ShellReading {
  invocations: Invocation[];
  dynamics: Dynamic[];
  /** Variables exported or set before a command: a program reads them. */
  environment: EnvSetting[];
  /** Every variable the line expands (`$NAME`, `${NAME...}`). */
  expanded: Set<string>;
  /** The line lists the names of variables (`${!prefix*}`). */
  listsNames: boolean;
}

export type ReadResult = { ok: true; reading: ShellReading } | { ok: false; reason: string; rule: string };

/** What the reading knows of the world the line runs in. */
export interface ShellContext {
  cwd: string;
  home?: string;
  tmp?: string;
  /** Variables the server's environment holds besides HOME, PWD and TMPDIR (values not known). */
  present?: ReadonlySet<string>;
  /**
   * Whether the environment is known: L1 withholds every variable but the world's and the
   * policy's, so an unset variable is known to be empty. Without it every variable is unknown.
   */
  environmentKnown?: boolean;
  /**
   * Whether `path` is a folder the shell can enter now. A `cd` to one is taken to succeed; to any
   * other (or without this) it may fail, and a command after it that runs either way (`cd x; cat
   * y`) is judged in both folders. A reading that asks is not kept for the next call.
   */
  isDirectory?: (path: string) => boolean;
}

export const UNKNOWN_MARK = "\u0000";

export function unknownField(unknown: Unknown): Field {
  return { text: unknown.kind === "number" ? "0" : UNKNOWN_MARK, unknown };
}

/** The programs and scripts a wrapper (`env`, `sh -c`, `git -c`, ...) runs. */
interface InnerRun {
  argv: Field[];
  via: string;
  /** Variables the wrapper sets for it (`env NAME=value cmd`), as the shell's own prefix would. */
  env?: EnvSetting[];
  /** The directory it runs in: undefined is the wrapper's, null is one known only at run time. */
  cwd?: string | null;
  stdin?: Stdin;
}

interface InnerScript {
  /** The script's text, each way it may be; undefined when it is known only at run time. */
  texts?: string[];
  dialect: Dialect;
  positional?: Field[];
  /** `$0` in the script: `sh -c 'script' name`'s name, else the shell's own word. */
  arg0?: Field;
  stdin?: Stdin;
  cwd?: string;
  /** Names the script in a parse error: "the script given to bash -c". */
  what: string;
  /** Finishes "the command ..." when the text is not known. */
  unknownWhat?: string;
  producers?: readonly string[];
  /** What it escapes when its text is not known (exec and files unless said). */
  escapes?: readonly ("exec" | "files")[];
}

export interface Runs {
  argvs: InnerRun[];
  scripts: InnerScript[];
}

/** A piece of an expanded word (words.ts): its text, what is unknown of it, how it was quoted. */
export interface Seg {
  text: string;
  unknown?: Unknown;
  /** Inside quotes: no field splitting, no globbing, and an empty piece still makes a field. */
  quoted: boolean;
  /** An unquoted expansion: its text is split into fields on IFS. */
  split?: boolean;
  glob?: boolean;
  /** A field boundary even inside quotes (`"$@"`). */
  boundary?: boolean;
}

export type Ways = Seg[][];
