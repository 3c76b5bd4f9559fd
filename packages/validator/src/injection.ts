/**
 * Prompt-injection markers: text that addresses the agent rather than the user, the way a poisoned
 * tool result or argument tries to take over the conversation ("ignore previous instructions",
 * fake role tags, orders to keep something from the user). Matched case-insensitively on the NFKC
 * form with format characters removed, so full-width letters and zero-width splits do not hide one.
 * Arguments carrying a marker are refused; in results, the paragraph carrying it is removed, and so
 * is a paragraph that gives orders to "the AI" reading it (`addressesAgent`).
 */
import type { Finding, Scope } from "./context.js";
import { fold } from "./unicode.js";

const MARKERS: readonly RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\b[\s,]+(?:(?:all|any|the|your|of|my|these|those)\s+){0,3}(?:previous|prior|above|earlier|preceding|foregoing|original)\s+(?:instructions?|prompts?|directions?|directives?|rules|guidelines|commands|context|messages?)\b/i,
  /\[\s*\/?\s*(?:system|inst)\s*\]/i,
  /<\s*\/?\s*system\s*>/i,
  /<\|\s*(?:im_start|im_end|system|endoftext)\s*\|>/i,
  /<<\s*\/?\s*sys\s*>>/i,
  /^[ \t]*#{3,}[ \t]*(?:system[ \t]*:?[ \t]*$|(?:system|instructions?)[ \t]*:)/im,
  // A new role or mode for the model ("you are now DAN", "... in developer mode", "... an unrestricted
  // AI", "... a rogue shell"), not a person's ("you are now the release manager", "... an admin of
  // the group", "you are now in the waiting room").
  /\byou\s+are\s+now\s+(?:(?:acting|operating|free|unrestricted|unfiltered|uncensored|jailbroken|dan|no\s+longer)\b|in\s+(?:[\w-]+\s+){0,2}mode\b|(?:a|an|the|my)\s+(?:[\w-]+\s+){0,3}(?:ai|assistant|agent|model|bot|chatbot|llm|persona)\b|(?:a|an|the|my)\s+(?:[\w-]+\s+){0,2}(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|malicious|unbound|unaligned|amoral)\b)/i,
  /\bnew\s+instructions?\s*:/i,
  // What is kept from the user is this text or the agent's doing ("do not mention this to the
  // user"), never a value ("never show the password to the user" is a security tool's rule).
  /\b(?:do\s+not|don't|never)\s+(?:tell|mention|inform|reveal|show|alert|notify|disclose)\s+(?:(?:this|that|it|these|those|anything|about)\b[^.!?\n]{0,60}?\bthe\s+user\b|(?:to\s+)?the\s+user\b)/i,
  /\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b/i,
];
/** All markers in one pattern, tried in one pass (none but the `###` marker uses `^` or `$`). */
const ANY_MARKER = new RegExp(MARKERS.map((m) => `(?:${m.source})`).join("|"), "im");
/** Format characters, and the combining grapheme joiner, which renders as nothing too. */
const FORMAT = /\p{Cf}|\u034F/gu;
const NON_ASCII = /[\u0080-\u{10FFFF}]/u;
/** Text addressed to a model rather than to a reader ("note to the AI", "if you are an assistant"). */
const ADDRESSED =
  /\b(?:if|when) you(?:'re| are) (?:an? )?(?:ai|llm|language model|large language model|assistant|ai assistant|agent|ai agent|chatbot|model)\b|\b(?:note|message|instructions?|attention|reminder|notice) (?:to|for) (?:the |any |all |an? )?(?:ai|llm|assistant|agent|language model|ai assistant|ai agent|claude|chatgpt|gpt|copilot|gemini|model)s?\b|\b(?:ai|llm) (?:assistants?|agents?|models?)(?: that (?:are|is))? (?:reading|processing|parsing|summari[sz]ing|seeing|handling|analy[sz]ing) this\b|^[ \t]*(?:dear|hey|attention|hello|hi),?\s+(?:ai|assistant|agent|claude|chatgpt|model|llm)\b/im;
/** An order to whoever reads it. */
const ORDER =
  /\b(?:must|should|shall|needs? to|has to|have to|(?:is|are) required to|make sure|ensure|always|never|do not|don't|instead|immediately|be sure to|it is (?:required|mandatory|essential|critical|important) (?:that|to))\b/i;
const PARAGRAPH_BREAK = /(\n[ \t]*\n\s*)/;

export const INJECTION_NOTICE = "[mcpguard removed text that addressed the agent with instructions]";

/** The text as markers are matched: NFKC, format characters (zero-width, bidi) taken out. */
function plainText(text: string): string {
  return NON_ASCII.test(text) ? fold(text).replace(FORMAT, "") : text;
}

export function hasInjectionMarker(text: string): boolean {
  return ANY_MARKER.test(plainText(text));
}

/** Orders addressed to a model in the text (read like {@link hasInjectionMarker}, folded). */
export function addressesAgent(text: string): boolean {
  const plain = plainText(text);
  return ADDRESSED.test(plain) && ORDER.test(plain);
}

/** A marker, or orders addressed to a model: what a result's paragraph may not carry. */
function addressesAgentWithOrders(text: string): boolean {
  return hasInjectionMarker(text) || addressesAgent(text);
}

export function checkInjection(value: string, scope: Scope): Finding | undefined {
  if (!scope.on("l2.injection") || !hasInjectionMarker(value)) return undefined;
  return scope.finding("l2.injection", "carries a prompt-injection marker that addresses the agent");
}

/**
 * Every paragraph (text between blank lines) that carries a marker, replaced by a notice; the whole
 * text when the marker only shows across a paragraph break.
 */
export function removeInjectedParagraphs(text: string): string {
  return replaceParagraphs(text, addressesAgentWithOrders, INJECTION_NOTICE);
}

/**
 * Every paragraph (text between blank lines) for which `flagged` holds, replaced by `notice`; the
 * whole text when it only holds across a paragraph break.
 */
export function replaceParagraphs(
  text: string,
  flagged: (paragraph: string) => boolean,
  notice: string,
): string {
  if (!flagged(text)) return text;
  // With a capturing split, the blank-line separators sit at the odd indexes and are kept.
  const parts = text.split(PARAGRAPH_BREAK);
  let removed = false;
  for (let i = 0; i < parts.length; i += 2) {
    if (flagged(parts[i] as string)) {
      parts[i] = notice;
      removed = true;
    }
  }
  return removed ? parts.join("") : notice;
}
