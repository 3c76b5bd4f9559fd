/**
 * Invocations as the command rules see them: each program or builtin the reading found (wrapped
 * ones included: the reading follows `env`, `timeout`, `xargs`, `find -exec`, `sudo`, ...), with
 * its base name and its words; a word known only at run time holds "\u0000".
 */
import { basename } from "node:path";
import type { FullReading, Invocation as Read } from "@mcpguard/readers";

export interface Invocation {
  /** The program's base name (`/usr/bin/env` -> `env`); "\u0000" when it is known only at run time. */
  name: string;
  args: readonly string[];
  kind: Read["kind"];
  /** The folder it runs in: undefined where a `cd` went to a folder known at run time only. */
  cwd: string | undefined;
  /** The reading's invocation it comes from. */
  source: Read;
}

/** Most invocations the rules look at; the reading's own budget keeps a line far below it. */
const MAX_INVOCATIONS = 4096;

export function invocationsOf(reading: FullReading): Invocation[] {
  const out: Invocation[] = [];
  for (const inv of reading.invocations) {
    if (inv.kind === "function") continue;
    for (const argv of inv.argvs) {
      const first = argv[0];
      if (!first) continue;
      const name = first.unknown ? "\u0000" : basename(first.text);
      const args = argv.slice(1).map((f) => f.text);
      // In the other folder it may run in too, when a cd before it may have failed.
      for (const cwd of inv.cwdElse === undefined ? [inv.cwd] : [inv.cwd, inv.cwdElse])
        out.push({ name, args, kind: inv.kind, cwd, source: inv });
      if (out.length >= MAX_INVOCATIONS) return out;
    }
  }
  return out;
}

const ENV_VALUED = ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"];

/** The command `env` runs: its arguments after its options and `NAME=value` words (empty: it prints the environment). */
export function envCommand(args: readonly string[]): readonly string[] {
  let i = 0;
  while (i < args.length) {
    const word = args[i] as string;
    if (word === "--") return args.slice(i + 1);
    if (word.startsWith("-") && word.length > 1) i += ENV_VALUED.includes(word) ? 2 : 1;
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) i++;
    else break;
  }
  return args.slice(i);
}
