/**
 * Programs that run other programs or shell text: shells (`sh -c`, a script on stdin), wrappers
 * that exec their operands (`env`, `timeout`, `nice`, `nohup`, `xargs`, `find -exec`, `sudo`, ...),
 * and options that hand a program a command (`tar --to-command`, `sort --compress-program`,
 * `flock -c`, `watch`, git's command-running options and settings).
 */
import { posix } from "node:path";
import { gitRuns } from "./git.js";
import type { Dialect, EnvSetting, Field, ShellContext, Stdin, Unknown } from "./model.js";
import { UNKNOWN_MARK } from "./model.js";

export interface InnerRun {
  argv: Field[];
  via: string;
  /** Variables the wrapper sets for it (`env NAME=value cmd`), as the shell's own prefix would. */
  env?: EnvSetting[];
  /** The directory it runs in: undefined is the wrapper's, null is one known only at run time. */
  cwd?: string | null;
  stdin?: Stdin;
}

export interface InnerScript {
  /** The script's text, each way it may be; undefined when it is known only at run time. */
  texts?: string[];
  dialect: Dialect;
  positional?: Field[];
  stdin?: Stdin;
  cwd?: string;
  /** Names the script in a parse error: "the script given to bash -c". */
  what: string;
  /** Finishes "the command ..." when the text is not known. */
  unknownWhat?: string;
  producers?: readonly string[];
}

export interface Runs {
  argvs: InnerRun[];
  scripts: InnerScript[];
}

const SHELLS: Record<string, Dialect> = {
  sh: "posix",
  dash: "posix",
  ash: "posix",
  ksh: "posix",
  mksh: "posix",
  bash: "bash",
  zsh: "bash",
};

interface Wrapper {
  /** Options whose value is the next word (or the rest of the word). */
  valued?: string[];
  /** Operands of the wrapper's own before the command (`timeout`'s duration). */
  positional?: number;
  /** `NAME=value` words before the command (`env`). */
  assignments?: boolean;
  /** With no command it runs this (`chroot` runs a shell). */
  fallback?: string;
}

const WRAPPERS: Record<string, Wrapper> = {
  env: { valued: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"], assignments: true },
  nice: { valued: ["-n", "--adjustment"] },
  nohup: {},
  timeout: { valued: ["-s", "--signal", "-k", "--kill-after"], positional: 1 },
  stdbuf: { valued: ["-i", "-o", "-e", "--input", "--output", "--error"] },
  setsid: {},
  ionice: { valued: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"] },
  taskset: { positional: 1, valued: ["-c"] },
  time: { valued: ["-o", "-f", "--output", "--format"] },
  unbuffer: {},
  sudo: { valued: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R", "--user", "--group"] },
  doas: { valued: ["-u", "-C"] },
  chroot: { positional: 1, fallback: "sh" },
  runuser: { valued: ["-u", "-g", "-G", "--user", "--group"] },
  strace: { valued: ["-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-I", "-b", "-X"] },
  ltrace: { valued: ["-o", "-e", "-p", "-s", "-u", "-n", "-a", "-l", "-x"] },
  nsenter: { valued: ["-t", "--target"] },
  unshare: {},
  busybox: {},
  chronic: {},
  fakeroot: {},
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
  if (Object.hasOwn(SHELLS, name)) shellRuns(name, SHELLS[name] as Dialect, args, stdin, runs);
  else if (name === "xargs") xargsRuns(args, stdin, runs);
  else if (name === "find") findRuns(args, cwd, runs);
  else if (name === "git") gitRuns(args, runs);
  else if (Object.hasOwn(WRAPPERS, name)) wrapperRuns(name, WRAPPERS[name] as Wrapper, args, cwd, runs);
  else optionRuns(name, args, runs);
  void ctx;
  return runs;
}

/** `sh -c 'script' arg0 args...`, `bash script.sh`, or a script read from standard input. */
function shellRuns(name: string, dialect: Dialect, args: Field[], stdin: Stdin, runs: Runs): void {
  let command = false;
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
    runs.scripts.push({ ...base, texts: [script.text], positional: operands.slice(2), stdin });
    return;
  }
  if (operands.length > 0) {
    const file = operands[0] as Field;
    const shown = file.unknown ? "named only at run time" : file.text;
    runs.scripts.push({
      ...base,
      unknownWhat: `runs the ${name} script ${shown}; its commands are not part of the call`,
    });
    return;
  }
  stdinScript(name, base, stdin, runs);
}

function stdinScript(name: string, base: { dialect: Dialect; what: string }, stdin: Stdin, runs: Runs): void {
  if (stdin.kind === "text" && stdin.texts) {
    runs.scripts.push({ ...base, texts: stdin.texts, stdin: { kind: "inherit" } });
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

const XARGS_VALUED = [
  "-a",
  "--arg-file",
  "-d",
  "--delimiter",
  "-E",
  "-e",
  "-I",
  "-i",
  "-L",
  "-l",
  "-n",
  "--max-args",
  "-P",
  "--max-procs",
  "-s",
  "--max-chars",
  "--process-slot-var",
];

/** `xargs [options] command args`: the command gets words read from xargs's input. */
function xargsRuns(args: Field[], stdin: Stdin, runs: Runs): void {
  let replace: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const word = (args[i] as Field).text;
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const option = word.startsWith("--") ? (word.split("=")[0] as string) : word.slice(0, 2);
    if (option === "-I" || option === "-i" || option === "--replace")
      replace = word.length > 2 && !word.startsWith("--") ? word.slice(2) : (args[i + 1]?.text ?? "{}");
    if (XARGS_VALUED.includes(option) && word === option && !word.startsWith("--")) i++;
  }
  const producers = stdin.kind === "pipe" ? stdin.producers : undefined;
  const command = args.slice(i);
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
  for (const input of inputs) {
    const argv = replace
      ? inner.map((f) =>
          f.text === replace
            ? { ...input }
            : f.text.includes(replace as string)
              ? unknownText("a word xargs builds", producers)
              : f,
        )
      : [...inner, input];
    runs.argvs.push({ argv, via: "xargs" });
  }
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

function wrapperRuns(
  name: string,
  wrapper: Wrapper,
  args: Field[],
  cwd: string | undefined,
  runs: Runs,
): void {
  let positional = wrapper.positional ?? 0;
  let chdir: string | null | undefined;
  const env: EnvSetting[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const f = args[i] as Field;
    if (f.text === "--") {
      i++;
      break;
    }
    if (f.text.startsWith("-") && f.text.length > 1 && !f.unknown) {
      if (name === "env" && (f.text === "-S" || f.text.startsWith("--split-string"))) {
        splitString(args.slice(i), runs);
        return;
      }
      if (name === "env" && (f.text === "-C" || f.text === "--chdir"))
        chdir =
          args[i + 1]?.unknown || cwd === undefined ? null : posix.resolve(cwd, args[i + 1]?.text ?? ".");
      if (wrapper.valued?.includes(f.text)) i++;
      continue;
    }
    if (wrapper.assignments && ASSIGNMENT.test(f.text)) {
      env.push(assignment(f));
      continue;
    }
    if (positional > 0) {
      positional--;
      continue;
    }
    break;
  }
  const command = args.slice(i);
  if (name === "busybox" && command.length === 0) return;
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

/** `env -S 'prog args'`: the string is split into words. */
function splitString(args: Field[], runs: Runs): void {
  const value = args[0]?.text.startsWith("--split-string=")
    ? { ...args[0], text: args[0].text.slice(15) }
    : args[1];
  if (!value || value.unknown) {
    runs.scripts.push({
      dialect: "posix",
      what: "the string given to env -S",
      unknownWhat: "runs env -S with a command known only at run time",
    });
    return;
  }
  const rest = args.slice(args[0]?.text.startsWith("--") ? 1 : 2).map((f) => f.text);
  runs.scripts.push({
    dialect: "posix",
    what: "the string given to env -S",
    unknownWhat: "",
    texts: [[value.text, ...rest.map(quote)].join(" ")],
  });
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** Options that hand a program a command: each is read as the shell would run it. */
const COMMAND_OPTIONS: Record<string, { script?: string[]; program?: string[]; argv?: string[] }> = {
  tar: {
    script: ["--to-command", "--info-script", "--new-volume-script", "-F"],
    program: ["--use-compress-program", "-I", "--rsh-command", "--rmt-command"],
  },
  sort: { program: ["--compress-program"] },
  flock: { script: ["-c", "--command"] },
  su: { script: ["-c", "--command"] },
  script: { script: ["-c", "--command"] },
  watch: {},
  rsync: { script: ["-e", "--rsh"] },
  zip: { script: ["-TT", "--unzip-command"] },
};

function optionRuns(name: string, args: Field[], runs: Runs): void {
  if (name === "watch") {
    watchRuns(args, runs);
    return;
  }
  const table = Object.hasOwn(COMMAND_OPTIONS, name) ? COMMAND_OPTIONS[name] : undefined;
  if (!table) return;
  args.forEach((f, i) => {
    for (const [kind, options] of [
      ["script", table.script ?? []],
      ["program", table.program ?? []],
    ] as const) {
      for (const option of options) {
        const value =
          f.text === option
            ? args[i + 1]
            : f.text.startsWith(`${option}=`)
              ? { ...f, text: f.text.slice(option.length + 1) }
              : undefined;
        if (!value) continue;
        const what = `the command given to ${name} ${option}`;
        if (value.unknown)
          runs.scripts.push({
            dialect: "posix",
            what,
            unknownWhat: `gives ${name} ${option} a command known only at run time`,
          });
        else
          runs.scripts.push({
            dialect: "posix",
            what,
            unknownWhat: "",
            texts: [kind === "program" ? quote(value.text) : value.text],
          });
      }
    }
    if (name === "tar" && f.text.startsWith("--checkpoint-action=exec=")) {
      runs.scripts.push({
        dialect: "posix",
        what: "the command of tar --checkpoint-action",
        unknownWhat: "",
        texts: [f.text.slice(25)],
      });
    }
  });
}

/** `watch [options] command...`: the words are joined and run with `sh -c`. */
function watchRuns(args: Field[], runs: Runs): void {
  let i = 0;
  for (; i < args.length; i++) {
    const word = (args[i] as Field).text;
    if (!word.startsWith("-")) break;
    if (["-n", "--interval", "-q", "--equexit", "-g"].includes(word)) i++;
  }
  const words = args.slice(i);
  if (words.some((f) => f.unknown)) {
    runs.scripts.push({
      dialect: "posix",
      what: "the command given to watch",
      unknownWhat: "runs watch with a command known only at run time",
    });
  } else if (words.length) {
    runs.scripts.push({
      dialect: "posix",
      what: "the command given to watch",
      unknownWhat: "",
      texts: [words.map((f) => f.text).join(" ")],
    });
  }
}
