/**
 * Every program a simple command runs: the command itself and, through wrappers that run another
 * command (`env`, `timeout`, `nohup`, `xargs`, `sudo`, `busybox`, `find -exec`, ...), the command
 * inside, so that `env sh -c ...` or `timeout 5 nc ...` is judged like `sh -c ...` and `nc ...`.
 */
import { basename } from "node:path";

export interface Invocation {
  /** The program's base name (`/usr/bin/env` -> `env`). */
  name: string;
  args: readonly string[];
}

interface Wrapper {
  /** Options that take the next word as their value. */
  valued?: readonly string[];
  /** Leading operands that belong to the wrapper (the duration of `timeout`, the root of `chroot`). */
  positional?: number;
  /** `NAME=value` words before the command (env). */
  assignments?: boolean;
}

const WRAPPERS: Record<string, Wrapper> = {
  env: { valued: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"], assignments: true },
  nohup: {},
  time: {},
  command: {},
  builtin: {},
  exec: { valued: ["-a"] },
  setsid: {},
  nice: { valued: ["-n", "--adjustment"] },
  ionice: { valued: ["-c", "-n", "-p", "-P", "-u"] },
  stdbuf: { valued: ["-i", "-o", "-e"] },
  timeout: { valued: ["-s", "--signal", "-k", "--kill-after"], positional: 1 },
  xargs: { valued: ["-I", "-n", "-P", "-d", "-a", "-E", "-L", "-s"] },
  sudo: { valued: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R"] },
  doas: { valued: ["-u", "-C"] },
  chroot: { positional: 1 },
  busybox: {},
  unbuffer: {},
  strace: { valued: ["-o", "-e", "-p", "-s", "-u"] },
};
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The command a wrapper runs: its arguments after the wrapper's own options and operands. */
export function wrappedCommand(args: readonly string[], wrapper: Wrapper): readonly string[] {
  let positional = wrapper.positional ?? 0;
  let i = 0;
  while (i < args.length) {
    const word = args[i] as string;
    if (word === "--") return args.slice(i + 1);
    if (word.startsWith("-") && word.length > 1) i += wrapper.valued?.includes(word) ? 2 : 1;
    else if (wrapper.assignments && ASSIGNMENT.test(word)) i++;
    else if (positional > 0) {
      positional--;
      i++;
    } else break;
  }
  return args.slice(i);
}

export function envCommand(args: readonly string[]): readonly string[] {
  return wrappedCommand(args, WRAPPERS.env as Wrapper);
}

/** How many programs one simple command may run through wrappers and `find -exec` and still be checked. */
export const MAX_NESTED_COMMANDS = 64;

/**
 * Every program `argv` runs, in order: each wrapper and what it runs, and the commands of each
 * `find -exec`, depth first. Undefined when that is more than {@link MAX_NESTED_COMMANDS}
 * programs: the walk keeps its own stack and stops there, so no command costs the call stack or
 * quadratic time.
 */
export function invocations(argv: readonly string[]): Invocation[] | undefined {
  const out: Invocation[] = [];
  const todo: (readonly string[])[] = [argv];
  while (todo.length > 0) {
    let rest = todo.pop() as readonly string[];
    while (rest.length > 0) {
      if (out.length >= MAX_NESTED_COMMANDS) return undefined;
      const name = basename(rest[0] as string);
      const args = rest.slice(1);
      out.push({ name, args });
      if (name === "find") {
        const inner = findCommands(args, MAX_NESTED_COMMANDS - out.length - todo.length);
        if (!inner) return undefined;
        // Last pushed is walked first: the commands come out in the order they appear.
        for (let i = inner.length - 1; i >= 0; i--) todo.push(inner[i] as readonly string[]);
      }
      const wrapper = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
      if (!wrapper) break;
      rest = wrappedCommand(args, wrapper);
    }
  }
  return out;
}

/**
 * The command of each `-exec` (`-execdir`, `-ok`, `-okdir`) among a find's arguments; undefined
 * when there are more than `budget`, before any is copied.
 */
function findCommands(args: readonly string[], budget: number): (readonly string[])[] | undefined {
  if (args.filter((word) => FIND_EXEC.has(word)).length > budget) return undefined;
  const inner: (readonly string[])[] = [];
  // The index of the first `;` or `+` after each word (args.length when there is none).
  const terminator: number[] = new Array(args.length);
  let next = args.length;
  for (let j = args.length - 1; j >= 0; j--) {
    terminator[j] = next;
    if (args[j] === ";" || args[j] === "+") next = j;
  }
  args.forEach((word, i) => {
    if (FIND_EXEC.has(word)) inner.push(args.slice(i + 1, terminator[i]));
  });
  return inner;
}
