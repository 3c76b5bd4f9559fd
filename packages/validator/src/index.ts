export type { Finding, ValidatorContext } from "./context.js";
export { inspectArguments } from "./inspect.js";
export { type SanitizedMessage, sanitizeResponse, sanitizeServerMessage } from "./messages.js";
export { type SanitizeContext, Sanitizer, sanitizeResult } from "./sanitize.js";
