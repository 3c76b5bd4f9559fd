/**
 * `l2.command.env-dump`: commands that print the environment, where a server's secrets live
 * (`env`, `printenv`, `set`, `export -p`, `declare -p`, `compgen -e`, `/proc/<pid>/environ`), and
 * expansions that paste a secret variable or list variable names into the command.
 */
import { secretLooking } from "../secrets.js";
import { envCommand } from "./invocations.js";
import type { CommandRule } from "./view.js";

const PROC_ENVIRON = /\/proc\/(?:\S*\/)?environ\b/;
const PRINT_OPTION = /^-[A-Za-z]*p/;
const ENV_OPTION = /^-[A-Za-z]*[ev]/;
const VARIABLE_ACTION = /^(?:variable|export)$/;
const EXPANSION = /^\$(?:\{(!)?([A-Za-z_][A-Za-z0-9_]*)([*@])?|([A-Za-z_][A-Za-z0-9_]*))/;

interface Expansion {
  name: string;
  /** `${!prefix*}`: the names of every variable with the prefix. */
  listsNames: boolean;
}

/** `$NAME` and `${...}` outside single quotes, where the shell expands them. */
function expansions(text: string): Expansion[] {
  const found: Expansion[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && quote !== "'") i++;
    else if ((ch === "'" || ch === '"') && (quote === undefined || quote === ch))
      quote = quote ? undefined : ch;
    else if (ch === "$" && quote !== "'") {
      const m = EXPANSION.exec(text.slice(i, i + 130));
      if (m) found.push({ name: (m[2] ?? m[4]) as string, listsNames: m[1] === "!" && m[3] !== undefined });
    }
  }
  return found;
}

function dumps(name: string, args: readonly string[]): boolean {
  const options = args.filter((a) => a.startsWith("-"));
  const operands = args.length - options.length;
  switch (name) {
    case "printenv":
      return true;
    case "env":
      return envCommand(args).length === 0;
    case "set":
      return args.length === 0;
    case "export":
      return args.length === 0 || args.includes("-p");
    case "declare":
    case "typeset":
      return operands === 0 || options.some((o) => PRINT_OPTION.test(o));
    case "compgen":
      return (
        options.some((o) => ENV_OPTION.test(o)) ||
        args.some((a, i) => a === "-A" && VARIABLE_ACTION.test(args[i + 1] ?? ""))
      );
    default:
      return false;
  }
}

export const envDump: CommandRule = ({ text, invocations }) => {
  if (PROC_ENVIRON.test(text)) return "reads a process environment from /proc";
  const dump = invocations.find(({ name, args }) => dumps(name, args));
  if (dump) return `runs ${dump.name}, which prints the environment and the secrets in it`;
  for (const { name, listsNames } of expansions(text)) {
    if (listsNames) return "lists the names of environment variables by prefix (indirect expansion)";
    if (secretLooking(name)) return `expands $${name}, a variable that holds a secret`;
  }
  return undefined;
};
