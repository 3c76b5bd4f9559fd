/**
 * Hidden text: characters that make what a person sees differ from what a model reads.
 *
 * - Smuggling, never legitimate in text: tag characters outside an emoji flag (invisible ASCII),
 *   runs of variation selectors (bytes encoded after a character), runs of zero-width characters
 *   (a binary code), and the bidi overrides LRO/RLO, which reorder what is shown (Trojan Source).
 * - Out of place, in metadata a server writes for the agent (tool, prompt and resource listings):
 *   any other invisible format character, unless its script uses it. Bidi marks, embeddings and
 *   isolates belong to text that holds right-to-left letters; ZWNJ and ZWJ to the scripts that
 *   join letters (Arabic, Syriac, the Indic scripts), ZWJ also to emoji; the zero-width space to
 *   scripts written without spaces (Thai, Lao, Khmer, Myanmar, CJK); a soft hyphen to a word.
 *
 * Smuggled text is decoded (tag characters to ASCII, variation selectors to bytes), so that the
 * instructions it carries are judged like visible ones.
 */

type HiddenKind = "tag" | "bidi-override" | "variation-run" | "invisible-run" | "invisible";

export interface HiddenFinding {
  kind: HiddenKind;
  /** The first offending character, as U+XXXX. */
  codePoint: string;
}

/** Emoji that legitimately carry format characters: ZWJ sequences and subdivision flags. */
const EMOJI_FORMAT =
  /(?<=\p{Extended_Pictographic}\uFE0F?[\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})|(?<=\u{1F3F4})[\u{E0061}-\u{E007A}]{2,7}\u{E007F}/gu;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const OVERRIDE = /[\u202D\u202E]/u;
/** Any character that can carry smuggled text. */
const SMUGGLING = /[\u{E0000}-\u{E007F}]|\p{Variation_Selector}/u;
const VARIATION_RUN = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2,}/u;
const LETTER_VARIATION = /[A-Za-z][\uFE00-\uFE0F]/u;
const INVISIBLE_RUN = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E]{4,}/u;
const FORMAT = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;
/** A right-to-left letter (a letter: the Arabic letter mark U+061C is of the Arabic script too). */
const RTL_LETTER =
  /(?=\p{L})[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}]/u;
const BIDI_CONTEXTUAL = /[\u200E\u200F\u061C\u202A-\u202C\u2066-\u2069]/u;
const JOINING =
  /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Mongolian}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u;
const SPACELESS =
  /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Tibetan}\p{Script=Javanese}\p{Script=Balinese}\u3000-\u303F\uFF00-\uFFEF]/u;
const LETTER = /[\p{L}\p{M}]/u;

const codePoint = (ch: string) => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** The text with the format characters of emoji sequences taken out. */
function withoutEmoji(text: string): string {
  return text.replace(EMOJI_FORMAT, "");
}

/** Whether an invisible character at `index` is in a place its script gives it. */
function inPlace(text: string, index: number, ch: string, rtl: boolean): boolean {
  const before = text.slice(Math.max(0, index - 2), index);
  const prev = [...before].at(-1) ?? "";
  const next = [...text.slice(index + ch.length, index + ch.length + 2)][0] ?? "";
  if (BIDI_CONTEXTUAL.test(ch)) return rtl;
  if (ch === "\u200C" || ch === "\u200D") return JOINING.test(prev) || JOINING.test(next);
  if (ch === "\u200B") return SPACELESS.test(prev) && SPACELESS.test(next);
  if (ch === "\u00AD") return LETTER.test(prev) && LETTER.test(next);
  if (ch === "\uFEFF") return index === 0;
  // Other Cf characters (Arabic number signs, ...) are visible prepended marks of RTL text.
  return rtl && !/[\u2060-\u2064\u180E\u115F\u1160\u3164\uFFA0\uFFF9-\uFFFB]/u.test(ch);
}

/**
 * The first hidden character of a text. `metadata` judges every invisible character by its place;
 * otherwise (a result, a resource, a prompt's messages: data that may quote anything) only
 * smuggling counts.
 */
export function findHidden(text: string, metadata: boolean): HiddenFinding | undefined {
  if (!/[\u00AD\u0600-\u{10FFFF}]/u.test(text)) return undefined;
  const clean = withoutEmoji(text);
  const tag = TAG.exec(clean);
  if (tag) return { kind: "tag", codePoint: codePoint(tag[0]) };
  const override = OVERRIDE.exec(clean);
  if (override) return { kind: "bidi-override", codePoint: codePoint(override[0]) };
  const variation = VARIATION_RUN.exec(clean);
  if (variation) return { kind: "variation-run", codePoint: codePoint(variation[0]) };
  const run = INVISIBLE_RUN.exec(clean);
  if (run) return { kind: "invisible-run", codePoint: codePoint(run[0]) };
  if (!metadata) return undefined;
  // A variation selector after a Latin letter: no letter of ASCII has a variant to select (a
  // selector after every letter of an order leaves it readable to the model, and to no filter).
  const selector = LETTER_VARIATION.exec(clean);
  if (selector) return { kind: "invisible", codePoint: codePoint(selector[0].slice(1)) };
  const rtl = RTL_LETTER.test(clean);
  for (const match of clean.matchAll(FORMAT)) {
    const ch = match[0];
    if (!inPlace(clean, match.index, ch, rtl)) return { kind: "invisible", codePoint: codePoint(ch) };
  }
  return undefined;
}

/**
 * Text smuggled in invisible characters, decoded: tag characters as ASCII, and variation
 * selectors as bytes (U+FE00-FE0F are 0-15, U+E0100-E01EF 16-255) read as UTF-8.
 */
export function smuggledText(text: string): string {
  if (!SMUGGLING.test(text)) return "";
  let tags = "";
  const bytes: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xe0020 && cp <= 0xe007e) tags += String.fromCharCode(cp - 0xe0000);
    else if (cp >= 0xfe00 && cp <= 0xfe0f) bytes.push(cp - 0xfe00);
    else if (cp >= 0xe0100 && cp <= 0xe01ef) bytes.push(cp - 0xe0100 + 16);
  }
  const decoded = bytes.length >= 2 ? Buffer.from(bytes).toString("utf8") : "";
  return [tags, decoded].filter(Boolean).join("\n");
}

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The text a model reads: every format character and every other code point that renders as
 * nothing (Default_Ignorable_Code_Point: variation selectors, the combining grapheme joiner, Hangul
 * fillers) removed, and smuggled text decoded after it (bytes that are no text left out).
 */
export function readable(text: string): string {
  const hidden = smuggledText(text).replace(/[^\P{Cc}\t\n\r]/gu, "");
  const visible = text.replace(FORMAT, "").replace(IGNORABLE, "");
  return hidden ? `${visible}\n${hidden}` : visible;
}

export function describeHidden(finding: HiddenFinding): string {
  switch (finding.kind) {
    case "tag":
      return `hides text in invisible tag characters (${finding.codePoint})`;
    case "bidi-override":
      return `reorders what is shown with a bidi override (${finding.codePoint})`;
    case "variation-run":
      return `hides bytes in a run of variation selectors (${finding.codePoint})`;
    case "invisible-run":
      return `hides a code in a run of zero-width characters (${finding.codePoint})`;
    default:
      return `holds an invisible character where its script has no use for it (${finding.codePoint})`;
  }
}
