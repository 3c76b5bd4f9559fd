/**
 * JSON-RPC 2.0 decoding and classification, kept deliberately permissive: anything that is a
 * well-formed JSON-RPC message passes, whatever its method, extra fields or protocol version.
 */

import { isUtf8 } from "node:buffer";

export type JsonRpcId = string | number;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Same code the MCP SDK uses when the connection closes under a pending request. */
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
} as const;

export type DecodeResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: "utf8" | "json"; detail: string };

/**
 * Decode one frame body: strict UTF-8, then JSON. Decoding turns every invalid UTF-8 sequence into
 * U+FFFD (WHATWG's decoder, which Node.js follows), so only a text that holds one can come from
 * invalid bytes: the strict check runs for those alone, not on every message's path.
 */
export function decodeMessage(body: Buffer): DecodeResult {
  const text = body.toString();
  if (text.includes("\uFFFD") && !isUtf8(body))
    return { ok: false, reason: "utf8", detail: "message is not valid UTF-8" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: "json", detail: `invalid JSON: ${(error as Error).message}` };
  }
}

export type Message = Record<string, unknown>;

export type Classified =
  | { kind: "request"; id: JsonRpcId; method: string; message: Message }
  | { kind: "notification"; method: string; message: Message }
  | { kind: "response"; id: JsonRpcId | null; error: boolean; message: Message }
  | { kind: "batch"; items: Classified[] }
  | { kind: "invalid"; reason: string; id: JsonRpcId | null };

/**
 * A string, or an integer that every JSON reader holds exactly (MCP's ids are strings or integers).
 * A larger or fractional number comes out of a double-precision reader as another number, so two
 * requests could share an id and an answer reach the wrong one.
 */
function isId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

/**
 * The most messages one batch may hold. A batch answered item by item costs the proxy memory in
 * proportion to its items, not its bytes (`[1,1,...]`: an error of about 80 bytes for every 2
 * bytes); real batches hold a handful, and MCP dropped batching in 2025-06-18.
 */
export const MAX_BATCH_ITEMS = 1000;

function isObject(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function classify(value: unknown): Classified {
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: "invalid", reason: "empty batch", id: null };
    if (value.length > MAX_BATCH_ITEMS) {
      return {
        kind: "invalid",
        reason: `a batch of ${value.length} messages, more than the ${MAX_BATCH_ITEMS} accepted`,
        id: null,
      };
    }
    return { kind: "batch", items: value.map(classifySingle) };
  }
  return classifySingle(value);
}

const has = (value: Message, key: string) => Object.hasOwn(value, key);

function classifySingle(value: unknown): Classified {
  if (!isObject(value)) return { kind: "invalid", reason: "message is not a JSON object", id: null };
  const rawId = has(value, "id") ? value.id : undefined;
  const id = isId(rawId) ? rawId : null;
  if (value.jsonrpc !== "2.0") return { kind: "invalid", reason: 'jsonrpc must be "2.0"', id };
  const hasResult = has(value, "result");
  const hasError = has(value, "error");
  if (has(value, "method")) {
    if (typeof value.method !== "string") return { kind: "invalid", reason: "method must be a string", id };
    // A reader that looks for `result` first would take it for a response that no layer inspected.
    if (hasResult || hasError) {
      return { kind: "invalid", reason: "a request or notification carries no result or error", id };
    }
    if (!has(value, "id")) return { kind: "notification", method: value.method, message: value };
    if (!isId(rawId))
      return {
        kind: "invalid",
        reason: "request id must be a string or an integer of at most 2^53 - 1 in magnitude",
        id: null,
      };
    return { kind: "request", id: rawId, method: value.method, message: value };
  }
  if (hasResult === hasError) {
    return { kind: "invalid", reason: "a response carries exactly one of result and error", id };
  }
  if (rawId !== null && !isId(rawId)) return { kind: "invalid", reason: "response id is invalid", id: null };
  return { kind: "response", id: rawId as JsonRpcId | null, error: hasError, message: value };
}

interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export function errorResponse(id: JsonRpcId | null, error: JsonRpcErrorObject): Message {
  return { jsonrpc: "2.0", id, error };
}

export function resultResponse(id: JsonRpcId, result: unknown): Message {
  return { jsonrpc: "2.0", id, result };
}

const HAS_LINE_SEPARATOR = /[\u0085\u2028\u2029]/;
const LINE_SEPARATORS = /[\u0085\u2028\u2029]/g;
const escapeSeparator = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Serialise a message as one frame: one line for every reader. JSON.stringify escapes CR and LF;
 * U+2028, U+2029 and U+0085, which it leaves raw, are escaped here.
 */
export function encodeMessage(message: unknown): Buffer {
  let text = JSON.stringify(message);
  if (HAS_LINE_SEPARATOR.test(text)) text = text.replace(LINE_SEPARATORS, escapeSeparator);
  return Buffer.from(`${text}\n`, "utf8");
}

/** An MCP tool result that reports a refusal to the agent as readable text (not a transport error). */
export function toolError(text: string): { content: { type: "text"; text: string }[]; isError: true } {
  return { content: [{ type: "text", text }], isError: true };
}
