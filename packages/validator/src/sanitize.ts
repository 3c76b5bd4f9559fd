/**
 * The result sanitizer: secrets and injected instructions are removed from a `tools/call` result
 * before the client sees it. Text items and `structuredContent` are sanitized; a text item that
 * holds JSON is sanitized leaf by leaf (so markers never break its syntax) and re-serialized only
 * if something changed. Images, audio and resources pass untouched, and an unchanged result is
 * returned as the very same object.
 */
import { redactText, type Secrets } from "./redact.js";
import { secretField, secretValue, TOKEN_MARK } from "./tokens.js";

const JSON_START = /^\s*[[{]/;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The value with every string leaf sanitized; the same reference when nothing changed. */
function sanitizeValue(value: unknown, secrets: Secrets, applied: Set<string>, name?: string): unknown {
  if (typeof value === "string") {
    const redacted = redactText(value, secrets, applied);
    // A secret-named field ("password": "...") whose value no other rule recognised.
    if (redacted === value && name !== undefined && secretField(name) && secretValue(value)) {
      applied.add("l2.result.token");
      return TOKEN_MARK;
    }
    return redacted;
  }
  if (Array.isArray(value)) {
    const next = value.map((item) => sanitizeValue(item, secrets, applied));
    return next.some((item, i) => item !== value[i]) ? next : value;
  }
  if (isRecord(value)) {
    let changed = false;
    const next: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      next[key] = sanitizeValue(item, secrets, applied, key);
      if (next[key] !== item) changed = true;
    }
    return changed ? next : value;
  }
  return value;
}

function sanitizeText(text: string, secrets: Secrets, applied: Set<string>): string {
  if (JSON_START.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return redactText(text, secrets, applied);
    }
    const next = sanitizeValue(parsed, secrets, applied);
    return next === parsed ? text : JSON.stringify(next);
  }
  return redactText(text, secrets, applied);
}

function sanitizeContent(content: unknown[], secrets: Secrets, applied: Set<string>): unknown[] {
  const next = content.map((item) => {
    if (!isRecord(item) || item.type !== "text" || typeof item.text !== "string") return item;
    const text = sanitizeText(item.text, secrets, applied);
    return text === item.text ? item : { ...item, text };
  });
  return next.some((item, i) => item !== content[i]) ? next : content;
}

/** Remove secrets and injected instructions from a tools/call result. Returns the same object (===) when nothing changed. */
export function sanitizeResult(
  result: unknown,
  ctx: { secretValues: readonly string[] },
): { result: unknown; redactions: string[] } {
  if (!isRecord(result)) return { result, redactions: [] };
  const secrets: Secrets = { withheld: ctx.secretValues.filter((v) => v.length >= 8) };
  const applied = new Set<string>();
  const content = Array.isArray(result.content)
    ? sanitizeContent(result.content, secrets, applied)
    : result.content;
  const structured =
    "structuredContent" in result ? sanitizeValue(result.structuredContent, secrets, applied) : undefined;
  if (content === result.content && structured === result.structuredContent) {
    return { result, redactions: [] };
  }
  const next: Record<string, unknown> = { ...result, content };
  if ("structuredContent" in result) next.structuredContent = structured;
  return { result: next, redactions: [...applied] };
}
