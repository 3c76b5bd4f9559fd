/**
 * L1 on a `command` argument. The line is read with the shell's grammar (shell/), then every
 * program it runs must be one the policy lists, every file it names or redirects to must be one
 * the tool may touch, and every destination it names must be listed.
 *
 * What the line does that only the shell knows at run time (a program or a file named by a
 * variable read at run time, `eval` of such text, a script file's commands) is refused where no
 * kernel layer confines that effect, and left to the kernel where one does (`confined`): L1 still
 * refuses what it can see is outside the policy, under every config.
 */
import { basename, posix } from "node:path";
import {
  analyzeCode,
  type CodeUse,
  type Confinement,
  enterableDirectory,
  envPrefixCommand,
  type Field,
  GIT_CONFIG_VALUED,
  gitKeyKind,
  gitSubcommand,
  globFiles,
  type Invocation,
  optionUses,
  readShell,
  type ShellContext,
  UNKNOWN_MARK,
} from "@mcpguard/readers";
import { proxyDestination, readCurl, readWget } from "./curl.js";
import { ALLOW, type Decision, destinationAllowed, destinationOf, type Need } from "./decision.js";
import { WORLD_VARIABLES } from "./env.js";
import type { ResolvedTool, Variables } from "./load.js";
import type { PathResolver } from "./paths.js";
import { canonicalPath } from "./paths.js";
import {
  CAPABILITY_BUILTINS,
  CWD_WITHOUT_OPERANDS,
  codeVariable,
  GIT_COMMANDS,
  GIT_NETWORK,
  GIT_NETWORK_VERBS,
  NO_FILE_OPERANDS,
  PATH_VARIABLES,
} from "./programs.js";
import { symlinkTargets } from "./symlinkTargets.js";

export interface CommandCheck {
  tool: ResolvedTool;
  vars: Variables;
  resolvePath: PathResolver;
  confined: Confinement;
  /** Variables the server keeps beyond the world's (the policy's `environment.keep` and tools' `env`). */
  keepEnv: ReadonlySet<string>;
}

type Access = "read" | "write" | "touch";

const contexts = new WeakMap<Variables, WeakMap<ReadonlySet<string>, ShellContext>>();

/** The environment L1 leaves the server: the world's variables and the policy's (one object per policy). */
export function shellContext(vars: Variables, keepEnv: ReadonlySet<string>): ShellContext {
  let byKeep = contexts.get(vars);
  if (!byKeep) {
    byKeep = new WeakMap();
    contexts.set(vars, byKeep);
  }
  let ctx = byKeep.get(keepEnv);
  if (!ctx) {
    const present = new Set([
      ...WORLD_VARIABLES.filter((n) => !["HOME", "TMPDIR", "PWD"].includes(n)),
      ...keepEnv,
    ]);
    ctx = {
      cwd: vars.cwd,
      home: vars.home,
      tmp: vars.tmp,
      present,
      environmentKnown: true,
      isDirectory: enterableDirectory,
    };
    byKeep.set(keepEnv, ctx);
  }
  return ctx;
}

/** How a field reads in a reason: the unknown parts as `…`. */
function shown(field: Field): string {
  return field.text.split(UNKNOWN_MARK).join("…");
}

function originOf(field: Field): string {
  return field.unknown?.origin ?? "the shell";
}

export function checkCommand(value: string, c: CommandCheck): Decision {
  const read = readShell(value, shellContext(c.vars, c.keepEnv));
  if (!read.ok) return deny(`l1.${read.rule}`, read.reason);
  const { reading } = read;
  if (
    reading.invocations.length === 0 &&
    reading.redirects.length === 0 &&
    reading.environment.length === 0
  ) {
    return deny("l1.command.empty", "the command runs nothing");
  }
  for (const inv of reading.invocations) {
    const d = checkInvocation(inv, c);
    if (!d.allow) return d;
  }
  for (const { redirect, cwd, cwdElse } of reading.redirects) {
    const access: Access = redirect.op === "<" ? "read" : "write";
    for (const target of redirect.targets) {
      for (const folder of cwdElse === undefined ? [cwd] : [cwd, cwdElse]) {
        const d = checkField(target, access, folder, c, "the file it redirects to");
        if (!d.allow) return d;
      }
    }
  }
  for (const dynamic of reading.dynamics) {
    if (dynamic.escapes.every((e) => (e === "exec" ? c.confined.exec : c.confined.files))) continue;
    return deny("l1.command.dynamic", `the command ${dynamic.what}, which only the shell knows at run time`);
  }
  for (const { name, value: field } of reading.environment) {
    if (/^[a-z0-9]+_proxy$/i.test(name) && !/^no_proxy$/i.test(name)) {
      const d = checkProxyVariable(name, field, c);
      if (!d.allow) return d;
    }
    if (PATH_VARIABLES.has(name)) {
      const d = checkField(field, "touch", c.vars.cwd, c, `the directory ${name} names`);
      if (!d.allow) return d;
    }
    if (!codeVariable(name) || c.confined.exec) continue;
    if (name === "HOME" && !field.unknown && field.text === c.vars.home) continue;
    return deny(
      "l1.command.dynamic",
      `the command sets ${name}, which changes what code the programs it runs load`,
    );
  }
  return ALLOW;
}

/**
 * One invocation, in the folder it runs in, and in the other one it may run in when a `cd` before
 * it may have failed (`cd /etc; cd x; cat passwd` may read `/etc/passwd`): allowed in both, or not.
 */
function checkInvocation(inv: Invocation, c: CommandCheck): Decision {
  if (inv.cwdElse !== undefined) {
    const d = checkInvocation({ ...inv, cwd: inv.cwdElse, cwdElse: undefined }, c);
    if (!d.allow) return d;
  }
  if (inv.kind === "function") return ALLOW;
  for (const argv of inv.argvs) {
    const d = inv.kind === "builtin" ? checkBuiltin(argv, inv, c) : checkProgram(argv, inv, c);
    if (!d.allow) return d;
  }
  return ALLOW;
}

function checkBuiltin(argv: Field[], inv: Invocation, c: CommandCheck): Decision {
  const name = (argv[0] as Field).text;
  const why = CAPABILITY_BUILTINS.get(name);
  if (why && !c.tool.exec.includes(name)) {
    return deny("l1.exec", `${name} is a shell builtin that ${why}, which ${c.tool.name} may not do`);
  }
  if ((name === "." || name === "source") && argv[1])
    return checkField(argv[1], "read", inv.cwd, c, `the script ${name} runs`);
  return ALLOW;
}

function checkProgram(argv: Field[], inv: Invocation, c: CommandCheck): Decision {
  const program = argv[0] as Field;
  if (program.unknown || program.pattern) {
    if (c.confined.exec) return checkOperands(argv, inv, c, new Set());
    const from = program.unknown ? originOf(program) : "a glob pattern";
    return deny(
      "l1.command.dynamic",
      `the program to run comes from ${from}, which only the shell knows at run time`,
    );
  }
  const name = basename(program.text);
  // `env NAME=value cmd` is the shell's own prefix spelled as a program: the command it runs is
  // judged as its own invocation, the variables as the shell's (checkCommand), so env needs no
  // entry (bare `env`, which prints the environment, still does).
  if (program.text === "env" && envPrefixCommand(argv) !== undefined) return ALLOW;
  if (!executableAllowed(argv, c.tool.exec, inv.cwd ?? c.vars.cwd)) {
    return deny("l1.exec", `${name} is not a program ${c.tool.name} may run`, {
      capability: "exec",
      value: program.text,
    });
  }
  if (name === "git") {
    const d = checkGit(argv, inv, c);
    if (!d.allow) return d;
  }
  const use = analyzeCode(name, argv, inv, c.confined);
  if (use.refusal) return deny("l1.code", use.refusal);
  const d = checkCodeUse(use, inv, c);
  if (!d.allow) return d;
  const files = checkOptionFiles(name, argv, inv, c);
  if (!files.allow) return files;
  let curlWords: { urls: Set<number>; values: Set<number> } | undefined;
  if (name === "curl" || name === "wget") {
    const d = checkCurl(name, argv, c);
    if (!d.decision.allow) return d.decision;
    curlWords = d;
  }
  if (NO_FILE_OPERANDS.has(name)) return ALLOW;
  if (CWD_WITHOUT_OPERANDS.has(name) && argv.slice(1).every((f) => !f.unknown && f.text.startsWith("-"))) {
    const folder = checkField(
      { text: "." },
      "touch",
      inv.cwd,
      c,
      `the folder ${name} reads (its own, given no operand)`,
    );
    if (!folder.allow) return folder;
  }
  const links = name === "ln" ? symlinkTargets(argv, inv.cwd) : undefined;
  if (!links)
    return checkOperands(
      argv,
      inv,
      c,
      new Set([...use.codeOperands, ...(curlWords?.urls ?? [])]),
      curlWords?.values,
    );
  for (const { field, dir } of links.targets) {
    const target = checkField(field, "touch", dir, c, `the target of the link "${shown(field)}"`);
    if (!target.allow) return target;
  }
  return checkOperands(argv, inv, c, new Set([...use.codeOperands, ...links.skip]));
}

/**
 * Files an option names for the program to read or write (`sort -o FILE`, `date -fFILE`), or to run
 * as code (`awk -f FILE`, read like any file it reads), by the readers' table.
 */
function checkOptionFiles(name: string, argv: Field[], inv: Invocation, c: CommandCheck): Decision {
  for (const use of optionUses(name, argv.slice(1)).uses) {
    if (!["read", "write", "script"].includes(use.does) || !use.value) continue;
    const what = `the file ${name} ${use.option} names`;
    const d = checkField(use.value, use.does === "write" ? "write" : "read", inv.cwd, c, what);
    if (!d.allow) return d;
  }
  return ALLOW;
}

function checkCodeUse(use: CodeUse, inv: Invocation, c: CommandCheck): Decision {
  for (const file of use.files) {
    const d = checkField({ text: file.path }, file.access, inv.cwd, c, "a file its code opens");
    if (!d.allow) return d;
  }
  for (const url of use.urls) {
    const d = checkUrlWord(url, c);
    if (!d.allow) return d;
  }
  return ALLOW;
}

/**
 * curl's destinations, read with its own grammar (curl.ts): each must be one the tool may reach.
 * What only the run knows (a URL from a variable) is left to the kernel where it confines the
 * network. The URLs' places in `argv`, which are no files.
 */
function checkCurl(
  name: "curl" | "wget",
  argv: Field[],
  c: CommandCheck,
): { decision: Decision; urls: Set<number>; values: Set<number> } {
  const none = { urls: new Set<number>(), values: new Set<number>() };
  const read = name === "curl" ? readCurl(argv.slice(1)) : readWget(argv.slice(1));
  if (!read.ok) {
    if (read.unknown && c.confined.network) return { decision: ALLOW, ...none };
    return {
      decision: deny(read.unknown ? "l1.command.dynamic" : "l1.network", `${name}: ${read.reason}`),
      ...none,
    };
  }
  // Where it reads its settings (unless curl's -q comes first, or wget's --no-config is given):
  // not a file the tool may write.
  const home = c.vars.home;
  const first = argv[1];
  const skips =
    name === "curl"
      ? first !== undefined && !first.unknown && (first.text === "-q" || first.text === "--disable")
      : argv.some((f) => f.text === "--no-config");
  if (home && !skips) {
    const rc = `${home}/${name === "curl" ? ".curlrc" : ".wgetrc"}`;
    if (checkPath(rc, "write", c.vars.cwd, c).allow)
      return {
        decision: deny(
          "l1.network",
          `${name} would read its settings from ${rc}, which ${c.tool.name} may write; give ${name === "curl" ? "-q first" : "--no-config"}`,
        ),
        ...none,
      };
  }
  for (const to of read.destinations) {
    if (destinationAllowed(to.host, to.port, c.tool.network)) continue;
    return {
      decision: deny(
        "l1.network",
        `${to.host}:${to.port} (${to.what}) is not a destination ${c.tool.name} may reach`,
        {
          capability: "network",
          value: destinationOf(to.host, to.port),
        },
      ),
      ...none,
    };
  }
  // Positions among curl's words, which follow the program's name.
  const shift = (at: Set<number>) => new Set([...at].map((i) => i + 1));
  return { decision: ALLOW, urls: shift(read.urls), values: shift(read.values) };
}

/** A proxy the line sets for the programs it runs (`https_proxy=... curl ...`): where they connect. */
function checkProxyVariable(name: string, field: Field, c: CommandCheck): Decision {
  if (field.unknown) {
    if (c.confined.network) return ALLOW;
    return deny("l1.command.dynamic", `the command sets ${name} to a proxy known only at run time`);
  }
  if (field.text === "") return ALLOW;
  const to = proxyDestination(field.text);
  if (typeof to === "string") return deny("l1.network", `${name}: ${to}`);
  if (destinationAllowed(to.host, to.port, c.tool.network)) return ALLOW;
  return deny(
    "l1.network",
    `${to.host}:${to.port} (the proxy ${name} names) is not a destination ${c.tool.name} may reach`,
    {
      capability: "network",
      value: destinationOf(to.host, to.port),
    },
  );
}

/** Every operand that may name a file or a destination: known ones are checked, unknown ones refused unless confined. */
function checkOperands(
  argv: Field[],
  inv: Invocation,
  c: CommandCheck,
  skip: ReadonlySet<number>,
  noUrls?: ReadonlySet<number>,
): Decision {
  for (let i = 1; i < argv.length; i++) {
    if (skip.has(i)) continue;
    const field = argv[i] as Field;
    if (field.unknown) {
      const d = checkField(field, "touch", inv.cwd, c, `the argument "${shown(field)}"`);
      if (!d.allow) return d;
      continue;
    }
    if (URL_WORD.test(field.text)) {
      // A value of an option that names no destination (curl's `-e URL`, a header): no file either.
      if (noUrls?.has(i)) continue;
      const d = checkUrlWord(field.text, c);
      if (!d.allow) return d;
      continue;
    }
    const path = operandPath(field.text);
    if (path === undefined) continue;
    const d = checkField({ ...field, text: path }, "touch", inv.cwd, c, `the argument "${field.text}"`);
    if (!d.allow) return d;
  }
  return ALLOW;
}

const URL_WORD = /^[a-z][a-z0-9+.-]*:\/\//i;
const DEFAULT_PORTS = new Map([
  ["http:", "80"],
  ["https:", "443"],
  ["ws:", "80"],
  ["wss:", "443"],
  ["ftp:", "21"],
]);

const deny = (rule: string, reason: string, need?: Need): Decision =>
  need ? { allow: false, rule, reason, need } : { allow: false, rule, reason };

/** The file an operand may name: the word, the value of `--opt=value` or `name=value`, the file of `@file`. */
function operandPath(word: string): string | undefined {
  if (word === "" || word === "-" || word.length > 4096 || word.includes("\n")) return undefined;
  const eq = word.indexOf("=");
  let value = word;
  if (word.startsWith("-")) {
    if (eq === -1) return undefined;
    value = word.slice(eq + 1);
  } else if (eq > 0 && !word.startsWith("/") && !word.startsWith(".")) value = word.slice(eq + 1);
  if (value.startsWith("@")) value = value.slice(1);
  if (value === "" || URL_WORD.test(value)) return undefined;
  return value;
}

function checkUrlWord(word: string, c: CommandCheck): Decision {
  let url: URL;
  try {
    url = new URL(word);
  } catch {
    // Not a URL: the word names no destination, and its files are judged elsewhere.
    return ALLOW;
  }
  if (!url.hostname) return ALLOW;
  const port = url.port || DEFAULT_PORTS.get(url.protocol) || "";
  if (destinationAllowed(url.hostname, port, c.tool.network)) return ALLOW;
  return deny("l1.network", `${url.hostname}:${port} is not a destination ${c.tool.name} may reach`, {
    capability: "network",
    value: destinationOf(url.hostname, port),
  });
}

/** One field that may name a file: known, a name in a known directory, a number, or unknown. */
function checkField(
  field: Field,
  access: Access,
  cwd: string | undefined,
  c: CommandCheck,
  what: string,
): Decision {
  const unknown = field.unknown;
  if (unknown?.kind === "stream") return ALLOW;
  if (unknown?.kind === "text") {
    if (c.confined.files) return ALLOW;
    return deny(
      "l1.command.dynamic",
      `${what} comes from ${unknown.origin}, which only the shell knows at run time, so the file it may name cannot be checked`,
    );
  }
  const text = unknown?.kind === "within" ? `${unknown.dir}/${UNKNOWN_MARK}` : field.text;
  if (cwd === undefined && !text.startsWith("/")) {
    if (c.confined.files) return ALLOW;
    return deny(
      "l1.command.dynamic",
      `${what} is relative to a directory a cd went to at run time, so the file it names cannot be checked`,
    );
  }
  const base = cwd ?? c.vars.cwd;
  if (!field.pattern && standardDevice(posix.resolve(base, text), access)) return ALLOW;
  const paths = field.pattern ? [text, ...(globFiles(text, base) ?? [])] : [text];
  for (const path of paths) {
    const d = checkPath(path, access, base, c);
    if (!d.allow) return d;
  }
  return ALLOW;
}

/** The process's own streams and the kernel's sources of nothing, zeros and randomness: no file of the host. */
const STREAMS = new Set([
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/fd/0",
  "/dev/fd/1",
  "/dev/fd/2",
  "/dev/null",
]);
const SOURCES = new Set(["/dev/zero", "/dev/random", "/dev/urandom"]);

function standardDevice(path: string, access: Access): boolean {
  return STREAMS.has(path) || (access !== "write" && SOURCES.has(path));
}

function checkPath(path: string, access: Access, cwd: string, c: CommandCheck): Decision {
  const { canonical, physical, loop } = c.resolvePath(path, cwd);
  if (loop) return deny("l1.path.symlink-loop", `${shown({ text: path })}: symlink loop`);
  for (const p of canonical === physical ? [canonical] : [canonical, physical]) {
    const readable = c.tool.read.match(p) || c.tool.write.match(p);
    const ok = access === "write" ? c.tool.write.match(p) : readable;
    if (!ok) {
      const verb = access === "touch" ? "touch" : access;
      const capability = access === "write" ? "write" : "read";
      return deny(
        `l1.path.${capability}`,
        `${shown({ text: p })} is outside what ${c.tool.name} may ${verb}`,
        {
          capability,
          value: p,
        },
      );
    }
  }
  return ALLOW;
}

/** A policy's exec list by program: the subcommands each entry allows (`undefined`: any). */
const execIndexes = new WeakMap<readonly string[], Map<string, (string | undefined)[]>>();

function execIndex(allowed: readonly string[]): Map<string, (string | undefined)[]> {
  let index = execIndexes.get(allowed);
  if (!index) {
    index = new Map();
    for (const entry of allowed) {
      const [name = "", sub] = entry.split(" ");
      index.set(name, [...(index.get(name) ?? []), sub]);
    }
    execIndexes.set(allowed, index);
  }
  return index;
}

/** Whether the policy lists the program (by name, by absolute path, or with its git subcommand). */
function executableAllowed(argv: readonly Field[], allowed: readonly string[], cwd: string): boolean {
  const program = (argv[0] as Field).text;
  const git = basename(program) === "git";
  const sub = git ? gitSubcommand(argv.slice(1)).name : argv[1]?.text;
  const network = git && sub !== undefined && gitNetwork(sub, argv);
  const permits = (subs: readonly (string | undefined)[] | undefined) =>
    subs?.some((entrySub) => (entrySub === undefined ? !network : entrySub === sub)) ?? false;
  if (!program.includes("/")) return permits(execIndex(allowed).get(program));
  // An explicit path must match an absolute entry exactly: `./date` is not the `date` on PATH.
  const canonical = canonicalPath(program, cwd).canonical;
  for (const [name, subs] of execIndex(allowed)) {
    if (name.startsWith("/") && canonicalPath(name, "/").canonical === canonical && permits(subs))
      return true;
  }
  return false;
}

function gitNetwork(sub: string, argv: readonly Field[]): boolean {
  if (GIT_NETWORK.has(sub)) return true;
  const verbs = Object.hasOwn(GIT_NETWORK_VERBS, sub) ? GIT_NETWORK_VERBS[sub] : undefined;
  const at = argv.findIndex((f) => f.text === sub);
  if (verbs && argv.slice(at + 1).some((f) => verbs.has(f.text))) return true;
  return sub === "archive" && argv.some((f) => f.text.startsWith("--remote"));
}

/** git's own files: `config --global` writes HOME's, `-C`/`--git-dir`/`--work-tree` name directories. */
function checkGit(argv: Field[], inv: Invocation, c: CommandCheck): Decision {
  const args = argv.slice(1);
  const { index, name } = gitSubcommand(args);
  if (name === undefined && index < args.length && !c.confined.exec) {
    return deny(
      "l1.command.dynamic",
      `the git subcommand comes from ${originOf(args[index] as Field)}, which only the shell knows at run time`,
    );
  }
  // An alias given on the line (`-c alias.x=...`) is read where the line runs it, as a command.
  const givenAlias = (n: string) =>
    args
      .slice(0, index)
      .some(
        (f, i) => args[i - 1]?.text === "-c" && f.text.toLowerCase().startsWith(`alias.${n.toLowerCase()}=`),
      );
  if (name !== undefined && !GIT_COMMANDS.has(name) && !givenAlias(name) && !c.confined.exec) {
    return deny(
      "l1.command.dynamic",
      `git ${name} is no git command: an alias or a git-${name} program decides what it runs, which only the run shows`,
    );
  }
  for (let i = 0; i < index; i++) {
    const word = (args[i] as Field).text;
    const value = ["-C", "--git-dir", "--work-tree"].includes(word) ? args[i + 1] : undefined;
    if (value) {
      const d = checkField(value, "touch", inv.cwd, c, `the directory of git ${word}`);
      if (!d.allow) return d;
    }
  }
  if (name === "config") return checkGitConfig(args.slice(index + 1), inv, c);
  return ALLOW;
}

const CONFIG_READ =
  /^(?:--get(?:-all|-regexp|-urlmatch|-color|colorbool)?|--list|-l|get|list|--show-origin|--show-scope|--name-only)$/;

function checkGitConfig(args: Field[], inv: Invocation, c: CommandCheck): Decision {
  if (args.some((f) => CONFIG_READ.test(f.text))) return ALLOW;
  const operands = args.filter(
    (f, i) => !f.text.startsWith("-") && !GIT_CONFIG_VALUED.has(args[i - 1]?.text ?? ""),
  );
  const verb = ["set", "add", "replace-all"].includes(operands[0]?.text ?? "");
  const [key, value] = verb ? [operands[1], operands[2]] : [operands[0], operands[1]];
  const kind = key && !key.unknown ? gitKeyKind(key.text) : undefined;
  const unsets = args.some((f) => /^(?:--unset(?:-all)?|unset|--remove-section)$/.test(f.text));
  // A plain alias runs the git subcommand it names: one this check would not allow by its name
  // (`alias.p push`) is as much code as a shell alias.
  const target = value && !value.unknown ? value.text.trim().split(/\s+/)[0] : undefined;
  const code =
    kind === "command" ||
    kind === "elsewhere" ||
    (kind === "alias" &&
      (value?.unknown ||
        value?.text.startsWith("!") ||
        !target ||
        !GIT_COMMANDS.has(target) ||
        GIT_NETWORK.has(target)));
  if (key && value && !unsets && !c.confined.exec && (key.unknown || code)) {
    return deny(
      "l1.command.dynamic",
      `the command sets git's ${shown(key)}, a command or code git runs later, where no check sees it`,
    );
  }
  const home = c.vars.home;
  for (let i = 0; i < args.length; i++) {
    const word = (args[i] as Field).text;
    let file: Field | undefined;
    if (word === "--global" && home) file = { text: `${home}/.gitconfig` };
    else if (word === "--system") file = { text: "/etc/gitconfig" };
    else if (word === "--file" || word === "-f") file = args[i + 1];
    else if (word.startsWith("--file=")) file = { ...(args[i] as Field), text: word.slice(7) };
    if (file) {
      const d = checkField(file, "write", inv.cwd, c, "the git configuration it writes");
      if (!d.allow) return d;
    }
  }
  return ALLOW;
}
