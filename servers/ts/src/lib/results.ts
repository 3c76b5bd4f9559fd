/**
 * Tool results in the one shape all three languages return: a single text item holding the JSON of
 * the result object, or an `isError` result whose text is `Error: <message>`.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }] };
}

export function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `Error: ${message}` }] };
}

/** Wraps a tool implementation: its value becomes a JSON result, anything it throws a tool failure. */
export function jsonTool<A>(run: (args: A) => unknown): (args: A) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return jsonResult(await run(args));
    } catch (error) {
      return errorResult(error instanceof Error ? error.message : String(error));
    }
  };
}
