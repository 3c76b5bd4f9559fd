// The language readers are their own package: @mcpguard/readers.

export { type Confinement, UNCONFINED } from "@mcpguard/readers";
export * from "./command.js";
export * from "./decide.js";
export * from "./decision.js";
export * from "./derive.js";
export * from "./env.js";
export * from "./load.js";
export * from "./paths.js";
export * from "./programs.js";
export * from "./roots.js";
// The zod schemas are at "@mcpguard/policy/schema": loading them is the costly part of a start.
export type {
  ArgRole,
  Capabilities,
  Override,
  OverrideFile,
  Policy,
  SqlClass,
  ToolPolicy,
} from "./schema.js";
