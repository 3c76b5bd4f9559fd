/**
 * The result sanitizer: secrets and injected instructions are removed from what the server sends
 * before the client sees it. Strings are sanitized one by one, and what they come back as is the
 * server's text but for the spans a rule replaced. A string that holds JSON is sanitized leaf by
 * leaf (so markers never break its syntax), and the changed leaves are spliced into the text it was
 * (`spliceJson`): its spaces, line breaks, key order, escapes and number spellings stay, never
 * parsed and written again; JSON in which an object has a key twice is sanitized as plain text.
 * Binary payloads (image and audio data, blobs) are read decoded: base64 of text as that text,
 * base64 of other data byte by byte for secrets (encoded again if either changes), anything else
 * in them as any string. A value that nothing changes is returned as the very same object.
 *
 * Every walk is bounded: values nest at most `maxDepth` deep (the relay refuses deeper messages,
 * so the bound is a backstop), and JSON inside a text that nests deeper is sanitized as plain text,
 * never parsed and walked.
 */
import { DEFAULT_MAX_DEPTH, hasDuplicateKey, spliceJson, textTooDeep } from "@mcpguard/protocol";
import { decodeBase64 } from "./public.js";
import { MARKERS, redactText, type Secrets } from "./redact.js";
import { secretField, secretValue, TOKEN_MARK } from "./tokens.js";

export interface SanitizeContext {
  /** Values withheld from the server's environment. */
  secretValues: readonly string[];
  /** Deepest nesting walked, in a value and in JSON found inside a text (default 128). */
  maxDepth?: number;
  /** Sanitizer rules an operator override turned off, by id (`l2.result.token`). */
  disabledRules?: ReadonlySet<string>;
}

const TOO_DEEP_MARK = "[REDACTED value nested too deep to inspect]";
/** What a sanitized string may hold that its original did not: a changed JSON text is aligned on them. */
const INSERTED = [...MARKERS, TOO_DEEP_MARK];

const JSON_START = /^\s*[[{]/;
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const own = (value: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(value, key) ? value[key] : undefined;

/**
 * Fields that protocol machinery matches on (ids, cursors, tokens): a redaction there would break
 * the exchange, and no agent reads them as text.
 */
const KEPT_FIELDS = new Set(["progressToken", "taskId", "requestId", "cursor", "nextCursor"]);
const BINARY_CONTENT = new Set(["image", "audio"]);

/**
 * How a walk reads strings: a protocol payload (fields kept, JSON in strings parsed), a result's
 * `structuredContent`, or JSON read out of a text (every leaf plain text).
 */
type WalkMode = "mcp" | "structured" | "text";

/** A resource whose content a client shows as text: a text, JSON or XML type, or none said. */
const shownAsText = (resource: Record<string, unknown>): boolean => {
  const type = own(resource, "mimeType");
  return typeof type !== "string" || /^text\/|[/+](?:json|xml|yaml|x-yaml|javascript)\b/i.test(type);
};

/** An image or audio content block: `{type: "image" | "audio", data, mimeType}`. */
const isMediaBlock = (value: Record<string, unknown>): boolean =>
  BINARY_CONTENT.has(own(value, "type") as string);

/** One message's sanitization: the rules that applied, and the walks that apply them. */
export class Sanitizer {
  readonly applied = new Set<string>();
  readonly #secrets: Secrets;
  readonly #maxDepth: number;

  constructor(ctx: SanitizeContext) {
    this.#secrets = {
      withheld: ctx.secretValues.filter((v) => v.length >= 8),
      disabled: ctx.disabledRules,
    };
    this.#maxDepth = ctx.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /**
   * Any MCP payload (a result, params, an error): every string, JSON inside text included, but the
   * fields in {@link KEPT_FIELDS} and the data of image and audio content.
   */
  payload(value: unknown): unknown {
    return this.#walk(value, 0, "mcp");
  }

  /**
   * A `CallToolResult`, every field of it: the content items whole (text, embedded resources, the
   * names and descriptions of resource links, annotations, `_meta`, types MCP does not define) as
   * a payload, `structuredContent` as such, and the result's own other fields as a payload.
   */
  toolResult(result: Record<string, unknown>): Record<string, unknown> {
    const keys = Object.keys(result);
    let entries: [string, unknown][] | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const value = result[key];
      const out =
        key === "content" && Array.isArray(value)
          ? this.#content(value)
          : key === "structuredContent"
            ? this.#walk(value, 1, "structured")
            : this.#walk(value, 1, "mcp", key, result);
      if (out !== value) {
        entries ??= Object.entries(result);
        entries[i] = [key, out];
      }
    }
    return entries ? Object.fromEntries(entries) : result;
  }

  /**
   * A text: JSON in it sanitized leaf by leaf (when it nests no deeper than the limit and has no
   * key twice), the changed leaves spliced into the text as it was; else as plain text. `field` is
   * the name of the JSON field it is the value of, if any.
   */
  text(text: string, field?: string): string {
    if (!JSON_START.test(text) || textTooDeep(text, this.#maxDepth)) {
      return redactText(text, this.#secrets, this.applied, field);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: redacted as text.
      return redactText(text, this.#secrets, this.applied, field);
    }
    // A key written twice: JSON.parse keeps the last, and the first would pass unread.
    if (hasDuplicateKey(Buffer.from(text))) return redactText(text, this.#secrets, this.applied, field);
    const next = this.#walk(parsed, 0, "text");
    return next === parsed ? text : spliceJson(text, parsed, next, { inserted: INSERTED });
  }

  #content(content: unknown[]): unknown[] {
    let next: unknown[] | undefined;
    for (let i = 0; i < content.length; i++) {
      const item = content[i];
      const out = this.#contentItem(item);
      if (out !== item) {
        next ??= content.slice();
        next[i] = out;
      }
    }
    return next ?? content;
  }

  #contentItem(item: unknown): unknown {
    return this.#walk(item, 2, "mcp");
  }

  /**
   * The value with its strings sanitized; the same reference when nothing changed, read as `mode`
   * says (see {@link WalkMode}).
   */
  #walk(
    value: unknown,
    depth: number,
    mode: WalkMode,
    name?: string,
    parent?: Record<string, unknown>,
  ): unknown {
    if (typeof value === "string") return this.#leaf(value, mode, name, parent);
    if (value === null || typeof value !== "object") return value;
    if (depth >= this.#maxDepth) {
      this.applied.add("l2.result.too-deep");
      return TOO_DEEP_MARK;
    }
    if (Array.isArray(value)) {
      let next: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const out = this.#walk(value[i], depth + 1, mode);
        if (out !== value[i]) {
          next ??= value.slice();
          next[i] = out;
        }
      }
      return next ?? value;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    let entries: [string, unknown][] | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const item = record[key];
      const out = this.#walk(item, depth + 1, mode, key, record);
      if (out !== item) {
        entries ??= Object.entries(record);
        entries[i] = [key, out];
      }
    }
    // fromEntries defines own properties, so a key named "__proto__" stays a key.
    return entries ? Object.fromEntries(entries) : value;
  }

  #leaf(value: string, mode: WalkMode, name?: string, parent?: Record<string, unknown>): string {
    const mcp = mode === "mcp";
    if (mcp && name !== undefined && KEPT_FIELDS.has(name)) return value;
    // Binary data: a resource's blob in a message, the data of an image or audio block in a message
    // and in `structuredContent` that repeats the content (as servers do); never in JSON read out of
    // a text, which a file the server reads could hold. Base64 of text is that text, sanitized and
    // encoded again. Base64 of other data passes, but a blob a client would show as text (its
    // mimeType is text, JSON, XML, YAML, JavaScript or none) is read byte by byte for secrets:
    // a byte that is not text must not hide a key after it. Anything else is read as a string.
    if (
      mode !== "text" &&
      ((mcp && name === "blob") || (name === "data" && parent !== undefined && isMediaBlock(parent)))
    ) {
      const base64 = decodeBase64(value);
      if (base64 !== undefined && "text" in base64) {
        const { text } = base64;
        const out = mcp ? this.text(text) : redactText(text, this.#secrets, this.applied);
        return out === text ? value : Buffer.from(out, "utf8").toString("base64");
      }
      if (base64 !== undefined) {
        if (!(name === "blob" && parent !== undefined && shownAsText(parent))) return value;
        // Each byte as one character (latin1): the text in the data reads as itself.
        const bytes = base64.bytes.toString("latin1");
        const out = redactText(bytes, this.#secrets, this.applied);
        return out === bytes ? value : Buffer.from(out, "latin1").toString("base64");
      }
    }
    const redacted = mcp ? this.text(value, name) : redactText(value, this.#secrets, this.applied, name);
    // A secret-named field ("password": "...") whose value no other rule recognised.
    if (
      redacted === value &&
      name !== undefined &&
      !this.#secrets.disabled?.has("l2.result.token") &&
      secretField(name) &&
      secretValue(value)
    ) {
      this.applied.add("l2.result.token");
      return TOKEN_MARK;
    }
    return redacted;
  }
}

/** Remove secrets and injected instructions from a tools/call result. Returns the same object (===) when nothing changed. */
export function sanitizeResult(
  result: unknown,
  ctx: SanitizeContext,
): { result: unknown; redactions: string[] } {
  if (!isRecord(result)) return { result, redactions: [] };
  const sanitizer = new Sanitizer(ctx);
  const next = sanitizer.toolResult(result);
  return { result: next, redactions: next === result ? [] : [...sanitizer.applied] };
}
