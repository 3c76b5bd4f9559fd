/**
 * The reference MCP server, reached directly and through `mcpguard run --config C0`: a client must
 * not be able to tell the two apart.
 */
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connect,
  EVERYTHING,
  eventually,
  processesWith,
  proxied,
  RawProxy,
  type Session,
  workspaceWithPolicy,
} from "./helpers.ts";

const marker = `--mcpguard-test-${randomUUID()}`;
const serverArgs = [EVERYTHING, "stdio", marker];

let direct: Session;
let proxy: Session;

beforeAll(async () => {
  [direct, proxy] = await Promise.all([connect(serverArgs), connect(proxied(serverArgs))]);
});

afterAll(async () => {
  await Promise.all([direct?.client.close(), proxy?.client.close()]);
  // The proxy exited with its client and left nothing behind.
  expect(await eventually(() => processesWith(marker).length === 0, 5000)).toBe(true);
});

/** The same request on both sessions. */
async function both<T>(call: (s: Session) => Promise<T>): Promise<[T, T]> {
  return Promise.all([call(direct), call(proxy)]);
}

describe("server-everything through mcpguard run --config C0", () => {
  it("reports the same server and capabilities", () => {
    expect(proxy.client.getServerVersion()).toEqual(direct.client.getServerVersion());
    expect(proxy.client.getServerCapabilities()).toEqual(direct.client.getServerCapabilities());
  });

  it("lists identical tools", async () => {
    const [a, b] = await both((s) => s.client.listTools());
    expect(a.tools.length).toBeGreaterThan(5);
    expect(b).toEqual(a);
  });

  it("returns identical results for several tools", async () => {
    const calls = [
      { name: "echo", arguments: { message: "hello through the proxy ✓" } },
      { name: "get-sum", arguments: { a: 17, b: 25 } },
      { name: "get-tiny-image", arguments: {} },
      { name: "get-annotated-message", arguments: { messageType: "success", includeImage: true } },
      { name: "get-structured-content", arguments: { location: "New York" } },
    ];
    for (const call of calls) {
      const [a, b] = await both((s) => s.client.callTool(call));
      expect(b, call.name).toEqual(a);
    }
    const [sum] = await both((s) => s.client.callTool(calls[1]!));
    expect(JSON.stringify(sum)).toContain("42");
  });

  it("lists identical resources and prompts, and reads them alike", async () => {
    const [ra, rb] = await both((s) => s.client.listResources());
    expect(ra.resources.length).toBeGreaterThan(0);
    expect(rb).toEqual(ra);
    const uri = ra.resources[0]!.uri;
    const [ca, cb] = await both((s) => s.client.readResource({ uri }));
    expect(cb).toEqual(ca);
    const [pa, pb] = await both((s) => s.client.listPrompts());
    expect(pa.prompts.length).toBeGreaterThan(0);
    expect(pb).toEqual(pa);
    const [ga, gb] = await both((s) => s.client.getPrompt({ name: "simple-prompt" }));
    expect(gb).toEqual(ga);
  });

  it("delivers progress notifications", async () => {
    const [a, b] = await both(async (s) => {
      const progress: number[] = [];
      await s.client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      return progress;
    });
    // The SDK client may settle the call before it dispatches the last notification, so the fourth
    // one can be missed on either path; the first three always arrive, in order.
    expect(a.slice(0, 3)).toEqual([1, 2, 3]);
    expect(b.slice(0, 3)).toEqual([1, 2, 3]);
  });

  it("answers ping", async () => {
    const [a, b] = await both((s) => s.client.ping());
    expect(b).toEqual(a);
  });

  it("cancels a running call and keeps the session usable", async () => {
    const started = Date.now();
    const controller = new AbortController();
    const call = proxy.client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 10, steps: 10 } },
      undefined,
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort("user cancelled"), 200);
    await expect(call).rejects.toThrow(/cancelled/);
    expect(Date.now() - started).toBeLessThan(5000);
    const echo = await proxy.client.callTool({ name: "echo", arguments: { message: "still here" } });
    expect(JSON.stringify(echo)).toContain("still here");
  });
});

describe("server-everything under C-app, its shipped policy", () => {
  let guarded: Session;
  beforeAll(async () => {
    const policy = join(import.meta.dirname, "..", "..", "..", "policies", "servers", "everything.json");
    guarded = await connect(proxied(serverArgs, ["--config", "C-app", "--policy", policy]));
  });
  afterAll(() => guarded?.client.close());

  it("judges an argument a call leaves out as the default the server fills in", async () => {
    await guarded.client.listTools();
    // gzip-file-as-resource fetches its `data` URL, by default one on the internet; the policy lists
    // no destination. Given or left out, the URL is judged, and the call never reaches the server.
    for (const args of [{ name: "a.gz", data: "https://example.com/x" }, { name: "a.gz" }, {}]) {
      const result = await guarded.client.callTool({ name: "gzip-file-as-resource", arguments: args });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(JSON.stringify(result.content), JSON.stringify(args)).toMatch(/Blocked by mcpguard \(L1\)/);
    }
    // A tool whose defaults are harmless still works when they are left out.
    const sum = await guarded.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(JSON.stringify(sum.content)).toContain("3");
  });
});

describe("defaults: judged, not forwarded", () => {
  it("judges an omitted argument as its default, and sends the server the call as the client wrote it (a null default is no value)", async () => {
    const { scratch, work, policy } = workspaceWithPolicy("mcpguard-defaults-", {
      grep_files: { args: { pattern: "scalar", path: "path.read" }, read: ["{{cwd}}/**"] },
    });
    // A server whose schema gives `path` a default of null, as Python servers' `path: str = None`
    // do, and that answers with the arguments it got; and another whose default lies outside.
    const server = (fallback: unknown) => {
      const file = join(scratch, `server-${fallback === null ? "null" : "etc"}.mjs`);
      writeFileSync(
        file,
        `import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") send({ id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "d", version: "1" } } });
  else if (m.method === "tools/list") send({ id: m.id, result: { tools: [{ name: "grep_files", inputSchema: { type: "object", properties: { pattern: { type: "string" }, path: { type: "string", default: ${JSON.stringify(fallback)} } } } }] } });
  else if (m.method === "tools/call") send({ id: m.id, result: { content: [{ type: "text", text: JSON.stringify(m.params.arguments) }] } });
});
`,
      );
      return file;
    };
    try {
      for (const [fallback, sent] of [
        [null, { pattern: "x" }],
        ["/etc", undefined],
      ] as const) {
        const proxy = new RawProxy(
          ["--config", "C-app", "--policy", policy, "--", process.execPath, server(fallback)],
          {
            cwd: work,
          },
        );
        await proxy.initialize();
        proxy.request(1, "tools/list", {});
        await proxy.next();
        proxy.request(2, "tools/call", { name: "grep_files", arguments: { pattern: "x" } });
        const text = ((await proxy.next()) as { result: { content: { text: string }[] } }).result.content[0]!
          .text;
        if (sent) expect(JSON.parse(text)).toEqual(sent);
        else expect(text).toMatch(/Blocked by mcpguard \(L1\).*\/etc/);
        proxy.child.stdin.end();
        await proxy.exited;
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
