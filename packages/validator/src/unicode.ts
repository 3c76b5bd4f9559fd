/**
 * Unicode tricks. Invisible format characters (zero-width, bidi controls, tag characters) make a
 * string read differently from what a program receives; a NUL byte truncates it in C APIs; and
 * compatibility characters (full-width `．／`) or homoglyphs (Cyrillic `е`) pass for path, shell or
 * SQL syntax and Latin letters. Structured arguments are checked on their NFKC form, the form any
 * normalising component downstream would see.
 *
 * Precision: writing systems use some of these characters as a matter of course, and an argument
 * that holds ordinary text in them is not refused.
 * - An invisible character is judged by its place, as in a server's listings (`hidden.ts`): ZWNJ
 *   and ZWJ beside letters of a script that joins them (Persian, Hindi, Malayalam), the zero-width
 *   space between letters of a script written without spaces (Thai, CJK), bidi marks in text that
 *   holds right-to-left letters; in free text also a soft hyphen inside a word and a byte order mark
 *   at the start. Tag characters, bidi overrides, embeddings and isolates (they reorder what is
 *   shown) and runs of zero-width characters never pass.
 *   A structured argument (path, command, SQL, identifier, key, URL) takes only the joiners, the
 *   zero-width space and the bidi marks, in place.
 * - A full-width or ideographic form (U+3000-303F, U+FF00-FFEF) in a string that holds CJK letters
 *   is how CJK text is typed (`会議（東京）`, `１００％`), not a disguise, unless outside a path it folds
 *   into a quote, an escape or a comment mark, which would make the role's checks (reading the
 *   folded form) see raw syntax as quoted. The ellipsis folds to three dots, which are no syntax.
 *   Elsewhere a character that folds into ASCII syntax is refused.
 * - A word that mixes Latin with Greek letters that resemble no Latin letter (`150µs`, `10kΩ`,
 *   `ΔT`) is a unit or a formula, not a disguised Latin word.
 */
import type { Finding, Scope } from "./context.js";
import { describeHidden, findHidden } from "./hidden.js";

const NON_ASCII = /[\u0080-\u{10FFFF}]/u;
/** Format characters, plus the Hangul fillers that render as nothing. */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/u;
const INVISIBLE_ALL = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;
/** Emoji that legitimately carry format characters: ZWJ sequences and subdivision flags. */
const EMOJI_FORMAT =
  /(?<=\p{Extended_Pictographic}\uFE0F?[\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})|(?<=\u{1F3F4})[\u{E0061}-\u{E007A}]{2,7}\u{E007F}/gu;
/** The invisible characters a structured argument may hold where its script uses them. */
const STRUCTURED_IN_PLACE = /^[\u200B-\u200F\u061C]$/u;
/** ASCII characters that carry structure in paths, shells, URLs and SQL (`#` and `-` begin comments). */
const STRUCTURE = /[/\\.$`;|&<>()'"~%#-]/;
/**
 * What a fold may not give even in CJK text, outside paths: quotes, escapes and comment marks. The
 * role's checks read the folded string and the shell or database the raw one, so a fold into one of
 * these would make the checks read raw syntax as quoted or commented out (`echo ＂日; cat .env #＂`).
 */
const HIDING = /['"`\\#*/-]/;
/** A bidi embedding or isolate: it reorders what is shown (Trojan Source), in any argument. */
const BIDI_REORDER = /[\u202A-\u202C\u2066-\u2069]/u;
/** What a fold into dots alone may give and still be no syntax: the ellipsis's three. */
const HARMLESS_DOTS = /^\.{3,}$/;
/** Full-width and ideographic forms: CJK text's own punctuation and digits. */
const CJK_FORM = /^[\u3000-\u303F\uFF00-\uFFEF]$/u;
const CJK_LETTER =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u;
const WORDS = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
/**
 * A letter of another script than Latin, other than the Greek letters that resemble no Latin
 * letter (used as units and symbols: µ Ω Δ λ π σ θ φ ψ ...). Greek letters shaped like Latin ones
 * (Α Β Ε Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ Ζ, α β γ ι κ ν ο ρ ς τ υ χ ω ...) still count.
 */
const LOOKALIKE_CANDIDATE =
  /(?![\p{Script=Latin}\u0393\u0394\u0398\u039B\u039E\u03A0\u03A3\u03A6\u03A8\u03A9\u03B4\u03B8\u03BB\u03BC\u03BE\u03C0\u03C3\u03C6\u03C8])\p{L}/u;

const codePoint = (ch: string) => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** The NFKC form, computed only when there is something to fold. */
export function fold(value: string): string {
  return NON_ASCII.test(value) ? value.normalize("NFKC") : value;
}

/**
 * Why `value` holds an invisible character it should not, or undefined. `structured`: the argument
 * is read as syntax (path, command, SQL, identifier, key, URL), not free text.
 */
function invisibleProblem(value: string, structured: boolean): string | undefined {
  if (!INVISIBLE.test(value)) return undefined;
  const reorder = BIDI_REORDER.exec(value);
  if (reorder) return `reorders what is shown with a bidi embedding or isolate (${codePoint(reorder[0])})`;
  const hidden = findHidden(value, true);
  if (hidden) {
    return hidden.kind === "invisible"
      ? `contains an invisible format character (${hidden.codePoint}) where its script has no use for it`
      : describeHidden(hidden);
  }
  if (!structured) return undefined;
  for (const [ch] of value.replace(EMOJI_FORMAT, "").matchAll(INVISIBLE_ALL)) {
    if (!STRUCTURED_IN_PLACE.test(ch)) return `contains an invisible format character (${codePoint(ch)})`;
  }
  return undefined;
}

export function checkInvisible(value: string, scope: Scope, structured = true): Finding | undefined {
  if (!scope.on("l2.unicode.invisible")) return undefined;
  const problem = invisibleProblem(value, structured);
  return problem === undefined ? undefined : scope.finding("l2.unicode.invisible", problem);
}

export function checkNul(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.nul") || !value.includes("\0")) return undefined;
  return scope.finding("l2.nul", "contains a NUL byte");
}

/** Whether `ch`, which folds to `folded`, passes for ASCII syntax in `value`. */
function foldsIntoSyntax(ch: string, folded: string, cjkText: boolean, path: boolean): boolean {
  if (folded === ch || !STRUCTURE.test(folded) || HARMLESS_DOTS.test(folded)) return false;
  return !(cjkText && CJK_FORM.test(ch) && (path || !HIDING.test(folded)));
}

/**
 * Characters that fold into ASCII syntax, or words that mix Latin with look-alike letters. `path`:
 * the argument is a path, where no fold can quote or comment anything out.
 */
export function checkConfusable(value: string, scope: Scope, path = false): Finding | undefined {
  if (!scope.on("l2.unicode.confusable") || !NON_ASCII.test(value)) return undefined;
  let cjkText: boolean | undefined;
  for (const ch of value) {
    if (ch.charCodeAt(0) < 0x80) continue;
    const folded = ch.normalize("NFKC");
    if (folded === ch) continue;
    cjkText ??= CJK_LETTER.test(value);
    if (foldsIntoSyntax(ch, folded, cjkText, path)) {
      return scope.finding(
        "l2.unicode.confusable",
        `contains ${codePoint(ch)}, which Unicode folding turns into "${folded}"`,
      );
    }
  }
  for (const word of value.normalize("NFKC").match(WORDS) ?? []) {
    if (LATIN.test(word) && LOOKALIKE_CANDIDATE.test(word)) {
      return scope.finding(
        "l2.unicode.confusable",
        "mixes Latin letters with look-alike letters of another script in one word",
      );
    }
  }
  return undefined;
}
