/**
 * One pass over a frame's bytes before it is decoded: how deep its JSON nests, and whether it holds
 * a byte that some reader takes for a line break.
 *
 * - Nesting: `JSON.parse` survives any depth, but every recursive walk after it (and
 *   `JSON.stringify`) overflows the stack somewhere past a few thousand levels, and a 64 MiB line
 *   of `[` would build millions of arrays. The scan counts brackets outside strings and stops at the
 *   first one past the limit, so a frame is refused before anything is built from it.
 * - A bare CR (0x0D anywhere but right before the LF, which the framer already removed) ends a
 *   line for readers with universal newlines (Python text I/O), so one JSON line to us would be
 *   several messages to the server. CR is legal JSON whitespace outside strings.
 * - U+2028, U+2029 and U+0085 are legal raw inside JSON strings and are line breaks for other
 *   readers (`str.splitlines`). They are forwarded only escaped ({@link escapeLineSeparators}).
 *
 * Strings are skipped with `indexOf`, so the cost is a memchr over string bytes and a byte loop over
 * the structure between them.
 */

/** Nesting deeper than the limit: the scan stopped there. */
export const SCAN_TOO_DEEP = 1;
/** A CR that is not part of the line terminator: the scan stopped there. */
export const SCAN_BARE_CR = 2;
/** A raw U+2028, U+2029 or U+0085 somewhere before the scan stopped. */
export const SCAN_LINE_SEPARATOR = 4;

/** Objects and arrays may nest this deep by default; the deepest real MCP traffic we found is 9. */
export const DEFAULT_MAX_DEPTH = 128;
/** The largest `--max-depth` accepted: well below where V8's own recursion (JSON.stringify) gives out. */
export const MAX_DEPTH_LIMIT = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CR = 0x0d;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** Whether the quote at `at` is escaped: preceded by an odd run of backslashes. */
function escapedAt(bytes: Uint8Array, at: number, from: number): boolean {
  let run = 0;
  for (let i = at - 1; i >= from && bytes[i] === BACKSLASH; i--) run++;
  return (run & 1) === 1;
}

/** Index just past the string whose opening quote is at `open`, searching from `from`; -1 when it never closes. */
function skipString(body: Buffer, open: number, from = open + 1): number {
  let at = from;
  for (;;) {
    const quote = body.indexOf(QUOTE, at);
    if (quote === -1) return -1;
    if (!escapedAt(body, quote, open + 1)) return quote + 1;
    at = quote + 1;
  }
}

/** How far a string is read byte by byte before the rest of it is searched with indexOf. */
const SHORT_STRING = 32;

/**
 * The `SCAN_*` flags of one frame body (without its line terminator); 0 for the common case.
 * Invalid JSON may scan clean: the decoder refuses it after.
 */
export function scanFrame(body: Buffer, maxDepth: number): number {
  // A CR anywhere is refused whatever else the line holds; memchr finds it fastest.
  if (body.indexOf(CR) !== -1) return SCAN_BARE_CR;
  const flags = hasLineSeparator(body) ? SCAN_LINE_SEPARATOR : 0;
  let depth = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const b = body[i] as number;
    if (b === QUOTE) {
      // Short strings (keys, most values) are read inline; a long one is skipped with indexOf.
      let j = i + 1;
      const stop = Math.min(n, j + SHORT_STRING);
      while (j < stop) {
        const c = body[j] as number;
        if (c === QUOTE) break;
        j += c === BACKSLASH ? 2 : 1;
      }
      if (j >= stop) {
        j = j >= n ? -1 : skipString(body, i, j) - 1;
        if (j < 0) return flags;
      }
      i = j;
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > maxDepth) return flags | SCAN_TOO_DEEP;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      depth--;
    }
  }
  return flags;
}

const LINE_SEPARATOR = Buffer.from("\u2028");
const PARAGRAPH_SEPARATOR = Buffer.from("\u2029");
const NEXT_LINE = Buffer.from("\u0085");

/**
 * Whether the bytes hold U+2028 (E2 80 A8), U+2029 (E2 80 A9) or U+0085 (C2 85). In UTF-8 these
 * sequences mean nothing else, so three native searches answer it.
 */
function hasLineSeparator(body: Buffer): boolean {
  // Most messages hold neither lead byte: one memchr each settles it.
  const e2 = body.indexOf(0xe2);
  if (
    e2 !== -1 &&
    (body.indexOf(LINE_SEPARATOR, e2) !== -1 || body.indexOf(PARAGRAPH_SEPARATOR, e2) !== -1)
  ) {
    return true;
  }
  const c2 = body.indexOf(0xc2);
  return c2 !== -1 && body.indexOf(NEXT_LINE, c2) !== -1;
}

const ESCAPES: Readonly<Record<number, Buffer>> = {
  168: Buffer.from("\\u2028"),
  169: Buffer.from("\\u2029"),
  133: Buffer.from("\\u0085"),
};

/**
 * The frame with every raw U+2028, U+2029 and U+0085 written as a JSON escape. In valid JSON they
 * can only stand inside strings, where the escape means the same character: the message is the
 * same to a JSON reader, and one line to every line reader. Every other byte is kept.
 */
export function escapeLineSeparators(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    const seq =
      b === 0xe2 && raw[i + 1] === 0x80 && (raw[i + 2] === 0xa8 || raw[i + 2] === 0xa9)
        ? 3
        : b === 0xc2 && raw[i + 1] === 0x85
          ? 2
          : 0;
    if (seq === 0) continue;
    parts.push(raw.subarray(start, i), ESCAPES[raw[i + seq - 1] as number] as Buffer);
    start = i + seq;
    i += seq - 1;
  }
  if (parts.length === 0) return raw;
  parts.push(raw.subarray(start));
  return Buffer.concat(parts);
}

/**
 * Whether JSON text nests deeper than `maxDepth` (the same count as {@link scanFrame}, on a
 * string): checked before parsing JSON found inside a result's text.
 */
export function textTooDeep(text: string, maxDepth: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let at = i + 1;
      for (;;) {
        const quote = text.indexOf('"', at);
        if (quote === -1) return false;
        let run = 0;
        for (let j = quote - 1; j > i && text.charCodeAt(j) === BACKSLASH; j--) run++;
        at = quote + 1;
        if ((run & 1) === 0) break;
      }
      i = at - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === CR;

/** Index just past the value that starts at `at` (nested values skipped by counting brackets), or -1. */
function skipValue(body: Buffer, at: number): number {
  let depth = 0;
  for (let i = at; i < body.length; i++) {
    const b = body[i] as number;
    if (b === QUOTE) {
      i = skipString(body, i) - 1;
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
    else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (b === 0x2c || isSpace(b))) return i;
  }
  return depth === 0 ? body.length : -1;
}

/**
 * The `id` of a message that cannot be decoded whole (nested too deep, holding a bare CR), read
 * from the top level of its object without building anything nested: so the client's error names
 * its request. Null when the frame is not an object or its id is not a string or a number.
 */
export function recoverId(body: Buffer): string | number | null {
  let i = 0;
  const skipSpace = () => {
    while (isSpace(body[i])) i++;
  };
  skipSpace();
  if (body[i] !== OPEN_OBJECT) return null;
  i++;
  let id: string | number | null = null;
  for (;;) {
    skipSpace();
    if (body[i] !== QUOTE) return id;
    const keyEnd = skipString(body, i);
    if (keyEnd === -1) return id;
    // `"id"` may be spelled with escapes (`"\u0069d"`), as JSON.parse reads it.
    const isIdKey = keyEnd - i <= 32 && idValue(body.subarray(i, keyEnd)) === "id";
    i = keyEnd;
    skipSpace();
    if (body[i] !== 0x3a) return id;
    i++;
    skipSpace();
    const valueEnd = skipValue(body, i);
    if (valueEnd === -1) return id;
    if (isIdKey) id = idValue(body.subarray(i, valueEnd));
    i = valueEnd;
    skipSpace();
    if (body[i] !== 0x2c) return id;
    i++;
  }
}

function idValue(bytes: Buffer): string | number | null {
  if (bytes.length > 1024) return null;
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))) return value;
  } catch {
    // Not a JSON value: no id.
  }
  return null;
}
