/**
 * A tokenizer for Python source, enough to judge what code may reach: names, attribute dots,
 * operators, numbers and string literals (every prefix, triple quotes, and f-strings, whose `{...}`
 * parts are code and are tokenized in their turn). Comments and line joins are dropped. It never
 * executes anything; text it cannot tokenize (an unterminated string) is an error with the reason.
 */

export interface PyToken {
  kind: "name" | "string" | "number" | "op";
  value: string;
  /** For strings: an f-string with code in it, or bytes. */
  formatted?: boolean;
  bytes?: boolean;
  /** Index of the token in the stream, for look-ahead. */
  index?: number;
}

export class PyTokenError extends Error {
  override readonly name = "PyTokenError";
}

/** Deepest nesting of f-strings inside f-strings that is read. */
const MAX_FSTRING_DEPTH = 8;
const MAX_TOKENS = 200_000;

const STRING_START = /^([rRbBuUfF]{0,2})('''|"""|'|")/;
const NAME = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]*/u;
const NUMBER = /^(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/;
const OPERATORS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "...",
  "->",
  ":=",
  "**",
  "//",
  "<<",
  ">>",
  "<=",
  ">=",
  "==",
  "!=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "@=",
];

export function tokenizePython(src: string, depth = 0): PyToken[] {
  const out: PyToken[] = [];
  let i = 0;
  let brackets = 0;
  while (i < src.length) {
    if (out.length > MAX_TOKENS) throw new PyTokenError("the code is too long to read");
    const ch = src[i] as string;
    if (ch === "#") {
      const nl = src.indexOf("\n", i);
      i = nl === -1 ? src.length : nl;
      continue;
    }
    if (ch === "\n" && brackets === 0) {
      // The end of a logical line: it ends an import list.
      if (out.at(-1)?.value !== "\n") out.push({ kind: "op", value: "\n" });
      i++;
      continue;
    }
    if (/\s/.test(ch) || (ch === "\\" && src[i + 1] === "\n")) {
      i += ch === "\\" ? 2 : 1;
      continue;
    }
    const rest = src.slice(i, i + 4);
    const str = STRING_START.exec(src.slice(i, i + 5));
    if (str && (str[1] === "" || /^[rRbBuUfF]+$/.test(str[1] as string))) {
      i = readString(src, i, str[1] as string, str[2] as string, out, depth);
      continue;
    }
    const name = NAME.exec(src.slice(i, i + 256));
    if (name) {
      out.push({ kind: "name", value: name[0] });
      i += name[0].length;
      continue;
    }
    const number = NUMBER.exec(src.slice(i, i + 256));
    if (number && number[0] !== ".") {
      out.push({ kind: "number", value: number[0] });
      i += number[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => rest.startsWith(o)) ?? ch;
    if ("([{".includes(op)) brackets++;
    else if (")]}".includes(op) && brackets > 0) brackets--;
    out.push({ kind: "op", value: op });
    i += op.length;
  }
  out.forEach((t, k) => {
    t.index = k;
  });
  return out;
}

function readString(
  src: string,
  start: number,
  prefix: string,
  quote: string,
  out: PyToken[],
  depth: number,
): number {
  const raw = /r/i.test(prefix);
  const formatted = /f/i.test(prefix);
  let i = start + prefix.length + quote.length;
  let body = "";
  for (;;) {
    if (i >= src.length) throw new PyTokenError("the code has a string that never ends");
    if (src.startsWith(quote, i)) break;
    const ch = src[i] as string;
    if (ch === "\n" && quote.length === 1)
      throw new PyTokenError("the code has a string that never ends on its line");
    if (ch === "\\") {
      body += src.slice(i, i + 2);
      i += 2;
      continue;
    }
    body += ch;
    i++;
  }
  const end = i + quote.length;
  if (formatted) {
    const { text, code } = splitFString(body, depth);
    out.push({ kind: "string", value: raw ? text : decodeEscapes(text), formatted: code.length > 0 });
    for (const part of code) out.push(...tokenizePython(part, depth + 1));
  } else {
    out.push({ kind: "string", value: raw ? body : decodeEscapes(body), bytes: /b/i.test(prefix) });
  }
  return end;
}

/** An f-string's literal text and the code of each `{...}` (`{{` and `}}` are braces). */
function splitFString(body: string, depth: number): { text: string; code: string[] } {
  if (depth >= MAX_FSTRING_DEPTH) throw new PyTokenError("the code nests f-strings too deeply");
  let text = "";
  const code: string[] = [];
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if ((ch === "{" || ch === "}") && body[i + 1] === ch) {
      text += ch;
      i++;
      continue;
    }
    if (ch !== "{") {
      text += ch;
      continue;
    }
    const end = fieldEnd(body, i + 1);
    // The replacement field's code, without its `!r` conversion or `:spec` (a spec may hold fields too).
    code.push(body.slice(i + 1, end));
    i = end;
  }
  return { text, code };
}

/** Where a replacement field that starts at `from` ends (its closing `}`), past nested brackets and strings. */
function fieldEnd(body: string, from: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < body.length; i++) {
    const ch = body[i] as string;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) {
      if (depth === 0) return i;
      depth--;
    }
  }
  throw new PyTokenError("the code has an f-string field that never closes");
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "0": "\0",
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  "\n": "",
};

function decodeEscapes(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|N\{[^}]*\}|[\s\S])/g,
    (whole, esc: string) => {
      if (Object.hasOwn(ESCAPES, esc)) return ESCAPES[esc] as string;
      if (/^[xuU]/.test(esc)) {
        const code = Number.parseInt(esc.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      if (/^[0-7]/.test(esc)) return String.fromCharCode(Number.parseInt(esc, 8));
      return whole;
    },
  );
}
