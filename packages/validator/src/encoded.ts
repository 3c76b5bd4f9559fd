/**
 * Text hidden in an encoding a model decodes on sight: base64 (and base64url), hex, percent-encoding
 * (`%49%67%6E...`), and runs of `\uXXXX`, `\xXX` or `&#...;` escapes. A listing's text is read with
 * every such run decoded beside it (agentText.ts), so an order that is only readable decoded is
 * judged like a visible one.
 *
 * Only runs long enough to hold a sentence are decoded (24 base64 characters, 32 hex digits, 3
 * percent escapes, 4 escapes of the others), and a decoded run is kept only when it is text: valid
 * UTF-8 with no control character but tab and newline, and letters in it. A hash, an encoded image
 * or an identifier that merely looks like base64 decodes to bytes that are not text, and is left out.
 * Everything here is linear in the text's length.
 */

const BASE64 = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const HEX = /(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Za-z])/g;
const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
const ESCAPES = /(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|&#[xX][0-9A-Fa-f]{1,6};|&#\d{1,7};){4,}/g;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The bytes as text, or undefined when they are not text a person could read. */
function asText(bytes: Uint8Array): string | undefined {
  let text: string | undefined;
  // A run cut inside a character (base64 of text in a language of several bytes a letter) decodes
  // once its last partial character is dropped.
  for (let cut = 0; cut < 4 && text === undefined && cut < bytes.length; cut++) {
    try {
      text = UTF8.decode(bytes.subarray(0, bytes.length - cut));
    } catch {
      // Try one byte shorter.
    }
  }
  if (text === undefined) return undefined;
  if (/[^\P{Cc}\t\n\r]/u.test(text) || !/\p{L}{2}/u.test(text)) return undefined;
  return text;
}

function base64Text(run: string): string | undefined {
  const body = run.replace(/=+$/, "");
  // Base64 of text mixes cases or digits; a long word or identifier of one case is not base64.
  if (!/[A-Z]/.test(body) || !/[a-z0-9]/.test(body)) return undefined;
  const bytes = Buffer.from(body.replaceAll("-", "+").replaceAll("_", "/"), "base64");
  return asText(bytes);
}

function escapesText(run: string): string | undefined {
  let out = "";
  for (const [one] of run.matchAll(/\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|&#[xX]?[0-9A-Fa-f]+;/g)) {
    const code = one.startsWith("&#")
      ? Number.parseInt(one.slice(/^&#[xX]/.test(one) ? 3 : 2, -1), /^&#[xX]/.test(one) ? 16 : 10)
      : Number.parseInt(one.slice(2), 16);
    if (code > 0x10ffff) return undefined;
    out += String.fromCodePoint(code);
  }
  return /[^\P{Cc}\t\n\r]/u.test(out) || !/\p{L}{2}/u.test(out) ? undefined : out;
}

/** The text with its percent-escaped bytes decoded, when it holds at least three escapes. */
function percentText(text: string): string | undefined {
  let count = 0;
  for (const match of text.matchAll(PERCENT_ESCAPES)) count += match[0].length / 3;
  if (count < 3) return undefined;
  const decoded = text.replace(PERCENT_ESCAPES, (run) => {
    const bytes = Uint8Array.from(run.slice(1).split("%"), (hex) => Number.parseInt(hex, 16));
    return new TextDecoder("utf-8").decode(bytes);
  });
  return asText(Buffer.from(decoded, "utf8"));
}

/** Every decoded run of one pass over the text, one a line. */
function decodeOnce(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(BASE64)) {
    const decoded = base64Text(run);
    if (decoded) out.push(decoded);
  }
  for (const [run] of text.matchAll(HEX)) {
    const decoded = asText(Buffer.from(run, "hex"));
    if (decoded) out.push(decoded);
  }
  for (const [run] of text.matchAll(ESCAPES)) {
    const decoded = escapesText(run);
    if (decoded) out.push(decoded);
  }
  const percent = percentText(text);
  if (percent) out.push(percent);
  return out;
}

/**
 * The text of every encoded run in `text`, decoded, one a line ("" when there is none); runs that
 * decode to another encoding are decoded once more.
 */
export function decodedText(text: string): string {
  const first = decodeOnce(text);
  if (first.length === 0) return "";
  const second = first.flatMap(decodeOnce);
  return [...first, ...second].join("\n");
}
