/**
 * The sanitizer over every message a server sends that can carry data to the agent:
 *
 * - answers to the client's requests: `tools/call` and `tasks/result` (a tool's result, through
 *   the tasks API or not), `resources/read`, `prompts/get`, `completion/complete`, `tasks/get` and
 *   any method this list does not know, and the `error` (message and data) of every answer;
 * - requests and notifications of the server's own: `sampling/createMessage` (messages and system
 *   prompt handed to the client's model), `elicitation/create`, `notifications/message` (log
 *   data), `notifications/progress` (message) and the rest.
 *
 * Results that only describe the server (`initialize` and the `*\/list` methods) are left as they
 * are: they name tools, prompts and resources, and hold nothing a tool produced.
 */
import { isRecord, type SanitizeContext, Sanitizer } from "./sanitize.js";

export interface SanitizedMessage {
  /** The message to forward: the very same object when nothing changed. */
  message: Record<string, unknown>;
  /** Ids of the rules that changed it, in the order applied. */
  redactions: string[];
}

/**
 * Methods whose results describe the server (its tools, prompts and resources), not what a tool,
 * resource or prompt produced. Every other answer, `ping` and the empty acknowledgements included,
 * is sanitized: a well-behaved server puts nothing in them.
 */
const DESCRIPTIVE = new Set([
  "initialize",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
]);
/** Methods answered with a `CallToolResult`. */
const TOOL_RESULTS = new Set(["tools/call", "tasks/result"]);

/** Replace one field of a message when its value changed. */
function withField(message: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  return value === message[key] ? message : { ...message, [key]: value };
}

/** The server's answer to a client request `method`, sanitized. */
export function sanitizeResponse(
  method: string,
  message: Record<string, unknown>,
  ctx: SanitizeContext,
): SanitizedMessage {
  const sanitizer = new Sanitizer(ctx);
  let next = message;
  if (Object.hasOwn(message, "error")) next = withField(next, "error", sanitizer.payload(message.error));
  if (Object.hasOwn(message, "result") && !DESCRIPTIVE.has(method)) {
    const result = message.result;
    const isToolResult = TOOL_RESULTS.has(method) && isRecord(result) && Array.isArray(result.content);
    next = withField(next, "result", isToolResult ? sanitizer.toolResult(result) : sanitizer.payload(result));
  }
  return { message: next, redactions: next === message ? [] : [...sanitizer.applied] };
}

/** A request or notification the server sends of its own accord, sanitized in its params. */
export function sanitizeServerMessage(
  _method: string,
  message: Record<string, unknown>,
  ctx: SanitizeContext,
): SanitizedMessage {
  if (!Object.hasOwn(message, "params")) return { message, redactions: [] };
  const sanitizer = new Sanitizer(ctx);
  const next = withField(message, "params", sanitizer.payload(message.params));
  return { message: next, redactions: next === message ? [] : [...sanitizer.applied] };
}
