/** The sanitizer on every message a server sends, and the bounds of every walk L2 makes. */
import { afterAll, describe, expect, it } from "vitest";
import { inspectArguments, sanitizeResponse, sanitizeResult, sanitizeServerMessage } from "../src/index.ts";
import { makeWorld } from "./helpers.ts";

const KEY = "AKIAQ3EGZT5NXBRW7YLM";
const MARK = "[REDACTED aws-key]";
const TOKEN = "Zq3xW9vKp2LmN8rT4yB6cD1fG7hJ5sAe"; // token-shaped: the generic rule would take it
const ctx = { secretValues: [] };
const response = (result: unknown) => ({ jsonrpc: "2.0", id: 1, result });

const world = makeWorld();
afterAll(() => world.remove());

describe("sanitizeResponse", () => {
  it("sanitizes what each result-bearing method carries", () => {
    const cases: [string, unknown, unknown][] = [
      ["tools/call", { content: [{ type: "text", text: KEY }] }, { content: [{ type: "text", text: MARK }] }],
      [
        "tasks/result",
        { content: [{ type: "text", text: KEY }] },
        { content: [{ type: "text", text: MARK }] },
      ],
      [
        "resources/read",
        { contents: [{ uri: "file:///k", text: KEY }] },
        { contents: [{ uri: "file:///k", text: MARK }] },
      ],
      [
        "prompts/get",
        { messages: [{ role: "user", content: { type: "text", text: KEY } }] },
        { messages: [{ role: "user", content: { type: "text", text: MARK } }] },
      ],
      ["completion/complete", { completion: { values: [KEY] } }, { completion: { values: [MARK] } }],
      [
        "tools/call",
        { task: { taskId: "t", statusMessage: KEY } },
        { task: { taskId: "t", statusMessage: MARK } },
      ],
      ["vendor/anything", { deep: { er: [KEY] } }, { deep: { er: [MARK] } }],
    ];
    for (const [method, result, expected] of cases) {
      const { message, redactions } = sanitizeResponse(method, response(result), ctx);
      expect(message).toEqual(response(expected));
      expect(redactions).toEqual(["l2.result.aws-key"]);
    }
  });

  it("sanitizes the message and data of an error answer to any method", () => {
    const error = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: `at ${KEY}`, data: { password: "hunter2hunter2" } },
    };
    expect(sanitizeResponse("tools/list", error, ctx).message).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: `at ${MARK}`, data: { password: "[REDACTED token]" } },
    });
  });

  it("leaves results that describe the server, and unchanged messages, as the same object", () => {
    const list = response({ tools: [{ name: "t", description: KEY, inputSchema: { type: "object" } }] });
    expect(sanitizeResponse("tools/list", list, ctx).message).toBe(list);
    const clean = response({ content: [{ type: "text", text: "fine" }], structuredContent: { a: [1, "b"] } });
    expect(sanitizeResponse("tools/call", clean, ctx)).toEqual({ message: clean, redactions: [] });
    expect(sanitizeResponse("tools/call", clean, ctx).message).toBe(clean);
  });

  it("keeps binary data and the ids protocol machinery matches on", () => {
    const result = {
      contents: [{ uri: "file:///b", blob: TOKEN }],
      content: [{ type: "image", data: TOKEN, mimeType: "image/png" }],
      nextCursor: TOKEN,
      task: { taskId: TOKEN },
    };
    const message = response(result);
    expect(sanitizeResponse("vendor/x", message, ctx).message).toBe(message);
  });

  it("keeps a key named __proto__ a key", () => {
    const message = response(JSON.parse(`{"__proto__": {"k": "${KEY}"}, "x": "${KEY}"}`));
    const out = sanitizeResponse("vendor/x", message, ctx).message;
    expect(JSON.stringify(out)).toBe(
      `{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"k":"${MARK}"},"x":"${MARK}"}}`,
    );
  });
});

describe("sanitizeServerMessage", () => {
  it("sanitizes log data, progress messages, sampling and elicitation requests", () => {
    const cases: [string, unknown, unknown][] = [
      [
        "notifications/message",
        { level: "info", data: { env: KEY } },
        { level: "info", data: { env: MARK } },
      ],
      [
        "notifications/progress",
        { progressToken: TOKEN, progress: 1, message: KEY },
        { progressToken: TOKEN, progress: 1, message: MARK },
      ],
      [
        "sampling/createMessage",
        {
          messages: [
            { role: "user", content: { type: "text", text: KEY } },
            { role: "user", content: { type: "image", data: TOKEN, mimeType: "image/png" } },
          ],
          systemPrompt: KEY,
        },
        {
          messages: [
            { role: "user", content: { type: "text", text: MARK } },
            { role: "user", content: { type: "image", data: TOKEN, mimeType: "image/png" } },
          ],
          systemPrompt: MARK,
        },
      ],
      ["elicitation/create", { message: KEY, requestedSchema: {} }, { message: MARK, requestedSchema: {} }],
    ];
    for (const [method, params, expected] of cases) {
      const { message } = sanitizeServerMessage(method, { jsonrpc: "2.0", method, params }, ctx);
      expect(message).toEqual({ jsonrpc: "2.0", method, params: expected });
    }
  });
});

describe("bounded walks", () => {
  const deepText = (d: number, inner: string) => `${"[".repeat(d)}${inner}${"]".repeat(d)}`;

  it("sanitizes JSON text nested deeper than the limit as plain text, never parsing it", () => {
    const text = deepText(100_000, `"${KEY}"`);
    const { result } = sanitizeResult({ content: [{ type: "text", text }] }, ctx);
    expect(result).toEqual({ content: [{ type: "text", text: deepText(100_000, `"${MARK}"`) }] });
    const shallow = deepText(5, `"${KEY}"`);
    const { result: parsed } = sanitizeResult(
      { content: [{ type: "text", text: shallow }] },
      { ...ctx, maxDepth: 5 },
    );
    expect(parsed).toEqual({
      content: [{ type: "text", text: JSON.stringify(JSON.parse(deepText(5, `"${MARK}"`))) }],
    });
  });

  it("stops a value walk at the limit instead of recursing", () => {
    let value: unknown = KEY;
    for (let i = 0; i < 100_000; i++) value = [value];
    const { message, redactions } = sanitizeResponse("vendor/x", response(value), ctx);
    expect(redactions).toEqual(["l2.result.too-deep"]);
    expect(JSON.stringify(message)).toContain("[REDACTED value nested too deep to inspect]");
  });

  it("refuses an argument nested deeper than the limit", () => {
    let value: unknown = "x";
    for (let i = 0; i < 100_000; i++) value = { a: value };
    expect(inspectArguments({ data: value }, { data: "record" }, world.ctx)?.rule).toBe("l2.nesting");
    expect(
      inspectArguments({ data: { a: { b: "x" } } }, { data: "record" }, { ...world.ctx, maxDepth: 2 })?.rule,
    ).toBe("l2.nesting");
  });

  it("refuses wrappers and find -exec nested past what it checks, without recursing", () => {
    const command = `${"find . -exec ".repeat(10_000)}cat {} \\;`;
    expect(world.rule(command, "command")).toBe("l2.command.nesting");
    expect(world.rule(`${"env ".repeat(100_000)}ls`, "command")).toBe("l2.command.nesting");
    expect(world.rule(`${"nice ".repeat(20)}ls`, "command")).toBeUndefined();
    expect(world.rule("find . -exec cat {} \\; -exec ls {} \\;", "command")).toBeUndefined();
  });
});
