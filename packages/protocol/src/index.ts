export { type CacheKey, cacheKey, readCache, writeCache } from "./cacheDir.js";
export { DEFAULT_MAX_MESSAGE_BYTES, type Frame, FrameTooLargeError, LineFramer } from "./framing.js";
export {
  type Classified,
  classify,
  decodeMessage,
  ErrorCode,
  encodeMessage,
  errorResponse,
  type JsonRpcId,
  MAX_BATCH_ITEMS,
  type Message,
  resultResponse,
  toolError,
} from "./jsonrpc.js";
export { type PendingRequest, PendingRequests } from "./pending.js";
export { isRecord } from "./record.js";
export {
  DEFAULT_MAX_DEPTH,
  escapeLineSeparators,
  MAX_DEPTH_LIMIT,
  recoverId,
  SCAN_BARE_CR,
  SCAN_LINE_SEPARATOR,
  SCAN_TOO_DEEP,
  scanFrame,
  textTooDeep,
} from "./scan.js";
export { hasDuplicateKey, spliceJson } from "./splice.js";
export { TRUST_VARIABLES } from "./trust.js";
