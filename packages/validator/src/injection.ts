/**
 * Prompt-injection markers: text that addresses the agent rather than the user, the way a poisoned
 * tool result or argument tries to take over the conversation ("ignore previous instructions",
 * fake role tags, orders to keep something from the user). Matched case-insensitively on the NFKC
 * form with format characters removed, so full-width letters and zero-width splits do not hide one.
 * Arguments carrying a marker are refused; in results, the paragraph carrying it is removed.
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
  /\byou\s+are\s+now\s+(?:a|an|the|in|my|acting|operating|free|unrestricted|jailbroken|dan|no\s+longer)\b/i,
  /\bnew\s+instructions?\s*:/i,
  /\b(?:do\s+not|don't|never)\s+(?:tell|mention|inform|reveal|show|alert|notify|disclose)\b[^.!?\n]{0,60}?\bthe\s+user\b/i,
  /\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b/i,
];
/** All markers in one pattern, tried in one pass (none but the `###` marker uses `^` or `$`). */
const ANY_MARKER = new RegExp(MARKERS.map((m) => `(?:${m.source})`).join("|"), "im");
const FORMAT = /\p{Cf}/gu;
const PARAGRAPH_BREAK = /(\n[ \t]*\n\s*)/;

export const INJECTION_NOTICE = "[mcpguard removed text that addressed the agent with instructions]";

export function hasInjectionMarker(text: string): boolean {
  const folded = fold(text);
  const plain = folded === text ? text : folded.replace(FORMAT, "");
  return ANY_MARKER.test(plain);
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
  if (!hasInjectionMarker(text)) return text;
  // With a capturing split, the blank-line separators sit at the odd indexes and are kept.
  const parts = text.split(PARAGRAPH_BREAK);
  let removed = false;
  for (let i = 0; i < parts.length; i += 2) {
    if (hasInjectionMarker(parts[i] as string)) {
      parts[i] = INJECTION_NOTICE;
      removed = true;
    }
  }
  return removed ? parts.join("") : INJECTION_NOTICE;
}
