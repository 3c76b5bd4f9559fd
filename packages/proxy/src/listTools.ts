/**
 * Start a server, complete the MCP handshake and read its `tools/list` (every page): what
 * `mcpguard policy derive` works from. The server runs in its own containment and is stopped after.
 */
import { spawn } from "node:child_process";
import { classify, decodeMessage, encodeMessage, LineFramer, type Message } from "@mcpguard/protocol";
import { InitializeResult, ListToolsResult, type Tool } from "@mcpguard/protocol/mcp";
import type { z } from "zod";
import { createContainment } from "./containment.js";

export interface ServerListing {
  serverInfo: { name: string; version: string };
  tools: Tool[];
}

/** A server's answer read with the MCP schema: a listing that does not fit is an error, never half-read. */
function read<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `the server's ${what} does not fit the MCP schema: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

export async function listTools(argv: readonly string[], timeoutMs = 15_000): Promise<ServerListing> {
  const containment = createContainment();
  const [command, ...args] = containment.wrap(argv);
  const child = spawn(command as string, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
  const waiting = new Map<number, (message: Message) => void>();
  const framer = new LineFramer({
    frame: ({ body }) => {
      const decoded = decodeMessage(body);
      if (!decoded.ok) return;
      const c = classify(decoded.value);
      if (c.kind === "response" && typeof c.id === "number") waiting.get(c.id)?.(c.message);
    },
    error: () => {},
  });
  child.stdout.on("data", (chunk: Buffer) => framer.push(chunk));
  child.stdin.on("error", () => {});
  let nextId = 0;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) =>
      reject(new Error(`the server exited (status ${code}) before listing its tools`)),
    ),
  );
  exited.catch(() => {});
  const request = (method: string, params: unknown): Promise<Record<string, unknown>> => {
    const id = ++nextId;
    const answer = new Promise<Message>((resolve) => waiting.set(id, resolve));
    child.stdin.write(encodeMessage({ jsonrpc: "2.0", id, method, params }));
    return Promise.race([answer, exited]).then((message) => {
      if (message.error) throw new Error(`${method} failed: ${JSON.stringify(message.error)}`);
      return (message.result ?? {}) as Record<string, unknown>;
    });
  };
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const init = read(
      InitializeResult,
      await request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "mcpguard-policy-derive", version: "1.0.0" },
      }),
      "initialize result",
    );
    child.stdin.write(encodeMessage({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = read(
        ListToolsResult,
        await request("tools/list", cursor ? { cursor } : {}),
        "tools/list result",
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return { serverInfo: init.serverInfo, tools };
  } finally {
    clearTimeout(timer);
    child.stdin.end();
    if (child.pid) await containment.killAll(child.pid);
    containment.dispose();
  }
}
