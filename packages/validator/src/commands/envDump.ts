/**
 * `l2.command.env-dump`: the line prints the environment where secrets would reach the output:
 * `env`, `printenv`, `set`, `export -p`, `declare -p`, `compgen -e`, `${!prefix*}`, or a secret
 * variable expanded into the command; and `/proc/<pid>/environ`, another process's environment
 * (the proxy's holds what L1 withheld), always.
 *
 * Where L1 filtered the server's environment at spawn (`environment` in the context), it holds no
 * secret unless the policy keeps one: a dump is refused only when a variable it kept looks secret,
 * and an expansion only of such a variable. Without that knowledge every dump is refused.
 */
import { secretLooking } from "../secrets.js";
import { envCommand } from "./invocations.js";
import type { CommandRule, CommandView } from "./view.js";

const PROC_ENVIRON = /\/proc\/(?:\S*\/)?environ\b/;
const PRINT_OPTION = /^-[A-Za-z]*p/;
const ENV_OPTION = /^-[A-Za-z]*[ev]/;
const VARIABLE_ACTION = /^(?:variable|export)$/;

function dumps(name: string, args: readonly string[]): boolean {
  const options = args.filter((a) => a.startsWith("-"));
  const operands = args.length - options.length;
  switch (name) {
    case "printenv":
      return true;
    case "env":
      // Words known only at run time (xargs's input) may be none at all.
      return envCommand(args.filter((a) => !a.includes("\u0000"))).length === 0;
    case "set":
      return args.length === 0;
    case "export":
    case "readonly":
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

/** The secret-looking variables the server holds, or undefined when its environment is unknown. */
function secretsHeld(view: CommandView): readonly string[] | undefined {
  return view.scope.ctx.environment?.secret;
}

export const envDump: CommandRule = (view) => {
  const { text, invocations, reading } = view;
  if (PROC_ENVIRON.test(text)) return "reads a process environment from /proc";
  const held = secretsHeld(view);
  const mayHold = held === undefined || held.length > 0;
  const dump = invocations.find(({ name, args }) => dumps(name, args));
  if (dump && mayHold) return `runs ${dump.name}, which prints the environment and the secrets in it`;
  if (reading.listsNames && mayHold) return "lists environment variables by name (indirect expansion)";
  for (const name of reading.expanded) {
    const secret = held === undefined ? secretLooking(name) : held.includes(name);
    if (secret) return `expands $${name}, a variable that holds a secret`;
  }
  return undefined;
};
