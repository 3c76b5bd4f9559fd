/**
 * Schemas for the MCP messages the defense layers read. They are loose: unknown fields pass, so a
 * newer protocol revision never fails validation for carrying something extra.
 */
import { z } from "zod";

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
  instructions: z.string().optional(),
});
export type InitializeResult = z.infer<typeof InitializeResult>;

export const ToolAnnotations = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type ToolAnnotations = z.infer<typeof ToolAnnotations>;

export const JsonSchemaObject = z.looseObject({
  type: z.literal("object"),
  properties: z.record(z.string(), z.unknown()).optional(),
  required: z.array(z.string()).optional(),
  additionalProperties: z.unknown().optional(),
});

export const Tool = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  annotations: ToolAnnotations.optional(),
});
export type Tool = z.infer<typeof Tool>;

export const ListToolsResult = z.looseObject({
  tools: z.array(Tool),
  nextCursor: z.string().optional(),
});
export type ListToolsResult = z.infer<typeof ListToolsResult>;

export const CallToolParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
export type CallToolParams = z.infer<typeof CallToolParams>;

export const ContentItem = z.looseObject({ type: z.string() });

export const CallToolResult = z.looseObject({
  content: z.array(ContentItem),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});
export type CallToolResult = z.infer<typeof CallToolResult>;
