/**
 * What is known of a command substitution's output before it runs, for the few programs whose
 * output has a known shape: numbers (`seq`, `wc` on its input, `date +%s`, `git rev-list
 * --count`, `nproc`, `id -u`) and mktemp's new file, a name in a known directory.
 */
import { posix } from "node:path";
import type { Grammar, ShNode } from "./grammar.js";
import type { Field, Invocation, ShellContext, Unknown } from "./model.js";

const DIGIT_FORMAT = /^\+(?:%[sYmdHMSjuwVGyeNkl]|[0-9:-])+$/;

function texts(argv: Field[]): string[] | undefined {
  return argv.some((f) => f.unknown) ? undefined : argv.map((f) => f.text);
}

function numberOutput(name: string, args: string[]): boolean {
  switch (name) {
    case "seq":
      return !args.some((a) => a.startsWith("-f") || a.startsWith("--format"));
    case "wc":
      return args.every((a) => a.startsWith("-"));
    case "date":
      return args.length === 1 && DIGIT_FORMAT.test(args[0] as string);
    case "nproc":
      return true;
    case "id":
      return args.length === 1 && ["-u", "-g", "-ru", "-rg"].includes(args[0] as string);
    case "git":
      return args[0] === "rev-list" && args.includes("--count");
    default:
      return false;
  }
}

/** The directory mktemp makes its file in. */
function mktempDir(args: string[], cwd: string | undefined, ctx: ShellContext): string | undefined {
  let dir: string | undefined;
  let tmpdir = false;
  let template: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-p" || a === "--tmpdir") {
      if (a === "-p" || (args[i + 1] !== undefined && !args[i + 1]?.startsWith("-"))) dir = args[++i];
      tmpdir = true;
    } else if (a.startsWith("--tmpdir=")) dir = a.slice(9);
    else if (a.startsWith("-p") && a.length > 2) dir = a.slice(2);
    else if (a === "-t") tmpdir = true;
    else if (!a.startsWith("-")) template = a;
  }
  const base = dir ?? (tmpdir || template === undefined ? (ctx.tmp ?? "/tmp") : cwd);
  if (base === undefined || cwd === undefined) return undefined;
  const templateDir = template?.includes("/") ? posix.dirname(template) : ".";
  return posix.resolve(cwd, base, templateDir);
}

export function outputShape(
  stmts: ShNode[],
  inner: Invocation[],
  g: Grammar,
  ctx: ShellContext,
): Unknown | undefined {
  if (stmts.length !== 1) return undefined;
  const type = g.type(stmts[0].Cmd);
  if (type !== "CallExpr" && type !== "BinaryCmd") return undefined;
  const last = [...inner].reverse().find((inv) => inv.via === undefined);
  if (last?.argvs.length !== 1) return undefined;
  const argv = texts(last.argvs[0] as Field[]);
  if (!argv) return undefined;
  const name = posix.basename(argv[0] as string);
  const args = argv.slice(1);
  if (numberOutput(name, args)) return { kind: "number", origin: `the number ${name} prints` };
  if (name === "mktemp") {
    const dir = mktempDir(args, last.cwdElse === undefined ? last.cwd : undefined, ctx);
    if (dir) return { kind: "within", dir, origin: `the file mktemp makes in ${dir}` };
  }
  return undefined;
}
