/**
 * The MCP message schemas give, for every input of a fixed corpus, what they gave when they were written
 * with zod's classic API (`import { z } from "zod"`): the same acceptance, the same output (defaults
 * included, keys in the same order) and the same issues (code, path, message and the rest), in the same
 * order. test/fixtures/classic-zod.jsonl was recorded from the classic schemas before they moved to
 * zod/mini, and is never re-recorded from the schemas it checks.
 *
 * The corpus's form and the comparison: ./classicZod.ts.
 */
import { describe, expect, it } from "vitest";
import {
  CallToolParams,
  CallToolResult,
  InitializeParams,
  InitializeResult,
  ListToolsResult,
  Tool,
} from "../src/mcp.ts";
import { corpus, differingFromClassic } from "./classicZod.ts";

const CASES = corpus(new URL("fixtures/classic-zod.jsonl", import.meta.url));

describe("the MCP message schemas against what classic zod gave", () => {
  it.each([
    ["InitializeParams", InitializeParams],
    ["InitializeResult", InitializeResult],
    ["Tool", Tool],
    ["ListToolsResult", ListToolsResult],
    ["CallToolParams", CallToolParams],
    ["CallToolResult", CallToolResult],
  ] as const)("%s", (name, schema) => {
    expect(differingFromClassic(CASES, name, schema, 51)).toEqual([]);
  });
});
