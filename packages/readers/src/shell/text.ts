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

/** A shell glob (`*`, `?`, `[...]`, backslash escapes) as an anchored-free regex source. */
export function globSource(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "\\" && i + 1 < pattern.length) {
      out += escapeRegex(pattern[++i] as string);
    } else if (ch === "*") out += "[\\s\\S]*";
    else if (ch === "?") out += "[\\s\\S]";
    else if (ch === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close === -1) out += "\\[";
      else {
        let set = pattern.slice(i + 1, close);
        if (set.startsWith("!") || set.startsWith("^")) set = `^${set.slice(1)}`;
        out += `[${set.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else out += escapeRegex(ch);
  }
  return out;
}

function escapeRegex(ch: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(ch) ? `\\${ch}` : ch;
}

/** `${value#pat}` (`largest` for `##`), `${value%pat}` (`suffix`; `%%` for largest). */
export function removeAffix(value: string, pattern: string, suffix: boolean, largest: boolean): string {
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${globSource(pattern)})$`);
  } catch {
    return value;
  }
  const lengths = [...Array(value.length + 1).keys()];
  if (largest) lengths.reverse();
  for (const n of lengths) {
    const part = suffix ? value.slice(value.length - n) : value.slice(0, n);
    if (re.test(part)) return suffix ? value.slice(0, value.length - n) : value.slice(n);
  }
  return value;
}

/** `${value/pat/with}` and `${value//pat/with}` (bash). */
export function replacePattern(value: string, pattern: string, replacement: string, all: boolean): string {
  try {
    const re = new RegExp(globSource(pattern), all ? "g" : "");
    return value.replace(re, () => replacement);
  } catch {
    return value;
  }
}

/** Whether a `case` pattern matches a known value. */
export function globMatches(value: string, pattern: string): boolean {
  try {
    return new RegExp(`^(?:${globSource(pattern)})$`).test(value);
  } catch {
    return true;
  }
}
