/**
 * Simple commands: assignments, a call of a function the script defines, a builtin, or a
 * program, and what a program runs in its turn (a shell's `-c` script, the command of a wrapper
 * such as `xargs`, `timeout` or `find -exec`).
 */
import { BUILTINS, readBuiltin } from "./builtins.js";
import type { ShNode } from "./grammar.js";
import type { Field, FileRedirect, Invocation, Stdin } from "./model.js";
import { MAX_WAYS, placeOf, type Scope, scalar, unknownValue, type Value } from "./scope.js";
import type { Dispatch, Walker } from "./walker.js";
import { wordValues } from "./words.js";
import { innerRuns } from "./wrappers.js";

/** Most command lines one simple command is followed with; past it its varied words are unknown. */
const MAX_ARGVS = 64;

export function readCall(r: Walker, cmd: ShNode, scope: Scope, stdin: Stdin, files: FileRedirect[]): void {
  if (r.g.type(cmd) === "DeclClause") {
    readDecl(r, cmd, scope, stdin, files);
    return;
  }
  const args = cmd.Args as ShNode[];
  const assigns = cmd.Assigns as ShNode[];
  if (args.length === 0) {
    for (const assign of assigns) assignVar(r, assign, scope, true);
    return;
  }
  // bash expands the words before the `NAME=value` prefixes, dash after them: where a prefix's
  // value assigns a variable (`u=${v=x} cmd "$v"`), the words are read both ways.
  const before = assigns.length > 0 && scope.dialect === "posix" ? scope.fork() : undefined;
  const early =
    assigns.length > 0 && scope.dialect === "bash" ? args.map((w) => r.expand(w, scope)) : undefined;
  // Each way a value may be (an array is not exported, so the program does not get it).
  const env = assigns.flatMap((a) => {
    const value = assignValue(r, a, scope);
    return (value.kind === "scalar" ? value.ways : []).map((way) => ({
      name: a.Name.Value as string,
      value: way,
    }));
  });
  for (const setting of env) r.environment.push(setting);
  const argvs = crossProduct(early ?? args.map((w) => r.expand(w, scope)));
  if (before && !scope.same(before)) {
    const seen = new Set(argvs.map((argv) => JSON.stringify(argv)));
    for (const argv of crossProduct(args.map((w) => r.expand(w, before))))
      if (!seen.has(JSON.stringify(argv))) argvs.push(argv);
  }
  dispatch(r, argvs, env, scope, stdin, files, {});
}

/**
 * `time cmd args` where /bin/sh is dash: no keyword there, but the program time, whose words are
 * the words after it (`time -o FILE cmd` writes FILE; bash's keyword runs `-o`). Read beside the
 * keyword's reading.
 */
export function readTimeProgram(
  r: Walker,
  cmd: ShNode,
  scope: Scope,
  stdin: Stdin,
  files: FileRedirect[],
): void {
  const inner = cmd.Stmt.Cmd;
  if (!inner || r.g.type(inner) !== "CallExpr" || (inner.Args as ShNode[]).length === 0) return;
  const head: Field[][][] = [[[{ text: "time" }]], ...(cmd.PosixFormat ? [[[{ text: "-p" }]]] : [])];
  const words = (inner.Args as ShNode[]).map((w) => r.expand(w, scope));
  dispatch(r, crossProduct([...head, ...words]), [], scope, stdin, files, { programOnly: true });
}

/** The value an assignment gives (`x=1`, `x+=y`, `a=(1 2)`). */
function assignValue(r: Walker, assign: ShNode, scope: Scope): Value {
  if (assign.Array) {
    const elements: Field[] = [];
    for (const elem of assign.Array.Elems as ShNode[]) {
      if (!elem.Value) continue;
      const ways = r.expand(elem.Value, scope);
      if (ways.length !== 1) return { kind: "array", elements: undefined };
      elements.push(...(ways[0] as Field[]));
    }
    return { kind: "array", elements };
  }
  const values = assign.Value ? wordValues(r, assign.Value, scope) : [{ text: "" }];
  if (!assign.Append) return scalar(...values);
  const before = scope.vars.get(assign.Name.Value);
  if (before?.kind !== "scalar" || before.ways.length !== 1 || values.length !== 1) {
    return unknownValue({ kind: "text", origin: "a value appended to" });
  }
  const [a, b] = [before.ways[0] as Field, values[0] as Field];
  if (a.unknown || b.unknown) return unknownValue({ kind: "text", origin: "a value appended to" });
  return scalar({ text: a.text + b.text });
}

function assignVar(r: Walker, assign: ShNode, scope: Scope, record: boolean): void {
  if (!assign.Name) return;
  const name = assign.Name.Value as string;
  if (assign.Index) {
    r.arithmetic(assign.Index, scope);
    if (assign.Value) wordValues(r, assign.Value, scope);
    scope.vars.set(name, { kind: "array", elements: undefined });
    return;
  }
  const value = assignValue(r, assign, scope);
  scope.vars.set(name, value);
  if (record && value.kind === "scalar") {
    for (const way of value.ways) r.environment.push({ name, value: way });
  }
}

function readDecl(r: Walker, cmd: ShNode, scope: Scope, stdin: Stdin, files: FileRedirect[]): void {
  const variant = cmd.Variant.Value as string;
  const argv: Field[] = [{ text: variant }];
  for (const assign of cmd.Args as ShNode[]) {
    if (assign.Naked && !assign.Name) {
      for (const way of wordValues(r, assign.Value, scope)) argv.push(way);
      continue;
    }
    argv.push({ text: assign.Name.Value + (assign.Value || assign.Array ? "=..." : "") });
    // `declare -n ref=x`: every later use of ref reads and sets x, which the reading does not follow.
    if (argv.some((f) => f.unknown || /^-[a-zA-Z]*n/.test(f.text))) {
      r.dynamics.push({
        what: `makes ${assign.Name.Value} a name reference, through which a variable known at run time may change`,
        escapes: ["exec", "files"],
      });
    }
    if (assign.Value || assign.Array) assignVar(r, assign, scope, true);
    if (variant === "export" || argv.some((f) => /^-[a-z]*x/.test(f.text)))
      scope.exported.add(assign.Name.Value);
  }
  record(r, {
    kind: "builtin",
    argvs: [argv],
    env: [],
    redirects: files,
    stdin,
    ...placeOf(scope),
    dialect: scope.dialect,
  });
}

/** Every combination of the words' ways, at most {@link MAX_ARGVS}; past it a varied word is unknown. */
function crossProduct(words: Field[][][]): Field[][] {
  const count = words.reduce((n, ways) => n * Math.max(1, ways.length), 1);
  const chosen =
    count <= MAX_ARGVS
      ? words
      : words.map((ways) =>
          ways.length > 1
            ? [
                [
                  {
                    text: "\u0000",
                    unknown: { kind: "text" as const, origin: "a word with too many possible values" },
                  },
                ],
              ]
            : ways,
        );
  let argvs: Field[][] = [[]];
  for (const ways of chosen) {
    if (ways.length <= 1) {
      // One way (most words): appended to each argv in place (they are this function's own).
      for (const argv of argvs) for (const field of ways[0] ?? []) argv.push(field);
      continue;
    }
    const next: Field[][] = [];
    for (const argv of argvs) for (const way of ways) next.push([...argv, ...way]);
    argvs = next;
  }
  return argvs.filter((argv) => argv.length > 0);
}

function record(r: Walker, inv: Invocation): void {
  r.step();
  r.invocations.push(inv);
}

/** Run each command line: a function's body, a builtin, or a program and what it runs. */
export function dispatch(
  r: Walker,
  argvs: Field[][],
  env: Invocation["env"],
  scope: Scope,
  stdin: Stdin,
  files: FileRedirect[],
  how: Dispatch,
): void {
  const byName = new Map<string, Field[][]>();
  for (const argv of argvs) {
    const first = argv[0] as Field;
    const key = first.unknown ? "\u0000" : first.text;
    byName.set(key, [...(byName.get(key) ?? []), argv]);
  }
  const place = how.cwd === undefined && !("cwd" in how) ? placeOf(scope) : { cwd: how.cwd };
  for (const [name, lines] of byName) {
    const base = {
      env,
      redirects: files,
      stdin,
      ...place,
      dialect: scope.dialect,
      ...(how.via ? { via: how.via } : {}),
    };
    if (name !== "\u0000" && !how.programOnly && !how.skipFunctions && scope.functions.has(name)) {
      record(r, { kind: "function", argvs: lines, ...base });
      // Each way the call may be made runs the body with its own arguments.
      if (lines.length <= 4) for (const line of lines) r.callFunction(name, line.slice(1), scope, stdin);
      else r.callFunction(name, undefined, scope, stdin);
      continue;
    }
    if (name !== "\u0000" && !how.programOnly && BUILTINS.has(name)) {
      record(r, { kind: "builtin", argvs: lines, ...base });
      readBuiltin(r, name, lines, scope, stdin, files, env);
      continue;
    }
    const inv: Invocation = { kind: "program", argvs: lines, ...base };
    record(r, inv);
    if (name !== "\u0000") programRuns(r, inv, scope, stdin);
  }
}

/** What a program runs in its turn: a shell's script, a wrapper's command. */
function programRuns(r: Walker, inv: Invocation, scope: Scope, stdin: Stdin): void {
  // In one of two folders (a cd that may have failed): what it runs in its turn is read as
  // running in a folder known at run time only.
  const folder = inv.cwdElse === undefined ? inv.cwd : undefined;
  for (const argv of inv.argvs) {
    const runs = innerRuns(argv, stdin, folder, r.ctx);
    for (const run of runs.argvs) {
      // Set for the command it runs, so judged as the shell's own `NAME=value cmd` would be; the
      // wrapper's own environment goes on to it too (`F=x nice sh -c 'cat "$F"'`).
      for (const setting of run.env ?? []) r.environment.push(setting);
      const env = [...inv.env, ...(run.env ?? [])];
      const cwd = run.cwd === null ? undefined : (run.cwd ?? folder);
      const how: Dispatch = { programOnly: true, via: run.via, cwd };
      r.wrapped(() => dispatch(r, [run.argv], env, scope, run.stdin ?? stdin, [], how));
    }
    for (const script of runs.scripts) {
      if (script.texts === undefined) {
        const producers = script.producers?.length ? { producers: script.producers } : {};
        r.dynamics.push({
          what: script.unknownWhat ?? `runs ${script.what}, known only at run time`,
          escapes: script.escapes ?? ["exec", "files"],
          ...producers,
        });
        continue;
      }
      // A new shell process: it inherits exported variables, not functions or the rest, and the
      // variables set for it alone (`F=x sh -c 'cat "$F"'`, `env F=x sh -c ...`).
      const child = scope.child(
        script.dialect,
        script.positional ?? [],
        runCwd(script.cwd, folder),
        script.arg0,
      );
      withEnvironment(child, inv.env);
      for (const text of script.texts.slice(0, MAX_WAYS))
        r.script(text, child.fork(), script.stdin ?? stdin, script.what);
    }
  }
}

/** The variables a program's own environment holds (`NAME=value prog`), in the shell it runs. */
function withEnvironment(child: Scope, env: Invocation["env"]): void {
  const ways = new Map<string, Field[]>();
  for (const { name, value } of env) ways.set(name, [...(ways.get(name) ?? []), value]);
  for (const [name, values] of ways) {
    child.vars.set(name, scalar(...values));
    child.exported.add(name);
  }
}

function runCwd(own: string | undefined, inherited: string | undefined): string | undefined {
  return own ?? inherited;
}
