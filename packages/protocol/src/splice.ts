/**
 * A changed JSON value written as the text it came from: every byte of the original text is kept
 * (whitespace, key order, escapes, number spellings) but where the new value differs, and there
 * only what differs is written anew. A string that changed keeps its own escapes around the spans
 * that changed; an object or an array whose members were added or removed is written anew around
 * its members, each of which is still written from the original where it can be.
 *
 * The result always reads (`JSON.parse`) as the new value: a span of the original is reused only
 * where it reads as the very value it stands for. That holds when no object of the original text
 * has a key twice (`JSON.parse` keeps the last, another reader the first): callers check with
 * {@link hasDuplicateKey} and write such a text anew.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface SpliceOptions {
  /**
   * Texts a change may have put into a string (a redaction's marker): a changed string is aligned
   * on them with its original, so that only the replaced spans are written anew and the text
   * between two of them keeps its escapes. Without them (or where they do not explain the change),
   * the string is kept up to its first and from its last difference.
   */
  inserted?: readonly string[];
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string whose opening quote is at `open`. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) throw new SyntaxError("unterminated string in JSON text");
    let run = 0;
    for (let i = quote - 1; i > open && text.charCodeAt(i) === BACKSLASH; i--) run++;
    if ((run & 1) === 0) return quote + 1;
    at = quote + 1;
  }
}

/** Index just past the value that starts at `at` (no space before it). */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    let i = at;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i) - 1;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return i + 1;
  }
  throw new SyntaxError("unterminated value in JSON text");
}

/** A JSON string literal (quotes included) as its string; anything else is a bug of the scanner. */
function stringLiteral(literal: string): string {
  const value: unknown = JSON.parse(literal);
  if (typeof value !== "string") throw new SyntaxError("a key that is not a JSON string");
  return value;
}

/** A key's string: read as JSON only when it holds an escape. */
const keyOf = (literal: string): string =>
  literal.includes("\\") ? stringLiteral(literal) : literal.slice(1, -1);

interface Member {
  key: string;
  start: number;
  end: number;
}

/** The members of the object whose `{` is at `open`, and the index just past its `}`. */
function members(text: string, open: number): { items: Member[]; end: number } {
  const items: Member[] = [];
  let i = skipSpace(text, open + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return { items, end: i + 1 };
  for (;;) {
    const keyEnd = stringEnd(text, i);
    const key = keyOf(text.slice(i, keyEnd));
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new SyntaxError("expected a colon in JSON text");
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    items.push({ key, start, end });
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === CLOSE_OBJECT) return { items, end: i + 1 };
    if (text.charCodeAt(i) !== COMMA) throw new SyntaxError("expected a comma in JSON text");
    i = skipSpace(text, i + 1);
  }
}

/** The elements of the array whose `[` is at `open`, and the index just past its `]`. */
function elements(text: string, open: number): { items: [number, number][]; end: number } {
  const items: [number, number][] = [];
  let i = skipSpace(text, open + 1);
  if (text.charCodeAt(i) === CLOSE_ARRAY) return { items, end: i + 1 };
  for (;;) {
    const end = valueEnd(text, i);
    items.push([i, end]);
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === CLOSE_ARRAY) return { items, end: i + 1 };
    if (text.charCodeAt(i) !== COMMA) throw new SyntaxError("expected a comma in JSON text");
    i = skipSpace(text, i + 1);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A value written anew, as JSON.stringify writes it (undefined as null, as in an array). */
const encode = (value: unknown): string => JSON.stringify(value) ?? "null";

class Splicer {
  readonly out: string[] = [];
  constructor(
    readonly text: string,
    readonly inserted: readonly string[],
  ) {}

  /** Write `after` for the value of the text at `start` (which reads as `before`); its end. */
  value(start: number, before: unknown, after: unknown): number {
    const { text, out } = this;
    if (before === after) {
      const end = valueEnd(text, start);
      out.push(text.slice(start, end));
      return end;
    }
    if (typeof before === "string" && typeof after === "string") {
      const end = stringEnd(text, start);
      out.push(spliceString(text.slice(start, end), before, after, this.inserted));
      return end;
    }
    if (isObject(before) && isObject(after)) return this.#object(start, before, after);
    if (Array.isArray(before) && Array.isArray(after)) return this.#array(start, before, after);
    out.push(encode(after));
    return valueEnd(text, start);
  }

  #object(start: number, before: Record<string, unknown>, after: Record<string, unknown>): number {
    const { text, out } = this;
    const { items, end } = members(text, start);
    const keys = Object.keys(after);
    const same =
      items.length === keys.length &&
      items.every((m) => Object.hasOwn(after, m.key) && after[m.key] !== undefined);
    if (same) {
      // The same keys (in the original's order): every byte between the values is kept.
      let at = start;
      for (const m of items) {
        out.push(text.slice(at, m.start));
        this.value(m.start, before[m.key], after[m.key]);
        at = m.end;
      }
      out.push(text.slice(at, end));
      return end;
    }
    const byKey = new Map(items.map((m) => [m.key, m]));
    out.push("{");
    let first = true;
    for (const key of keys) {
      const value = after[key];
      if (value === undefined) continue;
      out.push(first ? "" : ",", JSON.stringify(key), ":");
      first = false;
      const m = byKey.get(key);
      if (m && Object.hasOwn(before, key)) this.value(m.start, before[key], value);
      else out.push(encode(value));
    }
    out.push("}");
    return end;
  }

  #array(start: number, before: unknown[], after: unknown[]): number {
    const { text, out } = this;
    const { items, end } = elements(text, start);
    if (items.length === after.length && items.length === before.length) {
      let at = start;
      for (let k = 0; k < items.length; k++) {
        const [s, e] = items[k] as [number, number];
        out.push(text.slice(at, s));
        this.value(s, before[k], after[k]);
        at = e;
      }
      out.push(text.slice(at, end));
      return end;
    }
    // Elements added or removed: each new one written from the original element it is (the same
    // object), else from the next original element not used yet, else anew.
    out.push("[");
    let next = 0;
    for (let k = 0; k < after.length; k++) {
      if (k > 0) out.push(",");
      const value = after[k];
      let j = next;
      while (j < before.length && before[j] !== value) j++;
      if (j === before.length) j = next < before.length && typeof value === "object" ? next : -1;
      if (j === -1 || items[j] === undefined) {
        out.push(encode(value));
        continue;
      }
      this.value((items[j] as [number, number])[0], before[j], value);
      next = j + 1;
    }
    out.push("]");
    return end;
  }
}

/**
 * `after` written as `text` (whose JSON reads as `before`) wherever the two agree: the bytes of the
 * text outside the values that changed are kept. Returns `text` itself when nothing changed.
 */
export function spliceJson(
  text: string,
  before: unknown,
  after: unknown,
  options: SpliceOptions = {},
): string {
  if (before === after) return text;
  const splicer = new Splicer(text, options.inserted ?? []);
  const start = skipSpace(text, 0);
  const end = splicer.value(start, before, after);
  return `${text.slice(0, start)}${splicer.out.join("")}${text.slice(end)}`;
}

/** A run of `before` kept, or a span of it replaced by a span of `after`: [before, after) ranges. */
type Edit = [beforeStart: number, beforeEnd: number, afterStart: number, afterEnd: number];

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** How far after an inserted text the original is looked for again. */
const ANCHOR = 32;

/**
 * The spans of `before` that `after` replaced, in order: where `after` differs, an inserted text
 * (see {@link SpliceOptions.inserted}) that covers the difference is found, and `before` is taken
 * up again where the text that follows it is found; what no inserted text explains is one span
 * from the first difference left to the last. Every span between two edits is the same in both.
 * No edit starts or ends between the two halves of a surrogate pair.
 */
export function alignEdits(before: string, after: string, inserted: readonly string[] = []): Edit[] {
  const edits: Edit[] = [];
  const n = before.length;
  const m = after.length;
  let i = 0;
  let j = 0;
  /** Where the last edit ended in `after`: an inserted text is not looked for before it. */
  let floor = 0;
  const longest = inserted.reduce((max, text) => Math.max(max, text.length), 0);
  /** Where the last inserted text in `after` starts: past it, what is left of `after` is kept. */
  const last = inserted.reduce((max, text) => (text ? Math.max(max, after.lastIndexOf(text)) : max), -1);
  for (;;) {
    const run = i;
    while (i < n && j < m && before.charCodeAt(i) === after.charCodeAt(j)) {
      i++;
      j++;
    }
    if (i === n && j === m) return edits;
    // A difference in the second half of a pair: the pair is part of the edit.
    if (i > run && isHigh(before.charCodeAt(i - 1))) {
      i--;
      j--;
    }
    // The inserted text that covers `after` at j: it may start before j, where both agreed.
    let start = -1;
    let end = -1;
    for (const text of inserted) {
      if (text.length === 0) continue;
      for (let s = Math.max(floor, j - text.length + 1); s <= j; s++) {
        if (
          after.startsWith(text, s) &&
          (start === -1 || s < start || (s === start && s + text.length > end))
        ) {
          start = s;
          end = s + text.length;
          break;
        }
      }
    }
    if (start === -1) break;
    // Texts inserted side by side are one edit.
    for (let more = true; more; ) {
      more = false;
      for (const text of inserted) {
        if (text.length > 0 && after.startsWith(text, end)) {
          end += text.length;
          more = true;
        }
      }
    }
    const from = i - (j - start);
    if (end === m) {
      edits.push([from, n, start, m]);
      return edits;
    }
    // `before` goes on where the text after the inserted one is found (up to the next inserted one):
    // at its end when it ends with all that is left, else where that text first comes again.
    const tail = m - end;
    if (end > last && n - tail >= from && before.endsWith(after.slice(end))) {
      edits.push([from, n - tail, start, end]);
      return edits;
    }
    const window = after.slice(end, end + ANCHOR + longest);
    let cut = Math.min(ANCHOR, window.length);
    for (const text of inserted) {
      const at = text.length > 0 ? window.indexOf(text) : -1;
      if (at !== -1 && at < cut) cut = at;
    }
    const resume = before.indexOf(window.slice(0, cut), from);
    if (resume === -1) {
      i = from;
      j = start;
      break;
    }
    edits.push([from, resume, start, end]);
    i = resume;
    j = end;
    floor = end;
  }
  // What is left: kept from its last difference on.
  let q = 0;
  while (q < n - i && q < m - j && before.charCodeAt(n - 1 - q) === after.charCodeAt(m - 1 - q)) q++;
  if (q > 0 && isLow(before.charCodeAt(n - q))) q--;
  edits.push([i, n - q, j, m - q]);
  return edits;
}

const NON_ASCII = /[\u0080-\uffff]/g;
const HAS_NON_ASCII = /[\u0080-\uffff]/;
const UNICODE_ESCAPE = /\\u[0-9a-fA-F]{4}/;
const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * The string literal `literal` (quotes included, reading as `before`) changed to read as `after`:
 * its characters and escapes kept outside the spans that changed ({@link alignEdits}), the new
 * spans escaped as the literal escapes (non-ASCII as `\uXXXX` in a literal that holds no raw
 * non-ASCII but an escape, `/` as `\/` in one that escapes it).
 */
export function spliceString(
  literal: string,
  before: string,
  after: string,
  inserted: readonly string[] = [],
): string {
  if (before === after) return literal;
  const asciiOnly = !HAS_NON_ASCII.test(literal) && UNICODE_ESCAPE.test(literal);
  const slashes = literal.includes("\\/");
  const written = (text: string) => {
    let out = JSON.stringify(text).slice(1, -1);
    if (asciiOnly) out = out.replace(NON_ASCII, escapeUnit);
    if (slashes) out = out.replaceAll("/", "\\/");
    return out;
  };
  // The literal's index for each position of `before`, walked forwards once.
  let raw = 1;
  let decoded = 0;
  const rawAt = (target: number): number => {
    while (decoded < target) {
      raw += literal.charCodeAt(raw) !== BACKSLASH ? 1 : literal.charCodeAt(raw + 1) === 0x75 ? 6 : 2;
      decoded++;
    }
    return raw;
  };
  const parts: string[] = ['"'];
  let kept = 1;
  for (const [bs, be, as, ae] of alignEdits(before, after, inserted)) {
    const from = rawAt(bs);
    parts.push(literal.slice(kept, from), written(after.slice(as, ae)));
    kept = rawAt(be);
  }
  parts.push(literal.slice(kept));
  return parts.join("");
}

/**
 * Whether an object in the JSON text has a key twice (spelled alike or not: `"a"` and `"\u0061"`
 * are one key). Readers disagree on which one counts, so such a text is written anew, never
 * spliced. Strings are skipped with `indexOf`, as in `scanFrame`.
 */
export function hasDuplicateKey(body: Buffer): boolean {
  // Per open container: undefined for an array, else the object's keys so far (a first key alone
  // as a string, a set from the second on).
  const stack: (Set<string> | string | null | undefined)[] = [];
  let expectKey = false;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const b = body[i] as number;
    if (b === QUOTE) {
      let end = i + 1;
      for (;;) {
        const quote = body.indexOf(QUOTE, end);
        if (quote === -1) return false;
        let run = 0;
        for (let k = quote - 1; k > i && body[k] === BACKSLASH; k--) run++;
        end = quote + 1;
        if ((run & 1) === 0) break;
      }
      if (expectKey) {
        expectKey = false;
        // A key as its UTF-8 bytes (one character per byte): escapes read first.
        const rawKey = body.toString("latin1", i + 1, end - 1);
        const key = rawKey.includes("\\")
          ? Buffer.from(stringLiteral(body.toString("utf8", i, end))).toString("latin1")
          : rawKey;
        const top = stack.length - 1;
        const seen = stack[top];
        if (seen === null) stack[top] = key;
        else if (typeof seen === "string") {
          if (seen === key) return true;
          stack[top] = new Set([seen, key]);
        } else if (seen !== undefined) {
          if (seen.has(key)) return true;
          seen.add(key);
        }
      }
      i = end - 1;
    } else if (b === OPEN_OBJECT) {
      stack.push(null);
      expectKey = true;
    } else if (b === OPEN_ARRAY) {
      stack.push(undefined);
      expectKey = false;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      stack.pop();
      expectKey = false;
    } else if (b === COMMA) {
      expectKey = stack.length > 0 && stack[stack.length - 1] !== undefined;
    }
  }
  return false;
}
