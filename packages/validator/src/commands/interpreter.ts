/**
 * `l2.command.interpreter`: code that a command carries or fetches instead of a program it names:
 * inline code (`sh -c`, `python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`), an interpreter
 * reading its program from a pipe, `eval` and `exec`, and sourcing or running a shell script from
 * outside the allowed directories.
 */
import type { CommandRule, CommandView } from "./view.js";
import { place } from "./view.js";

interface Interpreter {
  /** Short options that take inline code. */
  inline: string;
  long: readonly string[];
  /** Short options whose value is the rest of the word or the next word. */
  valued: string;
  /** Options after which the operand is a module, not a script (`python -m`). */
  module?: string;
  shell?: boolean;
}

const INTERPRETERS: readonly [RegExp, Interpreter][] = [
  [
    /^(?:sh|bash|zsh|dash|ksh|mksh|ash|fish)$/,
    { inline: "c", long: ["--command"], valued: "oO", shell: true },
  ],
  [/^python[0-9.]*$/, { inline: "c", long: [], valued: "WXm", module: "m" }],
  [/^(?:node|nodejs|bun)$/, { inline: "ep", long: ["--eval", "--print"], valued: "rC" }],
  [/^perl[0-9.]*$/, { inline: "eE", long: [], valued: "IMmx" }],
  [/^ruby[0-9.]*$/, { inline: "e", long: [], valued: "rIC" }],
  [/^php[0-9.]*$/, { inline: "r", long: [], valued: "cdf" }],
  [/^(?:lua[0-9.]*|luajit|Rscript|osascript)$/, { inline: "e", long: [], valued: "l" }],
];
const INFO = new Set(["--version", "--help", "-V", "-h", "-v"]);

type Program = { kind: "inline" | "stdin" | "info" | "module" } | { kind: "script"; path: string };

/** Where an interpreter takes its program from, read from its options (`--version` alone runs none). */
function programOf(args: readonly string[], spec: Interpreter): Program {
  if (args.length > 0 && args.every((a) => INFO.has(a))) return { kind: "info" };
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "-") return { kind: "stdin" };
    if (word === "--") {
      return args[i + 1] === undefined ? { kind: "stdin" } : { kind: "script", path: args[i + 1] as string };
    }
    if (word.startsWith("--")) {
      if (spec.long.includes(word.split("=")[0] as string)) return { kind: "inline" };
      continue;
    }
    if (!word.startsWith("-") || word.length < 2) return { kind: "script", path: word };
    for (let j = 1; j < word.length; j++) {
      const letter = word[j] as string;
      if (spec.inline.includes(letter)) return { kind: "inline" };
      if (spec.shell && letter === "s") return { kind: "stdin" };
      if (spec.valued.includes(letter)) {
        if (spec.module?.includes(letter)) return { kind: "module" };
        if (j === word.length - 1) i++;
        break;
      }
    }
  }
  return { kind: "stdin" };
}

function outside(path: string, view: CommandView): boolean {
  return !view.scope.withinRoots(place(path, view.scope));
}

export const interpreter: CommandRule = (view) => {
  for (const { name, args } of view.invocations) {
    if (name === "eval" || name === "exec") return `uses ${name}, which runs a string or replaces the shell`;
    if ((name === "source" || name === ".") && args[0] !== undefined && outside(args[0], view)) {
      return "sources a file from outside the allowed directories";
    }
    const spec = INTERPRETERS.find(([pattern]) => pattern.test(name))?.[1];
    if (!spec) continue;
    const program = programOf(args, spec);
    if (program.kind === "inline") return `runs ${name} with inline code`;
    if (program.kind === "stdin") {
      return `runs ${name} on a program read from its input (a pipe into an interpreter)`;
    }
    if (program.kind === "script" && spec.shell && outside(program.path, view)) {
      return `runs a ${name} script from outside the allowed directories`;
    }
  }
  return undefined;
};
