import { describe, expect, it } from "vitest";
import { classify, MAX_BATCH_ITEMS } from "../src/jsonrpc.ts";
import { CallToolParams, InitializeResult, ListToolsResult } from "../src/mcp.ts";
import { PendingRequests } from "../src/pending.ts";

describe("classify", () => {
  it("tells requests, notifications, responses and batches apart", () => {
    expect(classify({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toMatchObject({
      kind: "request",
      id: 1,
    });
    expect(classify({ jsonrpc: "2.0", id: "a", method: "x" })).toMatchObject({ kind: "request", id: "a" });
    expect(classify({ jsonrpc: "2.0", method: "notifications/initialized" })).toMatchObject({
      kind: "notification",
    });
    expect(classify({ jsonrpc: "2.0", id: 1, result: {} })).toMatchObject({ kind: "response", error: false });
    expect(classify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "x" } })).toMatchObject({
      kind: "response",
      id: null,
      error: true,
    });
    const batch = classify([
      { jsonrpc: "2.0", id: 1, method: "a" },
      { jsonrpc: "2.0", method: "b" },
    ]);
    expect(batch.kind).toBe("batch");
    expect(batch.kind === "batch" && batch.items.map((i) => i.kind)).toEqual(["request", "notification"]);
  });

  it("passes unknown methods and fields", () => {
    const message = { jsonrpc: "2.0", id: 3, method: "vendor/unknown", params: { a: 1 }, _meta: { x: true } };
    expect(classify(message)).toMatchObject({ kind: "request", method: "vendor/unknown", message });
  });

  it("rejects what is not JSON-RPC 2.0", () => {
    expect(classify(42).kind).toBe("invalid");
    expect(classify([]).kind).toBe("invalid");
    expect(classify({ id: 1, method: "x" })).toMatchObject({ kind: "invalid", id: 1 });
    expect(classify({ jsonrpc: "2.0", id: { a: 1 }, method: "x" })).toMatchObject({
      kind: "invalid",
      id: null,
    });
    expect(classify({ jsonrpc: "2.0", id: 1, result: 1, error: {} }).kind).toBe("invalid");
    expect(classify({ jsonrpc: "2.0", method: 5 }).kind).toBe("invalid");
  });

  it("takes as ids only strings and integers every JSON reader holds exactly", () => {
    expect(classify({ jsonrpc: "2.0", id: 2 ** 53 - 1, method: "x" }).kind).toBe("request");
    expect(classify({ jsonrpc: "2.0", id: -(2 ** 53 - 1), method: "x" }).kind).toBe("request");
    // 9007199254740993 reads as ...992: two requests would share an id.
    for (const id of [2 ** 53, JSON.parse("9007199254740993"), 1.5, 1e21]) {
      expect(classify({ jsonrpc: "2.0", id, method: "x" }), String(id)).toMatchObject({
        kind: "invalid",
        id: null,
      });
      expect(classify({ jsonrpc: "2.0", id, result: {} }).kind, String(id)).toBe("invalid");
    }
  });

  it("refuses a batch of more than MAX_BATCH_ITEMS messages whole, before reading its items", () => {
    const ping = { jsonrpc: "2.0", method: "notifications/x" };
    expect(classify(Array(MAX_BATCH_ITEMS).fill(ping)).kind).toBe("batch");
    expect(classify(Array(MAX_BATCH_ITEMS + 1).fill(1))).toEqual({
      kind: "invalid",
      reason: `a batch of ${MAX_BATCH_ITEMS + 1} messages, more than the ${MAX_BATCH_ITEMS} accepted`,
      id: null,
    });
  });
});

describe("id correlation", () => {
  it("keeps string and number ids apart", () => {
    const pending = new PendingRequests<string>();
    pending.add(1, "tools/call", "number");
    pending.add("1", "tools/list", "string");
    expect(pending.take("1")?.context).toBe("string");
    expect(pending.take(1)?.context).toBe("number");
    expect(pending.take(1)).toBeUndefined();
    expect(pending.take(null)).toBeUndefined();
    // 0 and -0 are one id, as JSON-RPC clients compare them.
    pending.add(0, "ping", "zero");
    expect(pending.take(-0)?.context).toBe("zero");
  });

  it("drains whatever is still in flight", () => {
    const pending = new PendingRequests();
    pending.add(1, "a", undefined);
    pending.add(2, "b", undefined);
    expect(pending.drain().map((p) => p.method)).toEqual(["a", "b"]);
    expect(pending.size).toBe(0);
  });
});

describe("MCP schemas", () => {
  it("accept newer revisions with extra fields", () => {
    const result = InitializeResult.parse({
      protocolVersion: "2026-01-01",
      capabilities: { tools: { listChanged: true }, future: {} },
      serverInfo: { name: "s", version: "1", icons: [] },
    });
    expect(result.capabilities).toHaveProperty("future");
  });

  it("read tools/list and tools/call", () => {
    const tools = ListToolsResult.parse({
      tools: [
        {
          name: "read_file",
          inputSchema: { type: "object", properties: { path: { type: "string" } } },
          annotations: { readOnlyHint: true },
        },
      ],
    });
    expect(tools.tools[0]?.annotations?.readOnlyHint).toBe(true);
    expect(CallToolParams.safeParse({ name: "x", arguments: { a: 1 } }).success).toBe(true);
    expect(CallToolParams.safeParse({ arguments: {} }).success).toBe(false);
  });
});
