/**
 * The shell reading, re-exported: see shell/index.ts. `parseCommand` keeps the flat view of the
 * former hand-written reader (every simple command's literal words) for the AgentBound baseline,
 * which judges a command by its first program.
 */
import { readShell } from "./shell/index.js";

export interface Redirect {
  op: ">" | ">>" | "<" | ">|" | "<>" | "&>" | "&>>";
  target: string;
}

interface SimpleCommand {
  assignments: string[];
  argv: string[];
  redirects: Redirect[];
}

interface ParsedCommand {
  commands: SimpleCommand[];
  /** The line holds something only the shell knows at run time. */
  substitution: boolean;
  expansion: boolean;
  malformed: boolean;
}

/** Every program and builtin the line runs, with the first way its words may expand. */
export function parseCommand(line: string, cwd = "/"): ParsedCommand {
  const read = readShell(line, { cwd });
  if (!read.ok) return { commands: [], substitution: false, expansion: false, malformed: true };
  const commands = read.reading.invocations.map((inv) => ({
    assignments: inv.env.map((e) => `${e.name}=${e.value.text}`),
    argv: (inv.argvs[0] ?? []).map((f) => f.text),
    redirects: inv.redirects.flatMap((r) => r.targets.slice(0, 1).map((t) => ({ op: r.op, target: t.text }))),
  }));
  const unknown = read.reading.invocations.some((inv) => inv.argvs.some((a) => a.some((f) => f.unknown)));
  return { commands, substitution: read.reading.dynamics.length > 0, expansion: unknown, malformed: false };
}
