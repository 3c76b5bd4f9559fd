/**
 * The shell grammar: mvdan-sh (the GopherJS build of mvdan/sh), parsing with the bash variant, a
 * superset of what /bin/sh (dash) accepts for everything that matters here. It costs about 80 ms
 * to load from its code cache (moduleCache.ts; 2-3 times that from source), so it is loaded on
 * first use only ({@link shellGrammar}), or ahead of the first call with {@link warmShellGrammar}.
 * A parse then costs about 0.2 ms.
 *
 * The operator codes of the syntax tree are plain numbers that differ between versions of the
 * library, so they are not written down here: they are read from the parser itself at load, by
 * parsing one line per operator.
 */
import { requireCached } from "../moduleCache.js";

/**
 * A node of mvdan/sh's syntax tree, copied into a plain object: `type` is the Go type's name
 * (`CallExpr`), the other fields are the Go struct's (`Stmts`, `Cmd`, `Args`, ...), positions left out.
 */
// biome-ignore lint/suspicious/noExplicitAny: the tree's shape is the library's Go structs.
export type ShNode = any;

/** Most nodes one command may have; a larger tree is refused as too complex. */
const MAX_NODES = 50_000;

interface Syntax {
  NewParser(...options: unknown[]): { Parse(src: string, name: string): ShNode };
  Variant(lang: unknown): unknown;
  LangBash: unknown;
}

type RedirOp = ">" | ">>" | "<" | "<>" | "<&" | ">&" | ">|" | "<<" | "<<-" | "<<<" | "&>" | "&>>";
type BinOp = "&&" | "||" | "|" | "|&";
type ParamOp =
  | "+"
  | ":+"
  | "-"
  | ":-"
  | "?"
  | ":?"
  | "="
  | ":="
  | "%"
  | "%%"
  | "#"
  | "##"
  | "^"
  | "^^"
  | ","
  | ",,"
  | "@";

interface Operators {
  redirect: Map<number, RedirOp>;
  binary: Map<number, BinOp>;
  /** `<(` and `>(` */
  process: Map<number, "<(" | ">(">;
  param: Map<number, ParamOp>;
  /** Arithmetic operators that assign (`=`, `+=`, `++`, ...) */
  arithAssign: Set<number>;
  /** `[[ ]]` operators that compare numbers (`-eq`, ...): their operands are arithmetic. */
  arithTest: Set<number>;
}

export interface Grammar {
  /** The syntax tree of `src`, or why it does not parse (`line 1, column 6: ...`). */
  parse(src: string): { file: ShNode } | { error: string; tooLarge?: boolean };
  type(node: ShNode): string;
  ops: Operators;
}

let grammar: Grammar | undefined;

/** The grammar, loaded on first use. */
export function shellGrammar(): Grammar {
  grammar ??= load();
  return grammar;
}

/** Load the grammar now, so that the first command a server gets does not pay for it. */
export function warmShellGrammar(): void {
  shellGrammar();
}

function load(): Grammar {
  const syntax = (requireCached("mvdan-sh") as { syntax: Syntax }).syntax;
  const parser = syntax.NewParser(syntax.Variant(syntax.LangBash));
  const parse = (src: string): { file: ShNode } | { error: string; tooLarge?: boolean } => {
    let tree: ShNode;
    try {
      tree = parser.Parse(src, "");
    } catch (error) {
      const reason = describe(error);
      // The library parses by recursive descent: nesting past the JS stack is too complex, not wrong.
      if (error instanceof RangeError || /call stack/i.test(reason)) {
        return { error: "the command nests constructs too deeply to parse", tooLarge: true };
      }
      return { error: reason };
    }
    const file = toPlain(tree);
    return file ? { file } : { error: `the command has more than ${MAX_NODES} syntax nodes`, tooLarge: true };
  };
  const type = (node: ShNode): string => node?.type ?? "";
  return { parse, type, ops: calibrate(parse) };
}

/** Go strings are bytes; GopherJS keeps them as one character per byte. */
function goString(value: string): string {
  return /[\x80-\xff]/.test(value) ? Buffer.from(value, "latin1").toString("utf8") : value;
}

/** A Go value of the tree: a node to copy, a slice, a plain value, or nothing (nil, a position). */
function goValue(value: ShNode, stack: [ShNode, ShNode][]): ShNode {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return goString(value);
  if (typeof value !== "object") return value;
  if (value.$array !== undefined) {
    const items = (value.$array as ShNode[]).slice(value.$offset, value.$offset + value.$length);
    return items.map((item) => goValue(item, stack));
  }
  const ctor = value.constructor?.string;
  if (typeof ctor !== "string" || value === value.constructor.nil) return null;
  if (!ctor.startsWith("*syntax.") || ctor === "*syntax.Pos") return undefined;
  const copy: ShNode = { type: ctor.slice(8) };
  stack.push([value, copy]);
  return copy;
}

/**
 * A plain copy of the library's tree, read from GopherJS's own objects: the library's exported
 * objects convert every field from Go on each read, which costs ten times the parse. The tree is
 * read once, iteratively, and at most MAX_NODES.
 */
function toPlain(root: ShNode): ShNode | undefined {
  const stack: [ShNode, ShNode][] = [];
  const out = goValue(root.__internal_object__ ?? root, stack);
  let count = 0;
  while (stack.length > 0) {
    const [from, to] = stack.pop() as [ShNode, ShNode];
    if (++count > MAX_NODES) return undefined;
    for (const field of Object.keys(from)) {
      if (field === "$val" || field === "Comments" || field === "Last") continue;
      const value = goValue(from[field], stack);
      if (value !== undefined) to[field] = value;
    }
  }
  return out;
}

function describe(error: unknown): string {
  const e = error as { Error?: () => string; message?: string };
  const text = typeof e?.Error === "function" ? e.Error() : (e?.message ?? String(error));
  // "name:1:6: reached EOF ..." -> "line 1, column 6: reached EOF ..."
  return text.replace(/^(?:[^:\n]*:)?(\d+):(\d+): /, "line $1, column $2: ");
}

function parsed(parse: Grammar["parse"], src: string): ShNode {
  const result = parse(src);
  if ("error" in result) throw new Error(`mvdan-sh calibration: ${src}: ${result.error}`);
  return result.file;
}

function calibrate(parse: Grammar["parse"]): Operators {
  const redirect = new Map<number, RedirOp>();
  const names: RedirOp[] = [">", ">>", "<", "<>", "<&", ">&", ">|", "<<", "<<-", "<<<", "&>", "&>>"];
  const redirs = parsed(parse, "a >b >>c <d <>e <&3 >&2 >|f <<X <<-Y <<<w &>g &>>h\nX\n\tY\n").Stmts[0]
    .Redirs as ShNode[];
  names.forEach((name, i) => {
    redirect.set(redirs[i].Op, name);
  });

  const binary = new Map<number, BinOp>();
  for (const op of ["&&", "||", "|", "|&"] as const)
    binary.set(parsed(parse, `a ${op} b`).Stmts[0].Cmd.Op, op);

  const process = new Map<number, "<(" | ">(">();
  const procArgs = parsed(parse, "x <(a) >(b)").Stmts[0].Cmd.Args as ShNode[];
  process.set(procArgs[1].Parts[0].Op, "<(");
  process.set(procArgs[2].Parts[0].Op, ">(");

  const param = new Map<number, ParamOp>();
  const paramOps: ParamOp[] = ["+", ":+", "-", ":-", "?", ":?", "=", ":=", "%", "%%", "#", "##"];
  paramOps.push("^", "^^", ",", ",,", "@");
  const paramSrc = paramOps.map((op) => `\${a${op}${op === "@" ? "Q" : "b"}}`).join(" ");
  const paramArgs = parsed(parse, `echo ${paramSrc}`).Stmts[0].Cmd.Args as ShNode[];
  paramOps.forEach((op, i) => {
    param.set(paramArgs[i + 1].Parts[0].Exp.Op, op);
  });

  const arithAssign = new Set<number>();
  for (const expr of [
    "a=1",
    "a+=1",
    "a-=1",
    "a*=1",
    "a/=1",
    "a%=1",
    "a<<=1",
    "a>>=1",
    "a&=1",
    "a|=1",
    "a^=1",
  ]) {
    arithAssign.add(parsed(parse, `echo $((${expr}))`).Stmts[0].Cmd.Args[1].Parts[0].X.Op);
  }
  for (const expr of ["a++", "a--", "++a", "--a"]) {
    arithAssign.add(parsed(parse, `echo $((${expr}))`).Stmts[0].Cmd.Args[1].Parts[0].X.Op);
  }
  const arithTest = new Set<number>();
  for (const op of ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
    arithTest.add(parsed(parse, `[[ a ${op} b ]]`).Stmts[0].Cmd.X.Op);
  return { redirect, binary, process, param, arithAssign, arithTest };
}
