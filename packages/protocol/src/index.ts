export * from "./cacheDir.js";
export * from "./framing.js";
export * from "./jsonrpc.js";
export * from "./pending.js";
export * from "./record.js";
export * from "./scan.js";
export * from "./splice.js";
export * from "./trust.js";
