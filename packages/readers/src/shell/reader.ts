/**
 * The walk over a script's syntax tree that builds a {@link ShellReading}: statements, lists,
 * pipelines, compound commands, functions and redirections. Words are expanded by words.ts and
 * params.ts; simple commands are read by commands.ts. The walk is bounded: a budget of steps, a
 * depth of nested constructs and a depth of nested scripts (substitutions, `eval`, `sh -c`); past
 * them the reading stops with {@link ReadLimit}.
 */

import { dispatch, readCall, readTimeProgram } from "./commands.js";
import { type Grammar, type ShNode, shellGrammar } from "./grammar.js";
import { MAX_DEPTH, MAX_NESTED_SCRIPTS, MAX_STEPS, NestedParseError, ReadLimit } from "./limits.js";
import type {
  Dialect,
  Dynamic,
  EnvSetting,
  Field,
  FileRedirect,
  Invocation,
  Seg,
  ShellContext,
  ShellReading,
  Stdin,
  Unknown,
} from "./model.js";
import { outputShape } from "./output.js";
import { expandParam } from "./params.js";
import { pathStream } from "./pathStream.js";
import { placeOf, positionalOf, type Scope, scalar, unknownValue, waysOf, widen } from "./scope.js";
import type { Dispatch, Walker } from "./walker.js";
import { braceTargets, expandWord, literalWord, partsWays, wordValues } from "./words.js";

export interface RedirectAt {
  redirect: FileRedirect;
  cwd: string | undefined;
  /** The other folder the shell may be in (Scope.cwdElse), when there is one. */
  cwdElse?: string;
}

export class Reader implements Walker {
  readonly g: Grammar = shellGrammar();
  readonly invocations: Invocation[] = [];
  readonly dynamics: Dynamic[] = [];
  readonly environment: EnvSetting[] = [];
  readonly redirects: RedirectAt[] = [];
  usedFilesystem = false;
  readonly expanded = new Set<string>();
  listsNames = false;
  #steps = 0;
  #depth = 0;
  #nesting = 0;
  readonly #active = new Set<string>();
  readonly #called = new Set<string>();

  constructor(readonly ctx: ShellContext) {}

  step(): void {
    if (++this.#steps > MAX_STEPS)
      throw new ReadLimit(`the command takes more than ${MAX_STEPS} steps to read`);
  }

  reading(): ShellReading & { redirects: RedirectAt[] } {
    return {
      invocations: this.invocations,
      dynamics: this.dynamics,
      environment: this.environment,
      redirects: this.redirects,
      expanded: this.expanded,
      listsNames: this.listsNames,
    };
  }

  /** Read a script (the line itself, or one nested in it) in `scope`. */
  script(src: string, scope: Scope, stdin: Stdin, what: string): void {
    if (this.#nesting >= MAX_NESTED_SCRIPTS) {
      throw new ReadLimit(`the command nests scripts more than ${MAX_NESTED_SCRIPTS} deep`);
    }
    const parsed = this.g.parse(src);
    if ("error" in parsed && parsed.tooLarge) throw new ReadLimit(parsed.error);
    if ("error" in parsed) {
      if (this.#nesting === 0) throw new NestedParseError(parsed.error);
      throw new NestedParseError(`${what} does not parse as shell: ${parsed.error}`);
    }
    this.#nesting++;
    try {
      const before = new Map(scope.functions);
      this.stmts(parsed.file.Stmts as ShNode[], scope, stdin);
      this.uncalledFunctions(scope, before);
    } finally {
      this.#nesting--;
    }
  }

  /** A function no line calls is still read, with its arguments unknown: `eval` could call it. */
  private uncalledFunctions(scope: Scope, before: ReadonlyMap<string, ShNode>): void {
    for (const [name, body] of scope.functions) {
      if (this.#called.has(name) || before.get(name) === body) continue;
      const inner = scope.fork();
      inner.positional = undefined;
      this.#called.add(name);
      this.stmt(body, inner, { kind: "inherit" });
    }
  }

  /**
   * A list of commands. The next one runs whether a cd just before it succeeded or not, unless
   * `set -e` ends the shell at a failure, which it does not in a condition (`condition`).
   */
  stmts(list: ShNode[], scope: Scope, stdin: Stdin, condition = false): void {
    list.forEach((node, i) => {
      if (i > 0) scope.settle(scope.errexit && !condition);
      this.stmt(node, scope, stdin);
    });
  }

  stmt(node: ShNode, scope: Scope, stdin: Stdin): void {
    this.step();
    if (++this.#depth > MAX_DEPTH)
      throw new ReadLimit(`the command nests constructs more than ${MAX_DEPTH} deep`);
    try {
      const redirs = node.Redirs as ShNode[];
      const simple = node.Cmd && redirs.length > 0 && this.g.type(node.Cmd) === "CallExpr";
      const snapshot = simple ? scope.fork() : undefined;
      const own = this.redirections(redirs, scope);
      const input = own.stdin ?? stdin;
      // `cmd &` runs in a subshell of its own: its cd stays there.
      if (node.Cmd) this.command(node.Cmd, node.Background ? scope.fork() : scope, input, own.files);
      // `! cmd` succeeds where cmd failed: a cd in it may have gone or not.
      if (node.Negated) scope.settle();
      // A simple command's words (and, in bash, its prefixes) are expanded before its
      // redirections: a `${v=x}` among them changes what a redirection names.
      if (snapshot && !scope.same(snapshot)) this.redirections(redirs, scope);
    } finally {
      this.#depth--;
    }
  }

  private command(cmd: ShNode, scope: Scope, stdin: Stdin, files: FileRedirect[]): void {
    switch (this.g.type(cmd)) {
      case "CallExpr":
        readCall(this, cmd, scope, stdin, files);
        return;
      case "BinaryCmd":
        this.binary(cmd, scope, stdin);
        return;
      case "Block":
        this.stmts(cmd.Stmts as ShNode[], scope, stdin);
        return;
      case "Subshell":
        this.stmts(cmd.Stmts as ShNode[], scope.fork(), stdin);
        return;
      case "IfClause":
        this.ifClause(cmd, scope, stdin);
        return;
      case "WhileClause":
        this.loop(scope, (s) => {
          this.stmts(cmd.Cond as ShNode[], s, stdin, true);
          // `until` runs its body where the condition failed: a cd in it may have gone or not.
          s.settle();
          this.stmts(cmd.Do as ShNode[], s, stdin);
        });
        return;
      case "ForClause":
        this.forClause(cmd, scope, stdin);
        return;
      case "CaseClause":
        this.caseClause(cmd, scope, stdin);
        return;
      case "FuncDecl":
        scope.functions.set(cmd.Name.Value as string, cmd.Body);
        return;
      case "ArithmCmd":
        this.arithmetic(cmd.X, scope);
        return;
      case "LetClause":
        for (const expr of cmd.Exprs as ShNode[]) this.arithmetic(expr, scope);
        return;
      case "TestClause":
        this.testExpr(cmd.X, scope);
        return;
      case "DeclClause":
        readCall(this, cmd, scope, stdin, files);
        return;
      case "TimeClause":
        // dash has no `time` keyword: there it is the program, and its words are the program's.
        if (cmd.Stmt && scope.dialect === "posix") readTimeProgram(this, cmd, scope, stdin, files);
        if (cmd.Stmt) this.stmt(cmd.Stmt, scope, stdin);
        return;
      case "CoprocClause":
        // A coprocess is a subshell running beside the shell.
        if (cmd.Stmt) this.stmt(cmd.Stmt, scope.fork(), stdin);
        return;
      default:
        throw new ReadLimit(`the command uses a construct the reader does not know (${this.g.type(cmd)})`);
    }
  }

  private binary(cmd: ShNode, scope: Scope, stdin: Stdin): void {
    const op = this.g.ops.binary.get(cmd.Op);
    if (op === "|" || op === "|&") {
      // Every command of a pipeline runs in a subshell of its own.
      const before = this.invocations.length;
      this.stmt(cmd.X, scope.fork(), stdin);
      const writers = this.invocations.slice(before);
      const producers = writers.map(programName).filter((n) => n !== "");
      const paths = pathStream(writers);
      // bash's lastpipe runs the last command in this shell (no job control in a script).
      const last = scope.lastpipe && scope.dialect === "bash" ? scope : scope.fork();
      this.stmt(cmd.Y, last, { kind: "pipe", producers, ...(paths ? { paths } : {}) });
      return;
    }
    if (op === "&&") {
      // Each command of an && chain runs where the ones before it succeeded (`cd x && ls` lists x).
      for (const reached of this.andChain(cmd, scope, stdin)) scope.merge(reached);
      return;
    }
    this.stmt(cmd.X, scope, stdin);
    const maybe = scope.fork();
    maybe.settle();
    this.stmt(cmd.Y, maybe, stdin);
    if (op === "||" && this.alwaysExits(cmd.Y, scope)) {
      // `cd x || exit 1`: what follows runs only where X succeeded.
      scope.beforeCd = undefined;
      return;
    }
    scope.merge(maybe);
  }

  /**
   * A command after which the shell never goes on: `exit`, `return` (the builtins, not a function
   * the line names so), or a group that ends with one.
   */
  private alwaysExits(node: ShNode, scope: Scope): boolean {
    if (node.Negated || node.Background || !node.Cmd) return false;
    const type = this.g.type(node.Cmd);
    if (type === "Block") {
      const last = (node.Cmd.Stmts as ShNode[]).at(-1);
      return last !== undefined && this.alwaysExits(last, scope);
    }
    if (type !== "CallExpr") return false;
    const first = (node.Cmd.Args as ShNode[])[0];
    const parts = first?.Parts as ShNode[] | undefined;
    const word =
      parts?.length === 1 && this.g.type(parts[0] as ShNode) === "Lit" ? (parts[0] as ShNode).Value : "";
    return (word === "exit" || word === "return") && !scope.functions.has(word);
  }

  /** The states an `a && b && c` chain may stop in: after each command that ran. */
  private andChain(cmd: ShNode, scope: Scope, stdin: Stdin): Scope[] {
    const left = cmd.X;
    const chained =
      left.Cmd &&
      this.g.type(left.Cmd) === "BinaryCmd" &&
      this.g.ops.binary.get(left.Cmd.Op) === "&&" &&
      left.Redirs.length === 0;
    let states: Scope[];
    if (chained) states = this.andChain(left.Cmd, scope, stdin);
    else {
      this.stmt(left, scope, stdin);
      states = [scope];
    }
    const next = (states.at(-1) as Scope).fork();
    // It runs only where the command before it succeeded: a cd there went where it was told.
    next.beforeCd = undefined;
    this.stmt(cmd.Y, next, stdin);
    return [...states.filter((s) => s !== scope), next];
  }

  private ifClause(cmd: ShNode, scope: Scope, stdin: Stdin): void {
    this.stmts(cmd.Cond as ShNode[], scope, stdin, true);
    // The body runs where the condition succeeded (a cd in it went where it was told); the
    // rest, where it failed or either.
    const then = scope.fork();
    then.beforeCd = undefined;
    scope.settle();
    this.stmts(cmd.Then as ShNode[], then, stdin);
    if (cmd.Else) {
      const otherwise = scope.fork();
      this.ifClause(cmd.Else, otherwise, stdin);
      scope.merge(otherwise);
    }
    scope.merge(then);
  }

  /**
   * A loop body may run any number of times: it is read with what the variables hold before it,
   * then again with what one more round may leave, until nothing changes (at most three rounds;
   * then what still changes is taken as unknown and the body is read once more).
   */
  loop(scope: Scope, body: (s: Scope) => void): void {
    for (let round = 0; round < 3; round++) {
      const s = scope.fork();
      body(s);
      const before = scope.fork();
      scope.merge(s);
      if (scope.same(before)) return;
    }
    const s = scope.fork();
    body(s);
    for (const [name, value] of s.vars) {
      const was = scope.vars.get(name);
      if (was === value) continue;
      const fields = value.kind === "scalar" ? value.ways : [];
      scope.vars.set(name, unknownValue(widen(fields)));
    }
    body(scope.fork());
  }

  private forClause(cmd: ShNode, scope: Scope, stdin: Stdin): void {
    const loop = cmd.Loop;
    if (this.g.type(loop) === "CStyleLoop") {
      if (loop.Init) this.arithmetic(loop.Init, scope);
      this.loop(scope, (s) => {
        if (loop.Cond) this.arithmetic(loop.Cond, s);
        this.stmts(cmd.Do as ShNode[], s, stdin);
        if (loop.Post) this.arithmetic(loop.Post, s);
      });
      return;
    }
    const name = loop.Name.Value as string;
    const items = loop.Items as ShNode[];
    const fields: Field[] = [];
    if (items.length === 0) fields.push(...(scope.positional ?? [positionalUnknown]));
    for (const item of items) for (const way of this.expand(item, scope)) fields.push(...way);
    const value =
      fields.length === 0
        ? scalar({ text: "" })
        : fields.length > 16
          ? unknownValue(widen(fields))
          : scalar(...fields);
    // The variable holds one of the items in every round, and the last one after the loop.
    scope.vars.set(name, value);
    // Set before the commands of the loop, as `NAME=value; cmd` sets it (a HOME or PATH).
    for (const way of waysOf(value)) this.environment.push({ name, value: way });
    this.loop(scope, (s) => {
      s.vars.set(name, value);
      this.stmts(cmd.Do as ShNode[], s, stdin);
    });
  }

  private caseClause(cmd: ShNode, scope: Scope, stdin: Stdin): void {
    wordValues(this, cmd.Word, scope, "double");
    const branches: Scope[] = [];
    for (const item of cmd.Items as ShNode[]) {
      for (const pattern of item.Patterns as ShNode[]) wordValues(this, pattern, scope);
      const branch = scope.fork();
      this.stmts(item.Stmts as ShNode[], branch, stdin);
      branches.push(branch);
    }
    for (const branch of branches) scope.merge(branch);
  }

  /** A call of a function the script defines: its body runs in the caller's shell, with new `$1`... */
  callFunction(name: string, args: Field[] | undefined, scope: Scope, stdin: Stdin): void {
    const body = scope.functions.get(name);
    this.#called.add(name);
    // A function that calls itself: its body is being read already.
    if (!body || this.#active.has(name)) return;
    this.#active.add(name);
    const saved = scope.positional;
    scope.positional = args && positionalOf(args);
    try {
      this.stmt(body, scope, stdin);
    } finally {
      scope.positional = saved;
      this.#active.delete(name);
    }
  }

  /** A parameter expansion (`$x`, `${x#pat}`, ...), every way it may be (params.ts). */
  param(pe: ShNode, scope: Scope, quoted: boolean): Seg[][] {
    return expandParam(this, pe, scope, quoted);
  }

  /** Run each command line: a function's body, a builtin, or a program (commands.ts). */
  dispatch(
    argvs: Field[][],
    env: Invocation["env"],
    scope: Scope,
    stdin: Stdin,
    files: FileRedirect[],
    how: Dispatch,
  ): void {
    dispatch(this, argvs, env, scope, stdin, files, how);
  }

  /** Every way a word expands (fields), at most MAX_WAYS. */
  expand(word: ShNode, scope: Scope): Field[][] {
    return expandFields(this, word, scope);
  }

  /** `$(...)` and backticks: the inner script is read in a subshell; its output is unknown. */
  substitution(stmts: ShNode[], scope: Scope): Unknown {
    const before = this.invocations.length;
    this.nested(() => this.stmts(stmts, scope.fork(), { kind: "inherit" }));
    const inner = this.invocations.slice(before);
    const producers = [...new Set(inner.map(programName).filter((n) => n !== ""))];
    const shape = outputShape(stmts, inner, this.g, this.ctx);
    return shape ?? { kind: "text", origin: "the output of a command substitution", producers };
  }

  /** `<(...)` and `>(...)`: the inner script is read in a subshell; the programs it runs. */
  processSubstitution(stmts: ShNode[], scope: Scope): string[] {
    const before = this.invocations.length;
    this.nested(() => this.stmts(stmts, scope.fork(), { kind: "inherit" }));
    return [
      ...new Set(
        this.invocations
          .slice(before)
          .map(programName)
          .filter((n) => n !== ""),
      ),
    ];
  }

  /** A program a wrapper runs (`xargs cmd`, `find -exec cmd`): one level deeper. */
  wrapped(read: () => void): void {
    if (++this.#depth > MAX_DEPTH)
      throw new ReadLimit(`the command nests wrappers more than ${MAX_DEPTH} deep`);
    try {
      read();
    } finally {
      this.#depth--;
    }
  }

  private nested(read: () => void): void {
    if (this.#nesting >= MAX_NESTED_SCRIPTS) {
      throw new ReadLimit(`the command nests scripts more than ${MAX_NESTED_SCRIPTS} deep`);
    }
    this.#nesting++;
    try {
      read();
    } finally {
      this.#nesting--;
    }
  }

  /** Arithmetic: assignments make numbers; a variable of unknown text is code bash evaluates. */
  arithmetic(node: ShNode | null, scope: Scope): void {
    if (!node) return;
    this.step();
    if (++this.#depth > MAX_DEPTH)
      throw new ReadLimit(`the command nests constructs more than ${MAX_DEPTH} deep`);
    try {
      this.arithmeticNode(node, scope);
    } finally {
      this.#depth--;
    }
  }

  private arithmeticNode(node: ShNode, scope: Scope): void {
    const type = this.g.type(node);
    if (type === "BinaryArithm" || type === "UnaryArithm") {
      const target = literalWord(this, node.X);
      if (type === "BinaryArithm") this.arithmetic(node.Y, scope);
      if (!(this.g.ops.arithAssign.has(node.Op) && target && /^[A-Za-z_]\w*$/.test(target))) {
        this.arithmetic(node.X, scope);
        return;
      }
      this.arithmeticName(target, scope);
      scope.vars.set(target, unknownValue({ kind: "number", origin: "arithmetic" }));
      return;
    }
    if (type === "ParenArithm") {
      this.arithmetic(node.X, scope);
      return;
    }
    if (type !== "Word") return;
    const name = literalWord(this, node);
    if (name !== undefined && /^[A-Za-z_]\w*$/.test(name)) {
      this.arithmeticName(name, scope);
      return;
    }
    for (const way of partsWays(this, node.Parts as ShNode[], scope, "double")) {
      if (way.some((seg) => seg.unknown?.kind === "text"))
        this.arithmeticInjection("an expansion", way.find((s) => s.unknown)?.unknown);
    }
  }

  private arithmeticName(name: string, scope: Scope): void {
    const value = scope.vars.get(name);
    const fields = value?.kind === "scalar" ? value.ways : [];
    const text = fields.find((f) => f.unknown?.kind === "text" || /\[/.test(f.text));
    if (text) this.arithmeticInjection(`$${name}`, text.unknown);
  }

  /**
   * A variable name bash reads with a subscript it evaluates as arithmetic (`read 'a[$(id)]'`,
   * `printf -v`, `unset`, `${!x}`), or a name only the run knows: it may run a command.
   */
  subscriptName(what: string): void {
    this.dynamics.push({
      what: `names a variable (${what}) by text that may hold an array subscript, where bash runs any command substitution`,
      escapes: ["exec", "files"],
    });
  }

  private arithmeticInjection(what: string, unknown: Unknown | undefined): void {
    this.dynamics.push({
      what: `evaluates ${what}, text known only at run time, as arithmetic, where bash runs any command substitution in an array subscript`,
      escapes: ["exec", "files"],
      ...(unknown?.producers ? { producers: unknown.producers } : {}),
    });
  }

  private testExpr(node: ShNode | null, scope: Scope): void {
    if (!node) return;
    this.step();
    const type = this.g.type(node);
    if (type === "Word") {
      wordValues(this, node, scope, "double");
      return;
    }
    if (type === "BinaryTest") {
      // `[[ a -eq b ]]` evaluates its operands as arithmetic.
      const arith = this.g.ops.arithTest.has(node.Op);
      for (const side of [node.X, node.Y]) {
        if (arith && this.g.type(side) === "Word") this.arithmetic(side, scope);
        else this.testExpr(side, scope);
      }
    } else if (type === "UnaryTest" || type === "ParenTest") this.testExpr(node.X, scope);
  }

  /** The statement's redirections: files opened, and where standard input comes from. */
  private redirections(redirs: ShNode[], scope: Scope): { stdin?: Stdin; files: FileRedirect[] } {
    let stdin: Stdin | undefined;
    const files: FileRedirect[] = [];
    for (const redir of redirs) {
      const op = this.g.ops.redirect.get(redir.Op);
      const fd = redir.N ? Number(redir.N.Value) : undefined;
      if (op === "<<" || op === "<<-") {
        const text = this.heredoc(redir, scope);
        if (fd === undefined || fd === 0) stdin = text;
        continue;
      }
      if (op === "<<<") {
        const values = wordValues(this, redir.Word, scope, "double");
        if (fd === undefined || fd === 0)
          stdin = textStdin(values.map((f) => ({ ...f, text: `${f.text}\n` })));
        continue;
      }
      const values = [...wordValues(this, redir.Word, scope), ...braceTargets(this, redir.Word, scope)];
      if (op === "<&" || op === ">&") {
        // `2>&1`, `>&-`, `<&3`: a descriptor, no file. bash's `>& file` sends both outputs to a file.
        if (op === "<&" || values.every((v) => /^(\d+|-|\d+-)$/.test(v.text) && !v.unknown)) continue;
      }
      if (!op) continue;
      const fileOp = op === ">&" ? "&>" : (op as FileRedirect["op"]);
      const redirect: FileRedirect = { op: fileOp, targets: values };
      files.push(redirect);
      this.redirects.push({ redirect, ...placeOf(scope) });
      if (fileOp === "<" && (fd === undefined || fd === 0)) stdin = { kind: "file" };
    }
    return { stdin, files };
  }

  private heredoc(redir: ShNode, scope: Scope): Stdin {
    if (!redir.Hdoc) return { kind: "text", texts: [""] };
    const quotedDelimiter = (redir.Word.Parts as ShNode[]).some(
      (p) => this.g.type(p) !== "Lit" || String(p.Value).includes("\\"),
    );
    const values = wordValues(this, redir.Hdoc, scope, quotedDelimiter ? "raw" : "heredoc");
    return textStdin(values);
  }

  dialectOf(scope: Scope): Dialect {
    return scope.dialect;
  }
}

const positionalUnknown: Field = {
  text: "\u0000",
  unknown: { kind: "text", origin: "the positional parameters" },
};

function textStdin(values: Field[]): Stdin {
  const unknown = values.find((v) => v.unknown)?.unknown;
  if (unknown) return { kind: "text", unknown };
  return { kind: "text", texts: values.map((v) => v.text) };
}

/** The base name of the program an invocation runs, or "" when it is not known. */
function programName(inv: Invocation): string {
  const first = inv.argvs[0]?.[0];
  if (!first || first.unknown) return "";
  const slash = first.text.lastIndexOf("/");
  return slash === -1 ? first.text : first.text.slice(slash + 1);
}

function expandFields(r: Reader, word: ShNode, scope: Scope): Field[][] {
  return expandWord(r, word, scope);
}
