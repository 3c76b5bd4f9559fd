/**
 * Text the shell rewrites on its own: ANSI-C quoting (`$'...'`, bash only), backslashes outside
 * and inside double quotes, brace expansion (bash only), and the glob patterns of `${x#pat}`,
 * `${x/pat/rep}` and `case`.
 */

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** The value bash gives `$'raw'`. */
export function decodeAnsiC(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch !== "\\" || i + 1 >= raw.length) {
      out += ch;
      continue;
    }
    const next = raw[i + 1] as string;
    if (Object.hasOwn(SIMPLE_ESCAPES, next)) {
      out += SIMPLE_ESCAPES[next];
      i++;
      continue;
    }
    const numeric = /^(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.))/.exec(
      raw.slice(i + 1, i + 10),
    );
    if (!numeric) {
      out += ch;
      continue;
    }
    const [whole, oct, hex, u4, u8, ctl] = numeric;
    if (ctl !== undefined) out += String.fromCharCode(ctl.charCodeAt(0) & 0x1f);
    else {
      const code = oct ? Number.parseInt(oct, 8) : Number.parseInt((hex ?? u4 ?? u8) as string, 16);
      out += code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    i += whole.length;
  }
  return out;
}

/** An unquoted literal: backslashes removed, and whether an unescaped glob character remains. */
export function unquoted(raw: string): { text: string; glob: boolean } {
  let text = "";
  let glob = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch === "\\") {
      const next = raw[i + 1];
      if (next !== undefined && next !== "\n") text += next;
      i++;
      continue;
    }
    if (ch === "*" || ch === "?" || (ch === "[" && raw.indexOf("]", i + 1) !== -1)) glob = true;
    text += ch;
  }
  return { text, glob };
}

/** A literal inside double quotes (or an expanding here-document): `\` escapes only `$ \` " \\` and newline. */
export function doubleQuoted(raw: string, heredoc: boolean): string {
  const special = heredoc ? "$`\\\n" : '$`"\\\n';
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    const next = raw[i + 1];
    if (ch === "\\" && next !== undefined && special.includes(next)) {
      if (next !== "\n") out += next;
      i++;
      continue;
    }
    out += ch;
  }
  return out;
}

/** Most words one brace expansion may make; past it the word is taken as unknown. */
export const MAX_BRACE_WORDS = 64;

function braceBody(text: string, open: number): { close: number; parts: string[] } | undefined {
  let depth = 0;
  const parts: string[] = [];
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") depth++;
    else if (ch === "}") {
      depth--;
      if (depth === 0) {
        parts.push(text.slice(start, i));
        return { close: i, parts };
      }
    } else if (ch === "," && depth === 1) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return undefined;
}

function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (!m) return undefined;
  const [, from = "", to = "", stepText] = m;
  const numeric = /\d/.test(from);
  if (numeric !== /\d/.test(to)) return undefined;
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.abs(Number(stepText ?? 1)) || 1;
  if (Math.abs(b - a) / step >= MAX_BRACE_WORDS) return undefined;
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
  }
  return out;
}

/**
 * The words bash makes of an unquoted literal by brace expansion (`a{b,c}d`, `{1..3}`), or
 * undefined when it makes more than {@link MAX_BRACE_WORDS}. A word without braces is itself.
 */
export function expandBraces(text: string): string[] | undefined {
  const todo = [text];
  const done: string[] = [];
  while (todo.length > 0) {
    const word = todo.pop() as string;
    let expanded = false;
    for (let i = word.indexOf("{"); i !== -1; i = word.indexOf("{", i + 1)) {
      if (i > 0 && word[i - 1] === "\\") continue;
      const body = braceBody(word, i);
      if (!body) break;
      const inner = body.parts.length > 1 ? body.parts : sequence(body.parts[0] as string);
      if (!inner) continue;
      const head = word.slice(0, i);
      const tail = word.slice(body.close + 1);
      for (let k = inner.length - 1; k >= 0; k--) todo.push(head + inner[k] + tail);
      expanded = true;
      break;
    }
    if (!expanded) done.push(word);
    if (done.length + todo.length > MAX_BRACE_WORDS) return undefined;
  }
  return done;
}

/**
 * A shell string pattern (`case`, `${v#pat}`, `${v/pat/x}`: `*`, `?`, bracket expressions, backslash
 * escapes) as an unanchored regex source, read as bash and dash read it in the C locale: `*` and
 * `?` cross `/` and match a leading `.`, `[[:alpha:]]` is a POSIX class, a `]` first in the brackets
 * is a member, a `[` that no `]` closes is itself. Not a file glob (readers/src/glob.ts is).
 */
export function globSource(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "\\" && i + 1 < pattern.length) {
      out += escapeRegex(pattern[++i] as string);
    } else if (ch === "*") out += "[\\s\\S]*";
    else if (ch === "?") out += "[\\s\\S]";
    else if (ch === "[") {
      const bracket = bracketSource(pattern, i);
      if (bracket === undefined) out += "\\[";
      else {
        out += bracket.source;
        i = bracket.close;
      }
    } else out += escapeRegex(ch);
  }
  return out;
}

/** The POSIX character classes in the C locale (bash's `word` included). */
const POSIX_CLASSES: Record<string, string> = {
  alnum: "A-Za-z0-9",
  alpha: "A-Za-z",
  blank: " \\t",
  cntrl: "\\x00-\\x1f\\x7f",
  digit: "0-9",
  graph: "\\x21-\\x7e",
  lower: "a-z",
  print: "\\x20-\\x7e",
  punct: "!-\\/:-@\\[-`{-~",
  space: " \\t\\n\\r\\f\\v",
  upper: "A-Z",
  word: "A-Za-z0-9_",
  xdigit: "0-9A-Fa-f",
};

/**
 * The bracket expression opening at `open` as a regex source, and the index of its closing `]`;
 * undefined when no `]` closes it. An unknown class (`[[:foo:]]`) matches nothing, as in bash.
 */
function bracketSource(pattern: string, open: number): { source: string; close: number } | undefined {
  let i = open + 1;
  const negate = pattern[i] === "!" || pattern[i] === "^";
  if (negate) i++;
  let set = "";
  for (let first = true; i < pattern.length; i++, first = false) {
    const ch = pattern[i] as string;
    if (ch === "]" && !first) {
      if (set === "") return { source: negate ? "[\\s\\S]" : "(?!)", close: i };
      return { source: `[${negate ? "^" : ""}${set}]`, close: i };
    }
    if (ch === "[" && pattern[i + 1] === ":") {
      const end = pattern.indexOf(":]", i + 2);
      if (end !== -1) {
        set += POSIX_CLASSES[pattern.slice(i + 2, end)] ?? "";
        i = end + 1;
        continue;
      }
    }
    if (ch === "\\" && i + 1 < pattern.length) set += classMember(pattern[++i] as string);
    else if (ch === "-" && set !== "" && pattern[i + 1] !== "]" && i + 1 < pattern.length) set += "-";
    else set += classMember(ch);
  }
  return undefined;
}

/** A character as itself inside a regex class. */
function classMember(ch: string): string {
  return /[\\\][^-]/.test(ch) ? `\\${ch}` : ch;
}

function escapeRegex(ch: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(ch) ? `\\${ch}` : ch;
}

/**
 * `${value#pat}` (`largest` for `##`), `${value%pat}` (`suffix`; `%%` for largest). Undefined when
 * the pattern cannot be read (a range such as `[z-a]`): the value is then unknown, not guessed.
 */
export function removeAffix(
  value: string,
  pattern: string,
  suffix: boolean,
  largest: boolean,
): string | undefined {
  const re = patternRegex(`^(?:${globSource(pattern)})$`, "");
  if (re === undefined) return undefined;
  const lengths = [...Array(value.length + 1).keys()];
  if (largest) lengths.reverse();
  for (const n of lengths) {
    const part = suffix ? value.slice(value.length - n) : value.slice(0, n);
    if (re.test(part)) return suffix ? value.slice(0, value.length - n) : value.slice(n);
  }
  return value;
}

/** `${value/pat/with}` and `${value//pat/with}` (bash); undefined when the pattern cannot be read. */
export function replacePattern(
  value: string,
  pattern: string,
  replacement: string,
  all: boolean,
): string | undefined {
  const re = patternRegex(globSource(pattern), all ? "g" : "");
  return re === undefined ? undefined : value.replace(re, () => replacement);
}

function patternRegex(source: string, flags: string): RegExp | undefined {
  try {
    return new RegExp(source, flags);
  } catch {
    // Only a range out of order (`[z-a]`) fails to build; the callers say "unknown" for it.
    return undefined;
  }
}
