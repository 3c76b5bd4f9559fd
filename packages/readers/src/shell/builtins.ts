/**
 * Builtins of dash and bash: what each does to the shell's state (`cd`, `read`, `set --`,
 * `shift`, `unset`, `export`), and the ones that run text as code (`eval`, `trap`, `.` and
 * `source`, `alias`) or run a program (`exec`, `command`).
 */
import { posix } from "node:path";
import type { Field, FileRedirect, Invocation, Stdin, Unknown } from "./model.js";
import { positionalOf, type Scope, scalar, UNSET, unknownValue, waysOf } from "./scope.js";
import type { Walker } from "./walker.js";

/** Builtins of dash, and bash's own (a bash-only one is a missing program under dash: harmless). */
export const BUILTINS = new Set([
  ":",
  ".",
  "[",
  "alias",
  "bg",
  "break",
  "cd",
  "command",
  "continue",
  "echo",
  "eval",
  "exec",
  "exit",
  "export",
  "false",
  "fc",
  "fg",
  "getopts",
  "hash",
  "jobs",
  "kill",
  "local",
  "printf",
  "pwd",
  "read",
  "readonly",
  "return",
  "set",
  "shift",
  "test",
  "times",
  "trap",
  "true",
  "type",
  "ulimit",
  "umask",
  "unalias",
  "unset",
  "wait",
  // bash
  "bind",
  "builtin",
  "caller",
  "compgen",
  "complete",
  "compopt",
  "declare",
  "dirs",
  "disown",
  "enable",
  "help",
  "history",
  "let",
  "logout",
  "mapfile",
  "popd",
  "pushd",
  "readarray",
  "shopt",
  "source",
  "suspend",
  "typeset",
]);

function readInput(stdin: Stdin): Unknown {
  const producers = stdin.kind === "pipe" ? stdin.producers : undefined;
  return { kind: "text", origin: "a line read by read", ...(producers?.length ? { producers } : {}) };
}

/** The operands of a builtin after its options (`read -r -p x name` -> `name`). */
function operands(argv: Field[], valued: string): Field[] {
  const out: Field[] = [];
  for (let i = 1; i < argv.length; i++) {
    const word = (argv[i] as Field).text;
    if (word === "--") return [...out, ...argv.slice(i + 1)];
    if (out.length === 0 && word.startsWith("-") && word.length > 1) {
      if (valued.includes(word.at(-1) as string)) i++;
      continue;
    }
    out.push(argv[i] as Field);
  }
  return out;
}

function assignUnknown(scope: Scope, names: Field[], unknown: Unknown, r?: Walker): void {
  for (const name of names) {
    if (r && (name.unknown || name.text.includes("[")))
      r.subscriptName(name.unknown ? "a name known only at run time" : name.text);
    if (name.unknown) continue;
    const value = unknownValue(unknown);
    scope.vars.set(name.text, value);
    // Set before what follows, as `NAME=value; cmd` sets it (`read HOME`, then git reads its config).
    for (const way of waysOf(value)) r?.environment.push({ name: name.text, value: way });
  }
}

/** `-C command` of mapfile, compgen and complete: a command bash runs. */
function callbackOption(r: Walker, name: string, argv: Field[], scope: Scope, stdin: Stdin): void {
  const at = argv.findIndex((f, i) => i > 0 && f.text === "-C");
  if (at === -1 || !argv[at + 1]) return;
  evalText(
    r,
    [argv[at + 1] as Field],
    scope,
    stdin,
    `the command given to ${name} -C`,
    `gives ${name} -C a command known only at run time`,
  );
}

/** `env`: the command's own `NAME=value` prefixes, which a builtin sees while it runs. */
export function readBuiltin(
  r: Walker,
  name: string,
  argvs: Field[][],
  scope: Scope,
  stdin: Stdin,
  files: FileRedirect[],
  env: Invocation["env"] = [],
): void {
  if (argvs.length > 1) {
    // Several ways: each may happen; the state after is what any of them leaves. The folder is
    // one of theirs (not the one before, which each way left), and where a cd may have failed,
    // the folders before it stay pending as one cd's do (`cd $d && ls` for d in two folders).
    const branches = argvs.map((argv) => {
      const s = scope.fork();
      readOne(r, name, argv, s, stdin, files, env);
      return s;
    });
    const folders = branches.flatMap((s) => s.folders());
    const pending = branches.flatMap((s) => s.beforeCd ?? []);
    for (const s of branches) scope.merge(s);
    scope.setFolders(folders);
    scope.beforeCd = pending.length > 0 ? pending : undefined;
    return;
  }
  readOne(r, name, argvs[0] as Field[], scope, stdin, files, env);
}

function readOne(
  r: Walker,
  name: string,
  argv: Field[],
  scope: Scope,
  stdin: Stdin,
  files: FileRedirect[],
  env: Invocation["env"],
): void {
  switch (name) {
    case "cd":
      changeDirectory(r, argv, scope, env);
      return;
    case "pushd":
      pushDirectory(r, argv, scope, env);
      return;
    case "popd":
      // Back to a folder of the stack, which the reading does not follow.
      scope.setFolders([undefined]);
      scope.beforeCd = undefined;
      return;
    case "read":
      assignUnknown(scope, withDefault(operands(argv, "adinNptu"), "REPLY"), readInput(stdin), r);
      return;
    case "getopts":
      assignUnknown(scope, [...operands(argv, "").slice(1, 2), { text: "OPTARG" }], readInput(stdin), r);
      return;
    case "mapfile":
    case "readarray":
    case "compgen":
    case "complete":
    case "hash":
    case "printf":
      readMore(r, name, argv, scope, stdin);
      return;
    case "set":
      setBuiltin(argv, scope);
      return;
    case "shopt":
      shoptBuiltin(argv, scope);
      return;
    case "shift": {
      const n = Number(argv[1]?.text ?? "1");
      scope.positional = scope.positional && Number.isInteger(n) ? scope.positional.slice(n) : undefined;
      return;
    }
    case "unset":
      unsetBuiltin(r, argv, scope);
      return;
    case "export":
    case "readonly":
    case "local":
    case "declare":
    case "typeset":
      declareWords(r, name, argv, scope);
      return;
    default:
      runsCode(r, name, argv, scope, stdin, files);
      return;
  }
}

/** bash's builtins that assign arrays or names, or take a command: mapfile, compgen, hash, printf -v. */
function readMore(r: Walker, name: string, argv: Field[], scope: Scope, stdin: Stdin): void {
  if (name === "hash") {
    if (argv.some((f) => /^-[a-z]*p/.test(f.text))) {
      r.dynamics.push({ what: "sets the program a name runs (hash -p)", escapes: ["exec"] });
    }
    return;
  }
  if (name === "printf") {
    const v = argv.findIndex((f) => f.text === "-v");
    if (v !== -1 && argv[v + 1]) {
      assignUnknown(scope, [argv[v + 1] as Field], { kind: "text", origin: "printf -v" }, r);
    }
    return;
  }
  callbackOption(r, name, argv, scope, stdin);
  if (name === "compgen" || name === "complete") return;
  for (const f of withDefault(operands(argv, "dnOsuCc"), "MAPFILE")) {
    if (f.unknown || f.text.includes("[")) r.subscriptName(f.text);
    else scope.vars.set(f.text, { kind: "array", elements: undefined });
  }
}

function withDefault(names: Field[], fallback: string): Field[] {
  return names.length ? names : [{ text: fallback }];
}

/** Whether `cd` walks physically: `-P` (or `set -P` before), unless a later `-L` takes it back. */
function physicalCd(argv: Field[], scope: Scope): boolean {
  let physical = scope.physical;
  for (const f of argv.slice(1)) {
    if (f.text === "--" || !/^-[LPe@]+$/.test(f.text)) break;
    for (const c of f.text.slice(1)) if (c === "L" || c === "P") physical = c === "P";
  }
  return physical;
}

/**
 * Whether `cd NAME` may look NAME up along CDPATH (a relative name that does not start with `.` or
 * `..`): where CDPATH is set to anything but the empty string, by the command's prefix, in the line
 * before, or in the environment.
 */
function searchesCdpath(r: Walker, scope: Scope, target: Field, env: Invocation["env"]): boolean {
  if (target.unknown || target.text.startsWith("/") || /^\.\.?(?:\/|$)/.test(target.text)) return false;
  const set = (ways: readonly Field[]) => ways.some((w) => w.unknown !== undefined || w.text !== "");
  const prefix = env.filter((e) => e.name === "CDPATH").map((e) => e.value);
  if (prefix.length) return set(prefix);
  const value = scope.vars.get("CDPATH");
  if (value) return value.kind === "array" || (value.kind === "scalar" && set(value.ways));
  return r.ctx.present?.has("CDPATH") === true;
}

/**
 * bash (not in POSIX mode) retries a `cd` whose folded target does not exist with the physical
 * walk, where a `..` after a link climbs from the link's target: so a `..` after a component that
 * may be a link (`link/..`), or after the folder a cd went to (`cd link; cd ../x`), may lead where
 * the folded path does not. dash refuses instead.
 */
function retriesPhysically(r: Walker, scope: Scope, target: Field): boolean {
  if (scope.dialect !== "bash" || target.unknown) return false;
  const parts = target.text.split("/");
  if (!parts.includes("..")) return false;
  const afterName = parts.some(
    (p, i) => p === ".." && i > 0 && ![".", "..", ""].includes(parts[i - 1] as string),
  );
  return (
    afterName || (!target.text.startsWith("/") && (scope.cwd !== r.ctx.cwd || scope.cwdElse !== undefined))
  );
}

/**
 * Where `cd` goes. It may fail (no such folder, no right to enter it): the next command of an `&&`
 * runs only where it succeeded, any other either there or where the shell was (Scope.beforeCd,
 * settled by the reader), so `cd /etc; cd x; cat passwd` is read as `x/passwd` or `/etc/passwd`.
 */
function changeDirectory(r: Walker, argv: Field[], scope: Scope, env: Invocation["env"]): void {
  scope.settle();
  const before = scope.folders();
  const given = operands(argv, "");
  const [target] = given;
  // Options bash and dash know; another fails the cd (both), as several folders do in bash.
  const options = argv.slice(1, argv.length - given.length).filter((f) => f.text !== "--");
  const fails = options.some((f) => f.unknown || !/^-[LPe@]+$/.test(f.text)) || given.length > 1;
  let after: (string | undefined)[];
  if (options.some((f) => f.unknown)) after = [undefined];
  else if (!target) after = [homeOf(r, scope, env)];
  else if (
    // Where the shell goes is then the filesystem's to say: along CDPATH, or (`cd -P`) a `..`
    // after a link climbing from the link's target. Later relative paths are read as unknown.
    searchesCdpath(r, scope, target, env) ||
    (physicalCd(argv, scope) && target.text.split("/").includes("..")) ||
    retriesPhysically(r, scope, target) ||
    // A word known at run time, the previous folder, or a pattern the shell expands.
    target.unknown ||
    target.text === "-" ||
    target.pattern ||
    // `shopt -s cdable_vars`: a NAME that is no folder is the variable NAME's value.
    (scope.cdableVars && !target.text.startsWith("/") && !target.text.startsWith("."))
  )
    after = [undefined];
  else if (target.text.startsWith("/")) after = [posix.resolve(target.text)];
  else after = before.map((dir) => dir && posix.resolve(dir, target.text));
  scope.setFolders(after);
  // A folder that is there now is where the shell goes, unless a program the line ran before may
  // have moved it (`mv data d2; cd data`); elsewhere the cd may fail.
  const check = r.ctx.isDirectory;
  if (check) r.usedFilesystem = true;
  const programBefore = r.invocations.some((i) => i.kind === "program");
  const certain =
    !fails && !programBefore && check !== undefined && after.every((dir) => dir !== undefined && check(dir));
  scope.beforeCd = certain ? undefined : before;
}

/**
 * `pushd DIR` goes to DIR as `cd` does; with `-n` only the stack changes; without a folder, or with
 * `+N`/`-N`, it goes to one from the stack, which the reading does not follow: unknown.
 */
function pushDirectory(r: Walker, argv: Field[], scope: Scope, env: Invocation["env"]): void {
  const words = argv.slice(1);
  if (words.some((w) => w.unknown)) {
    scope.setFolders([undefined]);
    return;
  }
  if (words.some((w) => w.text === "-n")) return;
  const [target] = operands(argv, "");
  if (!target || /^[+-]\d+$/.test(target.text)) {
    scope.setFolders([undefined]);
    return;
  }
  changeDirectory(r, argv, scope, env);
}

/**
 * The folder a bare `cd` goes to: HOME as the line has it at that point (its own `HOME=` before
 * `cd`, an assignment earlier in the line, else the server's); unknown unless one absolute path.
 */
function homeOf(r: Walker, scope: Scope, env: Invocation["env"]): string | undefined {
  const prefixed = env.filter((e) => e.name === "HOME").at(-1)?.value;
  const assigned = scope.vars.get("HOME");
  const ways = prefixed ? [prefixed] : assigned ? waysOf(assigned) : undefined;
  if (!ways) return r.ctx.home;
  const [only] = ways;
  return ways.length === 1 && only && !only.unknown && !only.pattern && only.text.startsWith("/")
    ? only.text
    : undefined;
}

/**
 * The options of `set` that change where the shell goes and whether it goes on: `-P` (`-o
 * physical`: cd walks links, so a `..` climbs from a link's target) and `-e` (`-o errexit`). A word
 * known only at run time may be any option: physical on, errexit off (each the safe side).
 */
function setOptions(argv: Field[], scope: Scope): void {
  const apply = (letter: "P" | "e", on: boolean) => {
    if (letter === "P") scope.physical = on;
    else scope.errexit = on;
  };
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i] as Field;
    if (f.unknown) {
      scope.physical = true;
      scope.errexit = false;
    }
    if (f.unknown || f.text === "--" || !/^[-+]/.test(f.text)) return;
    if (/^[-+]o$/.test(f.text)) {
      const option = argv[++i];
      if (option?.unknown) {
        scope.physical = true;
        scope.errexit = false;
      } else if (option?.text === "physical") apply("P", f.text === "-o");
      else if (option?.text === "errexit") apply("e", f.text === "-o");
      continue;
    }
    for (const letter of ["P", "e"] as const)
      if (f.text.includes(letter)) apply(letter, f.text.startsWith("-"));
  }
}

/** bash's `shopt -s`/`-u` of the options that change where `cd` and a pipeline run (unknown: on). */
function shoptBuiltin(argv: Field[], scope: Scope): void {
  const words = argv.slice(1);
  const on = words.some((f) => f.text === "-s");
  const off = words.some((f) => f.text === "-u");
  for (const f of words) {
    if (f.unknown) {
      scope.cdableVars = true;
      scope.lastpipe = true;
      continue;
    }
    if (f.text.startsWith("-")) continue;
    if (f.text === "cdable_vars") scope.cdableVars = on || (scope.cdableVars && !off);
    if (f.text === "lastpipe") scope.lastpipe = on || (scope.lastpipe && !off);
  }
}

function setBuiltin(argv: Field[], scope: Scope): void {
  setOptions(argv, scope);
  const dashdash = argv.findIndex((f) => f.text === "--");
  if (dashdash !== -1) {
    scope.positional = positionalOf(argv.slice(dashdash + 1));
    return;
  }
  const first = argv.findIndex((f, i) => i > 0 && !/^[-+]/.test(f.text));
  if (first !== -1 && !argv.slice(1, first).some((f) => /^[-+]o$/.test(f.text)))
    scope.positional = positionalOf(argv.slice(first));
}

function unsetBuiltin(r: Walker, argv: Field[], scope: Scope): void {
  const functions = argv.some((f) => f.text === "-f");
  for (const f of operands(argv, "")) {
    if (f.unknown || f.text.includes("["))
      r.subscriptName(f.unknown ? "a name known only at run time" : f.text);
    if (f.unknown) continue;
    if (functions) scope.functions.delete(f.text);
    else scope.vars.set(f.text, UNSET);
  }
}

/** `export NAME=value` written as a plain command (the parser usually makes it a DeclClause). */
function declareWords(r: Walker, name: string, argv: Field[], scope: Scope): void {
  for (const f of operands(argv, "")) {
    const eq = f.text.indexOf("=");
    const varName = eq === -1 ? f.text : f.text.slice(0, eq);
    if (!/^[A-Za-z_]\w*$/.test(varName)) continue;
    if (eq !== -1) {
      const value: Field = f.unknown ? { ...f, text: f.text.slice(eq + 1) } : { text: f.text.slice(eq + 1) };
      scope.vars.set(varName, scalar(value));
      r.environment.push({ name: varName, value });
    }
    if (name === "export") scope.exported.add(varName);
  }
}

/** The builtins that run text as code, or run a program. */
function runsCode(
  r: Walker,
  name: string,
  argv: Field[],
  scope: Scope,
  stdin: Stdin,
  files: FileRedirect[],
): void {
  const rest = argv.slice(1);
  switch (name) {
    case "eval":
      evalText(r, rest, scope, stdin, "the text given to eval", "runs eval on text known only at run time");
      return;
    case "trap": {
      const [action, ...signals] = operands(argv, "");
      if (!action || signals.length === 0 || action.text === "-" || action.text === "") return;
      const what = "sets a trap whose command is known only at run time";
      // It runs later (at a signal, or as the shell exits): read where it is set, changing nothing after.
      evalText(r, [action], scope.fork(), stdin, "the command given to trap", what);
      return;
    }
    case ".":
    case "source": {
      const file = rest[0];
      const what =
        file && !file.unknown
          ? `runs the shell script ${file.text} with ${name}`
          : `runs a shell script named only at run time with ${name}`;
      r.dynamics.push({ what: `${what}; its commands are not part of the call`, escapes: ["exec", "files"] });
      return;
    }
    case "alias":
      if (rest.some((f) => f.text.includes("=") || f.unknown)) {
        r.dynamics.push({
          what: "defines an alias, which the shell expands in the text it reads next",
          escapes: ["exec", "files"],
        });
      }
      return;
    case "exec": {
      const command = operands(argv, "a");
      if (command.length) r.dispatch([command], [], scope, stdin, files, { programOnly: true, via: "exec" });
      return;
    }
    case "command": {
      if (rest.some((f) => f.text === "-v" || f.text === "-V")) return;
      const command = operands(argv, "");
      if (command.length)
        r.dispatch([command], [], scope, stdin, files, { skipFunctions: true, via: "command" });
      return;
    }
    case "builtin": {
      const command = operands(argv, "");
      if (command.length)
        r.dispatch([command], [], scope, stdin, files, { skipFunctions: true, via: "builtin" });
      return;
    }
    default:
      return;
  }
}

function evalText(
  r: Walker,
  words: Field[],
  scope: Scope,
  stdin: Stdin,
  what: string,
  unknownWhat: string,
): void {
  const unknown = words.find((f) => f.unknown);
  if (unknown) {
    const producers = unknown.unknown?.producers;
    r.dynamics.push({ what: unknownWhat, escapes: ["exec", "files"], ...(producers ? { producers } : {}) });
    return;
  }
  r.script(words.map((f) => f.text).join(" "), scope, stdin, what);
}
