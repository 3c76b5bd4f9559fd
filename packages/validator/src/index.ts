export type { Finding, ValidatorContext } from "./context.js";
export { inspectArguments } from "./inspect.js";
export { sanitizeResult } from "./sanitize.js";
