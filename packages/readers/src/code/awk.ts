/**
 * awk programs, read with a tokenizer: awk can run commands (`system()`, `print | "cmd"`,
 * `"cmd" | getline`), read files (`getline < file`, and the files ARGV names) and write them
 * (`print > file`), and gawk can load code (`@load`, `@include`, `-l`, `-i`). Literal files are
 * returned for L1's path checks under every config; commands, code and files named by anything
 * but one literal string are refused where the kernel does not confine programs and files (C-app).
 *
 * The grammar is what the awk the servers run reads (mawk 1.3.4 here, through PATH) and what gawk
 * reads: where they differ (a string escape such as `\/` or `\q`, gawk's @ forms), the construct
 * is refused. awkDifferential.test.ts holds it to the installed awk.
 */
import type { Confinement } from "../confinement.js";
import type { Field } from "../shell/index.js";
import { type CodeUse, emptyUse } from "./use.js";

interface AwkToken {
  kind: "name" | "string" | "regex" | "number" | "op" | "at";
  value: string;
  /** A string whose value awks read differently (`"\/"`, `"\q"`, `"\x414"`). */
  ambiguous?: boolean;
  /** A `)` that closes the condition of if, while or for: a regular expression may follow. */
  control?: boolean;
}

class AwkError extends Error {}

/** The special files awk writes to without opening a file. */
export const STANDARD_STREAMS = new Set(["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "-"]);

/** Options that take no value and reach nothing (mawk's and gawk's). */
const PLAIN_OPTIONS =
  /^(?:--(?:posix|traditional|compat|lint(?:=\S*)?|re-interval|non-decimal-data|characters-as-bytes|sandbox|use-lc-numeric|optimize|no-optimize|bignum|copyright|version|help|usage)|-[PcrnbNSMOstLV]|-h)$/;
/** mawk's -W options that reach nothing; `-W exec file` reads the program from a file. */
const PLAIN_W = /^(?:version|dump|help|usage|interactive|posix_space|random=\d+|sprintf=\d+)$/;

export function awkUse(name: string, argv: Field[], confined: Confinement): CodeUse {
  const use = emptyUse();
  const strict = !(confined.exec && confined.files);
  const refuse = (why: string) => (strict ? { ...use, refusal: `${name} ${why}` } : undefined);
  let program: Field | undefined;
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i] as Field;
    const word = f.text;
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    if (f.unknown) {
      const why = refuse("takes an option known only at run time");
      if (why) return why;
      continue;
    }
    const long = /^(--[a-z-]+)(?:=([\s\S]*))?$/.exec(word);
    const flag = long ? (long[1] as string) : word.slice(0, 2);
    const attached = long ? long[2] : word.length > 2 ? word.slice(2) : undefined;
    // The option's value: attached (-fprog, --file=prog) or the next word.
    const value = (): Field | undefined => {
      if (attached !== undefined) return { ...f, text: attached };
      i++;
      return argv[i];
    };
    if (["-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"].includes(flag)) {
      value();
      const why = refuse(`runs code from a file (${word}), which is not part of the call`);
      if (why) return why;
      continue;
    }
    if (flag === "-e" || flag === "--source") {
      if (attached === undefined) use.codeOperands.add(i + 1);
      else use.codeOperands.add(i);
      program = value();
      continue;
    }
    if (["-F", "-v", "--assign", "--field-separator"].includes(flag)) {
      value();
      continue;
    }
    if (flag === "-W") {
      const option = value()?.text ?? "";
      if (!PLAIN_W.test(option)) {
        const why = refuse(`takes -W ${option}, which may read its program from a file`);
        if (why) return why;
      }
      continue;
    }
    if (PLAIN_OPTIONS.test(word)) continue;
    // gawk's -d, -p, -o write files, -D debugs; anything else may name a file or take the next word.
    const why = refuse(`takes the option ${word}, which may write a file or name one`);
    if (why) return why;
  }
  if (!program && argv[i]) {
    use.codeOperands.add(i);
    program = argv[i];
  }
  argv.forEach((f, k) => {
    if (k > i && /^[A-Za-z_]\w*=/.test(f.text)) use.codeOperands.add(k);
  });
  if (!program) return use;
  return programUse(name, program, use, strict);
}

function programUse(name: string, program: Field, use: CodeUse, strict: boolean): CodeUse {
  if (program.unknown)
    return strict
      ? { ...use, refusal: `the ${name} program holds ${program.unknown.origin}, known only at run time` }
      : use;
  let tokens: AwkToken[];
  try {
    tokens = tokenizeAwk(program.text);
  } catch (error) {
    if (!(error instanceof AwkError)) throw error;
    return strict ? { ...use, refusal: `the ${name} program does not tokenize: ${error.message}` } : use;
  }
  const why = awkRules(tokens, use);
  return why && strict ? { ...use, refusal: `the ${name} program ${why}` } : use;
}

/** Tokens after which an expression cannot go on: a string before one is the whole file name. */
const ENDS_OPERAND = new Set([
  ")",
  ";",
  "\n",
  "}",
  ">",
  "<",
  ">=",
  "<=",
  "==",
  "!=",
  "&&",
  "||",
  "?",
  ":",
  ",",
  "]",
]);
const ENDS_STATEMENT = new Set([";", "\n", "}"]);
const ASSIGNMENTS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"]);

/** Why the program is refused, or undefined; literal files go into `use`. */
export function awkRules(tokens: AwkToken[], use: CodeUse): string | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k] as AwkToken;
    if (t.kind === "at")
      return `loads code or calls a function named at run time with gawk's ${t.value} (@include, @load, @f())`;
    if (t.kind === "name" && t.value === "system" && tokens[k + 1]?.value === "(")
      return "runs a command with system()";
    if (t.kind === "op" && (t.value === "|" || t.value === "|&")) return "runs a command through a pipe";
    if (t.kind === "name" && t.value === "ARGV") {
      const why = argvRule(tokens, k);
      if (why) return why;
    }
    if (t.kind === "name" && (t.value === "print" || t.value === "printf")) {
      const why = printRedirect(tokens, k, use);
      if (why) return why;
    }
    if (t.kind === "name" && t.value === "getline") {
      const at = afterLvalue(tokens, k + 1);
      if (tokens[at]?.value !== "<" || tokens[at]?.kind !== "op") continue;
      const file = tokens[at + 1];
      const next = tokens[at + 2];
      if (file?.kind !== "string" || file.ambiguous || (next && !ENDS_OPERAND.has(next.value)))
        return "reads a file named only when it runs, or by more than one string (getline <)";
      use.files.push({ path: file.value, access: "read" });
    }
  }
  return undefined;
}

/** The index after the variable `getline` reads into, if any: `x`, `a[i]`, `$1`, `$(i+1)`. */
function afterLvalue(tokens: AwkToken[], k: number): number {
  let j = k;
  if (tokens[j]?.value === "$") {
    j++;
    if (tokens[j]?.value === "(") return skipBalanced(tokens, j, "(", ")");
    return tokens[j]?.kind === "name" || tokens[j]?.kind === "number" ? j + 1 : j;
  }
  if (tokens[j]?.kind !== "name") return j;
  j++;
  return tokens[j]?.value === "[" ? skipBalanced(tokens, j, "[", "]") : j;
}

function skipBalanced(tokens: AwkToken[], j: number, open: string, close: string): number {
  let depth = 0;
  for (; j < tokens.length; j++) {
    const v = (tokens[j] as AwkToken).value;
    if ((tokens[j] as AwkToken).kind !== "op") continue;
    if (v === open) depth++;
    else if (v === close && --depth === 0) return j + 1;
  }
  return j;
}

/** Calls whose arguments are only read (and the parentheses of if, while, for). */
const READS_ARGUMENTS = new Set([
  "if",
  "while",
  "for",
  "length",
  "substr",
  "index",
  "toupper",
  "tolower",
  "sprintf",
  "match",
  "int",
  "close",
]);

/**
 * ARGV names the files awk reads after BEGIN: a program that changes it reads files no operand
 * names (`ARGV[1] = "/etc/shadow"`, `sub(/x/, "y", ARGV[1])`, `split(s, ARGV)`). Reading
 * `ARGV[i]` is fine; anything that may write it is refused.
 */
function argvRule(tokens: AwkToken[], k: number): string | undefined {
  const why = "changes ARGV, the files awk reads";
  const before = tokens[k - 1];
  if (before && (before.value === "++" || before.value === "--" || before.value === "getline")) return why;
  if (tokens[k + 1]?.value !== "[") return why;
  const after = tokens[skipBalanced(tokens, k + 1, "[", "]")];
  if (after?.kind === "op" && ASSIGNMENTS.has(after.value)) return why;
  // An argument of sub, gsub or split (their target), or of a function of the program's.
  let depth = 0;
  for (let j = k - 1; j >= 0; j--) {
    const v = (tokens[j] as AwkToken).value;
    if (v === ")" || v === "]") depth++;
    else if (v === "[" && depth > 0) depth--;
    else if (v === "(" && depth > 0) depth--;
    else if (v === "(") {
      const callee = tokens[j - 1];
      return callee?.kind === "name" && !READS_ARGUMENTS.has(callee.value) ? why : undefined;
    } else if (depth === 0 && ENDS_STATEMENT.has(v)) return undefined;
  }
  return undefined;
}

/** `print ... > "file"`: a `>` or `>>` outside parentheses before the statement ends. */
function printRedirect(tokens: AwkToken[], k: number, use: CodeUse): string | undefined {
  let depth = 0;
  for (let j = k + 1; j < tokens.length; j++) {
    const t = tokens[j] as AwkToken;
    if (t.kind !== "op") continue;
    if (t.value === "(") depth++;
    else if (t.value === ")") depth--;
    else if (depth <= 0 && ENDS_STATEMENT.has(t.value)) return undefined;
    else if (depth === 0 && (t.value === ">" || t.value === ">>")) {
      // The file is the whole expression up to the statement's end: one string, or refused.
      const file = tokens[j + 1];
      const next = tokens[j + 2];
      if (file?.kind !== "string" || file.ambiguous || (next && !ENDS_STATEMENT.has(next.value)))
        return "writes to a file named only when it runs, or by more than one string (print >)";
      if (!STANDARD_STREAMS.has(file.value)) use.files.push({ path: file.value, access: "write" });
      return undefined;
    }
  }
  return undefined;
}

const AWK_OPS = [
  "**=",
  "&&",
  "||",
  "|&",
  ">>",
  "<=",
  ">=",
  "==",
  "!=",
  "~",
  "!~",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "^=",
  "**",
];
/** Words after which a `/` starts a regular expression (awk's keywords that take an expression). */
const BEFORE_REGEX = new Set(["in", "print", "printf", "return", "case", "else", "do"]);

/**
 * Whether a `/` after `last` starts a regular expression: it is a division only after something
 * that ends an operand (a name, a number, a string, `)` but the one that closes an if, while or
 * for condition, `]`, a postfix `++` or `--`).
 */
function regexMayStart(last: AwkToken | undefined): boolean {
  if (!last) return true;
  switch (last.kind) {
    case "number":
    case "string":
    case "regex":
    case "at":
      return false;
    case "name":
      return BEFORE_REGEX.has(last.value);
    default:
      if (last.value === ")") return last.control === true;
      return !["]", "++", "--"].includes(last.value);
  }
}

export function tokenizeAwk(src: string): AwkToken[] {
  const out: AwkToken[] = [];
  const parens: boolean[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (ch === "\\" && (src[i + 1] === "\n" || (src[i + 1] === "\r" && src[i + 2] === "\n"))) {
      i += src[i + 1] === "\n" ? 2 : 3;
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\r") {
      i++;
      continue;
    }
    const last = out.at(-1);
    if (ch === '"') {
      const [value, end, ambiguous] = quoted(src, i, '"');
      out.push({ kind: "string", value, ...(ambiguous ? { ambiguous } : {}) });
      i = end;
    } else if (ch === "/" && regexMayStart(last)) {
      const [value, end] = quoted(src, i, "/");
      out.push({ kind: "regex", value });
      i = end;
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ kind: "name", value: m[0] });
      i += m[0].length;
    } else if (ch === "@") {
      const m = /^@[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      out.push({ kind: "at", value: m?.[0] ?? "@" });
      i += m?.[0].length ?? 1;
    } else if (/[0-9.]/.test(ch) && /^[0-9.]/.test(src.slice(i))) {
      const m = /^(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.)/.exec(src.slice(i));
      const text = m?.[0] || ch;
      out.push({ kind: text === "." ? "op" : "number", value: text });
      i += text.length;
    } else {
      const op = AWK_OPS.find((o) => src.startsWith(o, i)) ?? ch;
      const token: AwkToken = { kind: "op", value: op };
      if (op === "(") parens.push(last?.kind === "name" && ["if", "while", "for"].includes(last.value));
      else if (op === ")" && parens.pop()) token.control = true;
      out.push(token);
      i += op.length;
    }
  }
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
};

/**
 * A string or a regular expression from `start` (its opening quote): its value, the offset after
 * it, and whether awks read its escapes differently. A string's escapes are decoded as mawk and
 * gawk both do (`\"`, `\\`, `\n`..., up to three octal digits, `\x` and two hex digits); `\/`,
 * an unknown escape and a third hex digit are kept by mawk and read otherwise by gawk.
 */
function quoted(src: string, start: number, quote: string): [string, number, boolean] {
  let value = "";
  let ambiguous = false;
  for (let i = start + 1; i < src.length; i++) {
    const ch = src[i] as string;
    if (ch === "\\" && i + 1 < src.length) {
      const next = src[i + 1] as string;
      if (quote === "/") {
        value += next === "/" ? "/" : `\\${next}`;
        i++;
        continue;
      }
      if (next === "\n") {
        i++;
        continue;
      }
      const octal = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4));
      const hex = next === "x" ? /^[0-9a-fA-F]{1,2}/.exec(src.slice(i + 2, i + 4)) : null;
      if (octal) {
        value += String.fromCharCode(Number.parseInt(octal[0], 8));
        i += octal[0].length;
      } else if (hex) {
        value += String.fromCharCode(Number.parseInt(hex[0], 16));
        i += 1 + hex[0].length;
        if (/[0-9a-fA-F]/.test(src[i + 1] ?? "")) ambiguous = true;
      } else if (Object.hasOwn(SIMPLE_ESCAPES, next)) {
        value += SIMPLE_ESCAPES[next];
        i++;
      } else {
        value += `\\${next}`;
        ambiguous = true;
        i++;
      }
      continue;
    }
    if (ch === quote) return [value, i + 1, ambiguous];
    if (ch === "\n") break;
    value += ch;
  }
  throw new AwkError(quote === '"' ? "a string never ends" : "a regex never ends");
}
