/**
 * Programs that run other programs or shell text: shells (`sh -c`, a script on stdin), wrappers
 * that exec their operands (`env`, `timeout`, `nice`, `nohup`, `xargs`, `find -exec`, `sudo`, ...),
 * and options that hand a program a command (`tar --to-command`, `sort --compress-program`,
 * `flock -c`, `watch`, git's command-running options and settings).
 */
import { posix } from "node:path";
import { gitRuns } from "./git.js";
import type { Dialect, EnvSetting, Field, Runs, ShellContext, Stdin, Unknown } from "./model.js";
import { UNKNOWN_MARK } from "./model.js";
import { type OptionSyntax, optionUses, readOptions, runsThroughOptions } from "./options.js";
import { PROGRAM_FACTS } from "./programOptions.js";
import { positionalOf } from "./scope.js";

const SHELLS: Record<string, Dialect> = {
  sh: "posix",
  dash: "posix",
  ash: "posix",
  ksh: "posix",
  mksh: "posix",
  bash: "bash",
  zsh: "bash",
};

interface Wrapper extends OptionSyntax {
  /** Operands of the wrapper's own before the command (`timeout`'s duration). */
  positional?: number;
  /** `NAME=value` words before the command (`env`). */
  assignments?: boolean;
  /** With no command it runs this (`chroot` runs a shell). */
  fallback?: string;
}

/**
 * Programs that exec their operands, with the options that take a value (so that the command is
 * found where the program finds it: `timeout -vs KILL 1 cmd`, `env -iS'cmd'`, `flock -w 5 lock cmd`).
 */
const WRAPPERS: Record<string, Wrapper> = {
  env: {
    short: "uCSa",
    long: ["unset", "chdir", "split-string", "argv0"],
    optionalLong: ["block-signal", "default-signal", "ignore-signal"],
    flags: ["ignore-environment", "null", "debug", "list-signal-handling"],
    assignments: true,
  },
  nice: { short: "n", long: ["adjustment"] },
  nohup: {},
  timeout: { short: "sk", long: ["signal", "kill-after"], positional: 1 },
  stdbuf: { short: "ioe", long: ["input", "output", "error"] },
  setsid: {},
  ionice: { short: "cnpPu", long: ["class", "classdata", "pid", "pgid", "uid"] },
  taskset: { positional: 1 },
  time: { short: "fo", long: ["format", "output"] },
  unbuffer: {},
  sudo: {
    short: "ugCDprtUR",
    optional: "h",
    long: ["user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "chroot"],
  },
  doas: { short: "uC" },
  chroot: { long: ["userspec", "groups"], positional: 1, fallback: "sh" },
  runuser: { short: "ugG", long: ["user", "group", "supp-group"] },
  strace: { short: "abeIoOpPsuEXU", long: ["output", "trace", "signal", "status", "attach", "user"] },
  ltrace: { short: "aeEnopsuxlF", long: ["output"] },
  nsenter: {
    short: "tSG",
    optional: "muinpUCTrw",
    long: ["target", "setuid", "setgid"],
    optionalLong: ["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "root", "wd"],
  },
  unshare: {
    short: "SGRw",
    optional: "muinpUCT",
    long: [
      "setuid",
      "setgid",
      "root",
      "wd",
      "propagation",
      "setgroups",
      "map-user",
      "map-group",
      "map-users",
      "map-groups",
      "monotonic",
      "boottime",
    ],
    optionalLong: ["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "kill-child", "mount-proc"],
  },
  busybox: {},
  chronic: {},
  fakeroot: { short: "lfsi", long: ["lib", "faked", "save-file", "load-file"] },
  flock: { short: "wE", long: ["timeout", "wait", "conflict-exit-code"], positional: 1 },
  // From GTFOBins' entries of programs that run their operands.
  "aa-exec": { short: "pn", long: ["profile", "namespace"] },
  chrt: { short: "TPD", long: ["sched-runtime", "sched-period", "sched-deadline"], positional: 1 },
  choom: { short: "np", long: ["adjust", "pid"] },
  cpulimit: { short: "lpe", long: ["limit", "pid", "exe"] },
  logsave: { positional: 1 },
  multitime: { short: "nsqi" },
  setarch: { long: ["uname-2.6"] },
  linux32: {},
  linux64: {},
  sshpass: { short: "fdpPe" },
  "ssh-agent": { short: "aEOPt" },
  torsocks: { short: "upaP", long: ["user", "pass", "address", "port"] },
  torify: {},
  valgrind: {},
  catchsegv: {},
  eatmydata: {},
  "dbus-run-session": {},
  firejail: {},
  cgexec: { short: "g" },
  setlock: { positional: 1 },
  softlimit: { short: "mdsalfoptrc" },
  rlwrap: { short: "bCDfFHlOpPqsStwz", optional: "a" },
};

function unknownText(origin: string, producers?: readonly string[]): Field {
  const unknown: Unknown = { kind: "text", origin, ...(producers?.length ? { producers } : {}) };
  return { text: UNKNOWN_MARK, unknown };
}

function baseName(field: Field): string | undefined {
  if (field.unknown) return undefined;
  return posix.basename(field.text);
}

/** Everything `argv` runs in its turn. */
export function innerRuns(argv: Field[], stdin: Stdin, cwd: string | undefined, ctx: ShellContext): Runs {
  const runs: Runs = { argvs: [], scripts: [] };
  const name = baseName(argv[0] as Field);
  if (!name) return runs;
  const args = argv.slice(1);
  if (Object.hasOwn(SHELLS, name))
    shellRuns(name, SHELLS[name] as Dialect, argv[0] as Field, args, stdin, runs);
  else if (name === "xargs") xargsRuns(args, stdin, runs);
  else if (name === "find") findRuns(args, cwd, runs);
  else if (name === "git") gitRuns(args, runs);
  else if (name === "watch") watchRuns(args, runs);
  else if (Object.hasOwn(WRAPPERS, name)) wrapperRuns(name, WRAPPERS[name] as Wrapper, args, cwd, runs);
  optionRuns(name, args, stdin, runs);
  void ctx;
  return runs;
}

/** `sh -c 'script' arg0 args...`, `bash script.sh`, or a script read from standard input. */
function shellRuns(
  name: string,
  dialect: Dialect,
  program: Field,
  args: Field[],
  stdin: Stdin,
  runs: Runs,
): void {
  let command = false;
  let fromStdin = false;
  let i = 0;
  for (; i < args.length; i++) {
    const word = (args[i] as Field).text;
    if (word === "--" || word === "-") {
      i++;
      break;
    }
    if (!/^[-+]/.test(word) || (args[i] as Field).unknown) break;
    if (["-o", "+o", "-O", "+O", "--rcfile", "--init-file"].includes(word)) i++;
    else if (/^-[A-Za-z]*c[A-Za-z]*$/.test(word)) command = true;
    else if (/^-[A-Za-z]*s[A-Za-z]*$/.test(word)) fromStdin = true;
  }
  const operands = args.slice(i);
  const base = { dialect, what: `the script given to ${name}` };
  if (command) {
    const script = operands[0];
    if (!script || script.unknown) {
      runs.scripts.push({
        ...base,
        unknownWhat: `runs ${name} -c with a script known only at run time`,
        producers: script?.unknown?.producers,
      });
      return;
    }
    const arg0 = operands[1] ?? program;
    runs.scripts.push({
      ...base,
      texts: [script.text],
      positional: positionalOf(operands.slice(2)),
      arg0,
      stdin,
    });
    return;
  }
  if (operands.length > 0 && !fromStdin) {
    const file = operands[0] as Field;
    const shown = file.unknown ? "named only at run time" : file.text;
    runs.scripts.push({
      ...base,
      unknownWhat: `runs the ${name} script ${shown}; its commands are not part of the call`,
    });
    return;
  }
  // `sh -s a b`: the script comes from standard input, the operands are its $1, $2...
  stdinScript(name, base, stdin, runs, operands, program);
}

function stdinScript(
  name: string,
  base: { dialect: Dialect; what: string },
  stdin: Stdin,
  runs: Runs,
  positional: Field[],
  arg0: Field,
): void {
  if (stdin.kind === "text" && stdin.texts) {
    runs.scripts.push({ ...base, texts: stdin.texts, stdin: { kind: "inherit" }, positional, arg0 });
  } else if (stdin.kind === "pipe" || stdin.kind === "text") {
    const producers = stdin.kind === "pipe" ? stdin.producers : stdin.unknown?.producers;
    runs.scripts.push({
      ...base,
      unknownWhat: `runs ${name} on a script it reads from its input, known only at run time`,
      producers,
    });
  } else if (stdin.kind === "file") {
    runs.scripts.push({
      ...base,
      unknownWhat: `runs ${name} on a script read from a file; its commands are not part of the call`,
    });
  }
}

const XARGS: OptionSyntax = {
  ...(PROGRAM_FACTS.xargs as OptionSyntax),
  flags: ["null", "no-run-if-empty", "open-tty", "interactive", "verbose", "exit", "show-limits"],
};

/**
 * `xargs [options] command args`: the command gets words read from xargs's input, none or more
 * (without -I it runs once even on no input, unless -r). Its standard input is /dev/null, unless
 * the words come from a file (-a) or it reopens the terminal (-o).
 */
function xargsRuns(args: Field[], stdin: Stdin, runs: Runs): void {
  let replace: Field | undefined;
  let own: Stdin = { kind: "text", texts: [""] };
  const { operands } = readOptions(XARGS, args, (option, value) => {
    if (option === "-I") replace = value ?? { text: "{}" };
    else if (option === "-i" || option === "--replace") replace = value ?? { text: "{}" };
    else if (option === "-a" || option === "--arg-file") own = stdin;
    else if (option === "-o" || option === "--open-tty") own = { kind: "inherit" };
  });
  const producers = stdin.kind === "pipe" ? stdin.producers : undefined;
  const command = args.slice(operands);
  const inner = command.length ? command : [{ text: "echo" }];
  // Lines of a find that prints only paths are files within its start directories.
  const inputs =
    stdin.kind === "pipe" && stdin.paths
      ? stdin.paths.map(
          (dir): Field => ({
            text: UNKNOWN_MARK,
            unknown: { kind: "within", dir, origin: `a file find found under ${dir}` },
          }),
        )
      : [unknownText("the words xargs reads from its input", producers)];
  const mark = replace as Field | undefined;
  for (const input of inputs) {
    const argv = mark
      ? inner.map((f) =>
          mark.unknown
            ? unknownText("a word xargs builds", producers)
            : f.text === mark.text
              ? { ...input }
              : f.text.includes(mark.text)
                ? unknownText("a word xargs builds", producers)
                : f,
        )
      : [...inner, input];
    runs.argvs.push({ argv, via: "xargs", stdin: own });
  }
  if (!mark) runs.argvs.push({ argv: [...inner], via: "xargs", stdin: own });
}

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** `find dirs... -exec cmd {} \;`: `{}` is a file found under one of the start directories. */
function findRuns(args: Field[], cwd: string | undefined, runs: Runs): void {
  const starts: Field[] = [];
  for (const f of args) {
    if (f.text.startsWith("-") || f.text === "(" || f.text === "!" || f.text === ")") break;
    starts.push(f);
  }
  const dirs = starts.length ? starts : [{ text: "." }];
  for (let i = 0; i < args.length; i++) {
    const word = (args[i] as Field).text;
    if (!FIND_EXEC.has(word)) continue;
    let end = i + 1;
    while (end < args.length && ![";", "+"].includes((args[end] as Field).text)) end++;
    const command = args.slice(i + 1, end);
    const inDir = word.endsWith("dir");
    for (const dir of dirs) {
      const found = foundFile(dir, cwd);
      const argv = command.map((f) =>
        f.text.includes("{}")
          ? f.text === "{}"
            ? found
            : { ...found, unknown: { kind: "text" as const, origin: "a file find found" } }
          : f,
      );
      runs.argvs.push({ argv, via: "find", ...(inDir ? { cwd: null } : {}) });
    }
    i = end;
  }
}

function foundFile(dir: Field, cwd: string | undefined): Field {
  if (dir.unknown || dir.pattern || cwd === undefined) return unknownText("a file find found");
  const abs = posix.resolve(cwd, dir.text);
  return {
    text: UNKNOWN_MARK,
    unknown: { kind: "within", dir: abs, origin: `a file find found under ${dir.text}` },
  };
}

const stopping = new Map<string, OptionSyntax>();

/** A wrapper's options end at its first operand (`nice -n 5 cmd -n`): getopt's `+`. */
function wrapperSyntax(name: string, wrapper: Wrapper): OptionSyntax {
  let syntax = stopping.get(name);
  if (!syntax) {
    syntax = { ...wrapper, stopAtOperand: true };
    stopping.set(name, syntax);
  }
  return syntax;
}

function wrapperRuns(
  name: string,
  wrapper: Wrapper,
  args: Field[],
  cwd: string | undefined,
  runs: Runs,
): void {
  let positional = wrapper.positional ?? 0;
  // `setarch [arch] [options] program`: the architecture is optional.
  if (name === "setarch" && args[0] && !args[0].unknown && !args[0].text.startsWith("-")) positional = 1;
  let chdir: string | null | undefined;
  let split: { value: Field | undefined; at: number } | undefined;
  const env: EnvSetting[] = [];
  const syntax = wrapperSyntax(name, wrapper);
  let i = 0;
  let options = true;
  while (i < args.length) {
    if (options) {
      const read = readOptions(
        syntax,
        args,
        (option, value, _valued, at) => {
          if (name !== "env") return;
          if ((option === "-S" || option === "--split-string") && !split) split = { value, at };
          if (option === "-C" || option === "--chdir")
            chdir = value?.unknown || cwd === undefined ? null : posix.resolve(cwd, value?.text ?? ".");
        },
        i,
      );
      if (read.operands > i && args[read.operands - 1]?.text === "--" && !args[read.operands - 1]?.unknown)
        options = false;
      i = read.operands;
    }
    if (split) {
      splitString(split.value, args.slice(split.at + 1), runs);
      return;
    }
    const f = args[i];
    if (!f) break;
    if (name === "env" && options && f.text === "-" && !f.unknown) {
      i++;
      continue;
    }
    if (wrapper.assignments && !f.unknown && ASSIGNMENT.test(f.text)) {
      env.push(assignment(f));
      i++;
      continue;
    }
    if (positional > 0 && !f.unknown) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  const command = args.slice(i);
  if (name === "busybox" && command.length === 0) return;
  // `flock [options] lock -c 'command'`: the lock's command is a shell's.
  if (name === "flock" && command[0] && ["-c", "--command"].includes(command[0].text)) {
    commandScript(runs, "flock -c", command[1]);
    return;
  }
  const argv = command.length ? command : wrapper.fallback ? [{ text: wrapper.fallback }] : [];
  if (argv.length)
    runs.argvs.push({
      argv,
      via: name,
      ...(chdir !== undefined ? { cwd: chdir } : {}),
      ...(env.length ? { env } : {}),
    });
}

const ASSIGNMENT = /^[A-Za-z_]\w*=/;

function assignment(f: Field): EnvSetting {
  const eq = f.text.indexOf("=");
  return { name: f.text.slice(0, eq), value: { ...f, text: f.text.slice(eq + 1) } };
}

/** env's options that only clear or unset variables (`-u` takes a name). */
const ENV_PLAIN_FLAGS = new Set(["-i", "--ignore-environment", "-"]);
const ENV_UNSET = new Set(["-u", "--unset"]);

/**
 * Where the command of `env [-i] [-u NAME] [NAME=value]... COMMAND [ARG]...` starts: env used as
 * the shell's own `NAME=value COMMAND` prefix, which runs COMMAND and prints nothing. Undefined
 * for any other use of env (no command: it prints the environment; `-C`, `-S` and the rest), or
 * when a word before the command is known only at run time.
 */
export function envPrefixCommand(argv: readonly Field[]): number | undefined {
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i] as Field;
    if (f.unknown) return undefined;
    if (f.text === "--") return i + 1 < argv.length && !argv[i + 1]?.unknown ? i + 1 : undefined;
    if (ENV_PLAIN_FLAGS.has(f.text) || f.text.startsWith("--unset=") || ASSIGNMENT.test(f.text)) continue;
    if (ENV_UNSET.has(f.text)) {
      i++;
      continue;
    }
    return f.text.startsWith("-") ? undefined : i;
  }
  return undefined;
}

/** `env -S 'prog args'`: the string is split into words, the words after it added. */
function splitString(value: Field | undefined, rest: Field[], runs: Runs): void {
  if (!value || value.unknown || rest.some((f) => f.unknown)) {
    runs.scripts.push({
      dialect: "posix",
      what: "the string given to env -S",
      unknownWhat: "runs env -S with a command known only at run time",
    });
    return;
  }
  runs.scripts.push({
    dialect: "posix",
    what: "the string given to env -S",
    unknownWhat: "",
    texts: [[value.text, ...rest.map((f) => quote(f.text))].join(" ")],
  });
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** A command line an option hands a program, read as `sh -c` would run it. */
function commandScript(
  runs: Runs,
  label: string,
  value: Field | undefined,
  more: { program?: boolean; stdin?: Stdin; appends?: readonly string[] } = {},
): void {
  const what = `the command given to ${label}`;
  if (!value || value.unknown) {
    runs.scripts.push({
      dialect: "posix",
      what,
      unknownWhat: `gives ${label} a command known only at run time`,
      ...(value?.unknown?.producers ? { producers: value.unknown.producers } : {}),
    });
    return;
  }
  // Words the program adds: literal ones quoted, `<name>` ones known only at run time ("$1"...).
  const positional: Field[] = [];
  const added = (more.appends ?? []).map((word) => {
    if (!word.startsWith("<")) return quote(word);
    positional.push(unknownText(`the ${word.slice(1, -1)} ${label} adds`));
    return `"$${positional.length}"`;
  });
  const head = more.program ? quote(value.text) : value.text;
  runs.scripts.push({
    dialect: "posix",
    what,
    unknownWhat: "",
    texts: [[head, ...added].join(" ")],
    ...(positional.length ? { positional } : {}),
    ...(more.stdin ? { stdin: more.stdin } : {}),
  });
}

/** What the table says a program's options run: commands, programs, script files, code. */
function optionRuns(name: string, args: Field[], stdin: Stdin, runs: Runs): void {
  const facts = Object.hasOwn(PROGRAM_FACTS, name) ? PROGRAM_FACTS[name] : undefined;
  if (!facts) return;
  const { uses, unknownOption } = optionUses(name, args);
  const data: Stdin = { kind: "pipe", producers: [name] };
  for (const use of uses) {
    const label = `${name} ${use.option}`;
    const value = use.value;
    const shownValue = value ? (value.unknown ? "a file named only at run time" : value.text) : "";
    if (use.does === "command" || use.does === "program") {
      if (!value) {
        runs.scripts.push({
          dialect: "posix",
          what: label,
          unknownWhat: `runs a program of its own choosing (${label}), which is not part of the call`,
        });
        continue;
      }
      commandScript(runs, label, value, {
        program: use.does === "program",
        ...(use.fact.data ? { stdin: data } : {}),
        ...(use.fact.appends ? { appends: use.fact.appends } : {}),
      });
    } else if (use.does === "script") {
      runs.scripts.push({
        dialect: "posix",
        what: label,
        unknownWhat: `runs the code of ${shownValue} (${label}), which is not part of the call`,
      });
    } else if (use.does === "code") {
      runs.scripts.push({
        dialect: "posix",
        what: label,
        unknownWhat: `hands ${name} code of its own (${label}), which can run commands`,
      });
    } else if (use.does === "anywhere") {
      runs.scripts.push({
        dialect: "posix",
        what: label,
        unknownWhat: `writes the files its input names, wherever they are (${label})`,
        escapes: ["files"],
      });
    }
  }
  if (unknownOption && runsThroughOptions(name)) {
    runs.scripts.push({
      dialect: "posix",
      what: name,
      unknownWhat: `gives ${name} an option known only at run time, which may make it run a command`,
    });
  }
  const input = facts.input;
  if (input && (!facts.inputWith || uses.some((u) => facts.inputWith?.includes(u.option)))) {
    const plain = stdin.kind === "text" && stdin.texts?.every((t) => !input.runs.test(t));
    if (!plain)
      runs.scripts.push({
        dialect: "posix",
        what: name,
        unknownWhat: `reads ${input.what} from its input`,
      });
  }
}

const WATCH: OptionSyntax = {
  ...(PROGRAM_FACTS.watch as OptionSyntax),
  flags: [
    "beep",
    "color",
    "no-color",
    "errexit",
    "chgexit",
    "exec",
    "precise",
    "no-rerun",
    "no-title",
    "no-wrap",
  ],
};

/** `watch [options] command...`: the words are joined and run with `sh -c`; with -x, run as they are. */
function watchRuns(args: Field[], runs: Runs): void {
  let exec = false;
  const { operands } = readOptions(WATCH, args, (option) => {
    if (option === "-x" || option === "--exec") exec = true;
  });
  const words = args.slice(operands);
  if (words.length === 0) return;
  if (exec) {
    runs.argvs.push({ argv: words, via: "watch" });
    return;
  }
  if (words.some((f) => f.unknown)) {
    runs.scripts.push({
      dialect: "posix",
      what: "the command given to watch",
      unknownWhat: "runs watch with a command known only at run time",
    });
    return;
  }
  runs.scripts.push({
    dialect: "posix",
    what: "the command given to watch",
    unknownWhat: "",
    texts: [words.map((f) => f.text).join(" ")],
  });
}
