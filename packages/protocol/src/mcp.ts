/**
 * Schemas for the MCP messages the defense layers read. They are loose: unknown fields pass, so a
 * newer protocol revision never fails validation for carrying something extra.
 */
import * as z from "zod/mini";
import "./zodEnglish.js";

export const Implementation = z.looseObject({ name: z.string(), version: z.string() });

export const InitializeParams = z.looseObject({
  protocolVersion: z.string(),
  capabilities: z.looseObject({}),
  clientInfo: Implementation,
});
export type InitializeParams = z.infer<typeof InitializeParams>;

export const InitializeResult = z.looseObject({
  protocolVersion: z.string(),
  capabilities: z.looseObject({}),
  serverInfo: Implementation,
  instructions: z.optional(z.string()),
});
export type InitializeResult = z.infer<typeof InitializeResult>;

export const ToolAnnotations = z.looseObject({
  title: z.optional(z.string()),
  readOnlyHint: z.optional(z.boolean()),
  destructiveHint: z.optional(z.boolean()),
  idempotentHint: z.optional(z.boolean()),
  openWorldHint: z.optional(z.boolean()),
});
export type ToolAnnotations = z.infer<typeof ToolAnnotations>;

export const JsonSchemaObject = z.looseObject({
  type: z.literal("object"),
  properties: z.optional(z.record(z.string(), z.unknown())),
  required: z.optional(z.array(z.string())),
  additionalProperties: z.optional(z.unknown()),
});

export const Tool = z.looseObject({
  name: z.string(),
  title: z.optional(z.string()),
  description: z.optional(z.string()),
  inputSchema: JsonSchemaObject,
  outputSchema: z.optional(JsonSchemaObject),
  annotations: z.optional(ToolAnnotations),
});
export type Tool = z.infer<typeof Tool>;

export const ListToolsResult = z.looseObject({
  tools: z.array(Tool),
  nextCursor: z.optional(z.string()),
});
export type ListToolsResult = z.infer<typeof ListToolsResult>;

export const CallToolParams = z.looseObject({
  name: z.string(),
  arguments: z.optional(z.record(z.string(), z.unknown())),
});
export type CallToolParams = z.infer<typeof CallToolParams>;

export const ContentItem = z.looseObject({ type: z.string() });

export const CallToolResult = z.looseObject({
  content: z.array(ContentItem),
  structuredContent: z.optional(z.record(z.string(), z.unknown())),
  isError: z.optional(z.boolean()),
});
export type CallToolResult = z.infer<typeof CallToolResult>;
