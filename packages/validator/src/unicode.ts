/**
 * Unicode tricks. Invisible format characters (zero-width, bidi controls, tag characters) make a
 * string read differently from what a program receives; a NUL byte truncates it in C APIs; and
 * compatibility characters (full-width `．／`) or homoglyphs (Cyrillic `е`) pass for path, shell or
 * SQL syntax and Latin letters. Structured arguments are checked on their NFKC form, the form any
 * normalising component downstream would see.
 */
import type { Finding, Scope } from "./context.js";

const NON_ASCII = /[\u0080-\u{10FFFF}]/u;
/** Format characters, plus the Hangul fillers that render as nothing. */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/u;
/** Emoji that legitimately carry format characters: ZWJ sequences and subdivision flags. */
const EMOJI_FORMAT =
  /(?<=\p{Extended_Pictographic}\uFE0F?[\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})|(?<=\u{1F3F4})[\u{E0061}-\u{E007A}]{2,7}\u{E007F}/gu;
/** ASCII characters that carry structure in paths, shells, URLs and SQL. */
const STRUCTURE = /[/\\.$`;|&<>()'"~%]/;
const WORDS = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const NOT_LATIN = /(?!\p{Script=Latin})\p{L}/u;

const codePoint = (ch: string) => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** The NFKC form, computed only when there is something to fold. */
export function fold(value: string): string {
  return NON_ASCII.test(value) ? value.normalize("NFKC") : value;
}

/** The first invisible character that is not part of an emoji sequence. */
function firstInvisible(value: string): string | undefined {
  if (!INVISIBLE.test(value)) return undefined;
  return INVISIBLE.exec(value.replace(EMOJI_FORMAT, ""))?.[0];
}

export function checkInvisible(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.unicode.invisible")) return undefined;
  const ch = firstInvisible(value);
  if (ch === undefined) return undefined;
  return scope.finding("l2.unicode.invisible", `contains an invisible format character (${codePoint(ch)})`);
}

export function checkNul(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.nul") || !value.includes("\0")) return undefined;
  return scope.finding("l2.nul", "contains a NUL byte");
}

/** Characters that fold into ASCII syntax, or words that mix Latin with look-alike letters. */
export function checkConfusable(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.unicode.confusable") || !NON_ASCII.test(value)) return undefined;
  for (const ch of value) {
    if (ch.charCodeAt(0) < 0x80) continue;
    const folded = ch.normalize("NFKC");
    if (folded !== ch && STRUCTURE.test(folded)) {
      return scope.finding(
        "l2.unicode.confusable",
        `contains ${codePoint(ch)}, which Unicode folding turns into "${folded}"`,
      );
    }
  }
  for (const word of value.normalize("NFKC").match(WORDS) ?? []) {
    if (LATIN.test(word) && NOT_LATIN.test(word)) {
      return scope.finding(
        "l2.unicode.confusable",
        "mixes Latin letters with look-alike letters of another script in one word",
      );
    }
  }
  return undefined;
}
