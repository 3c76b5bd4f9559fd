/**
 * The relay's handling of every frame, in process: generated traffic both ways through the real
 * Router with the real layers of C0, C-AB and C-app. The proxy never fails on a frame; every line
 * it writes is one well-formed message; under C-app no result-bearing message reaches the client
 * uninspected, whatever id the server gives it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { LineFramer, MAX_BATCH_ITEMS } from "@mcpguard/protocol";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuditLog, AuditWriteError, canonicalJson } from "../src/audit.ts";
import { buildLayers } from "../src/layers.ts";
import { type Interceptor, Router } from "../src/router.ts";
import { anyId, json, lineProblem, traffic } from "./frames.ts";

const POLICY = join(import.meta.dirname, "fixtures", "policy.json");
const MAX_DEPTH = 64;
const KEY = "AKIAQ3EGZT5NXBRW7YLM";

let interceptors: Record<"C0" | "C-AB" | "C-app", Interceptor | undefined>;
beforeAll(async () => {
  const base = { env: process.env, cwd: process.cwd(), maxDepth: MAX_DEPTH };
  interceptors = {
    C0: undefined,
    "C-AB": (
      await buildLayers({
        ...base,
        layers: ["AB"],
        manifest: join(import.meta.dirname, "fixtures", "manifest.json"),
      })
    ).interceptor,
    "C-app": (await buildLayers({ ...base, layers: ["L1", "L2"], policy: POLICY })).interceptor,
  };
});

/** A Router whose outputs and diagnostics are collected, fed through the real line framer. */
function harness(interceptor: Interceptor | undefined, audit?: AuditLog) {
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  const logs: string[] = [];
  const router = new Router({
    config: "test",
    interceptor,
    audit,
    maxDepth: MAX_DEPTH,
    serverName: "fixture",
    toServer: (b) => toServer.push(b),
    toClient: (b) => toClient.push(b),
    log: (l) => logs.push(l),
  });
  const framers = {
    client: new LineFramer(
      { frame: (f) => router.clientFrame(f), error: (e) => router.clientTooLarge(e) },
      1 << 22,
    ),
    server: new LineFramer(
      { frame: (f) => router.serverFrame(f), error: (e) => router.serverTooLarge(e) },
      1 << 22,
    ),
  };
  const send = (side: "client" | "server", bytes: Buffer | string) =>
    framers[side].push(typeof bytes === "string" ? Buffer.from(bytes) : bytes);
  const json = (side: "client" | "server", value: unknown) => send(side, `${JSON.stringify(value)}\n`);
  const end = (side: "client" | "server") => framers[side].end();
  return { router, toServer, toClient, logs, send, json, end };
}

describe("any traffic", () => {
  for (const config of ["C0", "C-AB", "C-app"] as const) {
    it(`${config}: never fails on a frame, and writes only well-formed lines`, () => {
      fc.assert(
        fc.property(traffic, (lines) => {
          const h = harness(interceptors[config]);
          for (const [side, bytes] of lines) h.send(side, bytes);
          for (const out of [...h.toServer, ...h.toClient])
            expect(lineProblem(out, MAX_DEPTH)).toBeUndefined();
          expect(h.logs.filter((l) => l.includes("failed to handle"))).toEqual([]);
        }),
        { numRuns: 150 },
      );
    });
  }

  it("C0: a clean message passes as the very bytes received, both ways", () => {
    const clean = fc.record({
      jsonrpc: fc.constant("2.0"),
      id: fc.integer(),
      method: fc.string(),
      params: fc.jsonValue({ maxDepth: 3 }),
    });
    fc.assert(
      fc.property(clean, fc.constantFrom("\n", "\r\n"), (message, end) => {
        const h = harness(undefined);
        const bytes = Buffer.from(`${JSON.stringify(message, null, 1).replace(/\n/g, " ")}${end}`);
        h.send("client", bytes);
        h.send("server", bytes);
        expect(h.toServer).toEqual([bytes]);
        expect(h.toClient).toEqual([bytes]);
      }),
      { numRuns: 200 },
    );
  });
});

describe("a peer that exits mid-line", () => {
  for (const config of ["C0", "C-AB", "C-app"] as const) {
    it(`${config}: its last message still ends its own line, before the proxy's errors`, () => {
      const h = harness(interceptors[config]);
      for (const id of [3, 4]) h.json("client", { jsonrpc: "2.0", id, method: "ping" });
      // The server answers 3 without a newline and exits; 4 stays unanswered.
      h.send("server", '{"jsonrpc":"2.0","id":3,"result":{}}');
      h.end("server");
      h.router.failInFlight(0);
      const lines = Buffer.concat(h.toClient).toString().split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.map((l) => JSON.parse(l).id)).toEqual([3, 4]);
      expect(JSON.parse(lines[1] as string).error.code).toBe(-32000);
    });
  }
});

describe("what a message costs the proxy is bounded by its bytes", () => {
  for (const config of ["C0", "C-AB", "C-app"] as const) {
    it(`${config}: a batch of more than MAX_BATCH_ITEMS gets one error, and a server's invalid items one line`, () => {
      const h = harness(interceptors[config]);
      h.send(
        "client",
        `[${Array(MAX_BATCH_ITEMS + 1)
          .fill("1")
          .join(",")}]\n`,
      );
      expect(h.toServer).toEqual([]);
      expect(h.toClient.map((b) => JSON.parse(b.toString()))).toEqual([
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32600,
            message: `Invalid request: a batch of ${MAX_BATCH_ITEMS + 1} messages, more than the ${MAX_BATCH_ITEMS} accepted`,
          },
        },
      ]);
      h.send("server", `[${Array(500).fill("1").join(",")}]\n`);
      expect(h.logs).toEqual([
        "dropped 500 invalid messages from a server batch; the first: message is not a JSON object",
      ]);
    });

    it(`${config}: an id a JSON reader cannot hold exactly is refused, not rounded onto another`, () => {
      const h = harness(interceptors[config]);
      h.send("client", '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n');
      h.send("client", '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}\n');
      expect(h.toServer.map((b) => b.toString())).toEqual([
        '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}\n',
      ]);
      expect(JSON.parse((h.toClient[0] as Buffer).toString())).toMatchObject({
        id: null,
        error: { code: -32600 },
      });
    });
  }
});

describe("a request the client cancels", () => {
  for (const config of ["C0", "C-app"] as const) {
    it(`${config}: is no longer in flight, and a late answer to it is ${config === "C0" ? "forwarded as is" : "dropped without a word"}`, () => {
      const h = harness(interceptors[config]);
      for (let id = 1; id <= 3000; id++) {
        h.json("client", { jsonrpc: "2.0", id, method: "ping" });
        h.json("client", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
      }
      expect(h.router.inFlight).toBe(0);
      h.json("server", { jsonrpc: "2.0", id: 3000, result: {} });
      expect(h.toClient).toHaveLength(config === "C0" ? 1 : 0);
      expect(h.logs).toEqual([]);
    });
  }
});

describe("a message over --max-message-bytes", () => {
  for (const config of ["C0", "C-app"] as const) {
    it(`${config}: leaves no request waiting: the client's gets its own id, one the server's would answer an error`, () => {
      const toClient: unknown[] = [];
      const toServer: Buffer[] = [];
      const logs: string[] = [];
      const router = new Router({
        config: "test",
        interceptor: interceptors[config],
        maxDepth: MAX_DEPTH,
        serverName: "fixture",
        toServer: (b) => toServer.push(b),
        toClient: (b) => toClient.push(JSON.parse(b.toString())),
        log: (l) => logs.push(l),
      });
      const framer = (side: "client" | "server") =>
        new LineFramer(
          side === "client"
            ? { frame: (f) => router.clientFrame(f), error: (e) => router.clientTooLarge(e) }
            : { frame: (f) => router.serverFrame(f), error: (e) => router.serverTooLarge(e) },
          200,
        );
      const [client, server] = [framer("client"), framer("server")];
      client.push(
        Buffer.from(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"s":"${"x".repeat(300)}"}}\n`),
      );
      client.push(Buffer.from('{"jsonrpc":"2.0","id":9,"method":"ping"}\n'));
      server.push(Buffer.from(`{"jsonrpc":"2.0","id":9,"result":{"s":"${"x".repeat(300)}"}}\n`));
      expect(toServer).toHaveLength(1);
      expect(toClient).toMatchObject([
        { id: "big", error: { code: -32700 } },
        { id: 9, error: { code: -32603, message: expect.stringMatching(/answer to "ping" was dropped/) } },
      ]);
      expect(router.inFlight).toBe(0);
      expect(logs).toEqual([
        expect.stringMatching(/^dropped a message from the server: message of at least/),
      ]);
      // A request of the server's own, or the client's answer to one, answers none of the client's.
      client.push(Buffer.from('{"jsonrpc":"2.0","id":11,"method":"tools/list"}\n'));
      server.push(
        Buffer.from(
          `{"jsonrpc":"2.0","id":11,"method":"sampling/createMessage","params":{"s":"${"x".repeat(300)}"}}\n`,
        ),
      );
      client.push(Buffer.from(`{"jsonrpc":"2.0","id":11,"result":{"s":"${"x".repeat(300)}"}}\n`));
      expect(toClient.slice(2)).toMatchObject([{ id: null, error: { code: -32700 } }]);
      expect(router.inFlight).toBe(1);
    });
  }
});

describe("an audit log that can no longer be written (a full disk)", () => {
  /** A log whose file refuses records of the given decisions, as a full disk refuses writes. */
  const failing = (decisions: string[]) =>
    ({
      write(event: { decision?: string }) {
        if (event.decision && decisions.includes(event.decision))
          throw new AuditWriteError("the audit log /full/audit.ndjson cannot be written: ENOSPC");
      },
    }) as unknown as AuditLog;

  it("refuses a call it cannot record, and says why", () => {
    const h = harness(interceptors["C-app"], failing(["allow", "deny"]));
    h.json("client", {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "read_file", arguments: { path: "a" } },
    });
    expect(h.toServer).toEqual([]);
    expect(JSON.parse((h.toClient[0] as Buffer).toString())).toMatchObject({
      id: 7,
      error: {
        code: -32603,
        message: expect.stringMatching(/could not record the message in its audit log/),
      },
    });
  });

  it("answers every request of a batch it could not record, once, and forwards none of it", () => {
    let writes = 0;
    const secondFails = {
      write() {
        if (++writes === 2)
          throw new AuditWriteError("the audit log /full/audit.ndjson cannot be written: ENOSPC");
      },
    } as unknown as AuditLog;
    const h = harness(interceptors["C-app"], secondFails);
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "read_file", arguments: { path: "a" } },
    });
    h.json("client", [call(1), { jsonrpc: "2.0", id: 2, method: "ping" }, call(3), call(4)]);
    expect(h.toServer).toEqual([]);
    const answers = h.toClient.map((b) => JSON.parse(b.toString()));
    // Each once: 1 was decided (and recorded) before the log failed, the others get the error.
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4]);
    for (const a of answers.filter((a) => a.id !== 1))
      expect(a.error.message).toMatch(/could not record the batch in its audit log/);
    expect(h.router.inFlight).toBe(0);
  });

  it("answers a request whose result it could not record the change of, instead of dropping it", () => {
    const h = harness(interceptors["C-app"], failing(["modify"]));
    h.json("client", { jsonrpc: "2.0", id: 8, method: "resources/read", params: { uri: "file:///k" } });
    h.json("server", { jsonrpc: "2.0", id: 8, result: { contents: [{ uri: "file:///k", text: KEY }] } });
    const answer = JSON.parse((h.toClient[0] as Buffer).toString());
    expect(answer).toMatchObject({ id: 8, error: { code: -32603 } });
    expect(JSON.stringify(answer)).not.toContain(KEY);
    expect(h.logs).toEqual([
      'withheld a message for "resources/read": the audit log /full/audit.ndjson cannot be written: ENOSPC',
    ]);
  });
});

/** Server answers that carry the key where a client shows it to the agent. */
const planted = fc.constantFrom<(id: unknown) => unknown>(
  (id) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${KEY} here` }] } }),
  (id) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: JSON.stringify({ k: KEY }) }] } }),
  (id) => ({ jsonrpc: "2.0", id, result: { structuredContent: { k: KEY }, content: [] } }),
  (id) => ({ jsonrpc: "2.0", id, result: { contents: [{ uri: "file:///k", text: KEY }] } }),
  (id) => ({
    jsonrpc: "2.0",
    id,
    result: { messages: [{ role: "user", content: { type: "text", text: KEY } }] },
  }),
  (id) => ({ jsonrpc: "2.0", id, result: { completion: { values: [KEY] } } }),
  (id) => ({ jsonrpc: "2.0", id, result: { task: { taskId: "t1", status: "failed", statusMessage: KEY } } }),
  (id) => ({ jsonrpc: "2.0", id, error: { code: -32000, message: `failed with ${KEY}` } }),
  (id) => ({ jsonrpc: "2.0", id, error: { code: -32000, message: "x", data: { env: [KEY] } } }),
  () => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: { k: KEY } } }),
  () => ({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 1, message: KEY },
  }),
  (id) => ({
    jsonrpc: "2.0",
    id,
    method: "sampling/createMessage",
    params: { messages: [{ role: "user", content: { type: "text", text: KEY } }], maxTokens: 9 },
  }),
  (id) => ({
    jsonrpc: "2.0",
    id,
    method: "elicitation/create",
    params: { message: KEY, requestedSchema: {} },
  }),
);

/** Ids a coercing client would match to `id`, and some it would not. */
function shapesOf(id: number | string): fc.Arbitrary<unknown> {
  const n = Number(id);
  const loose = Number.isNaN(n) ? [id] : [n, String(n), ` ${n}`, `${n}.0`, `0x${n.toString(16)}`, `${n}e0`];
  return fc.oneof(fc.constant(id), fc.constantFrom(...loose, null, ""), anyId);
}

const RESULT_METHODS = [
  "tools/call",
  "tasks/result",
  "resources/read",
  "prompts/get",
  "completion/complete",
  "ping",
  "logging/setLevel",
  "vendor/x",
];

describe("C-app inspects every message the client could accept", () => {
  it("a planted AWS key never reaches the client, whatever the id, alone or in a batch", () => {
    const request = fc.record({
      id: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom("3", "a", "0x3")),
      method: fc.constantFrom(...RESULT_METHODS),
    });
    const scenario = request.chain((req) =>
      fc.record({
        req: fc.constant(req),
        answers: fc.array(fc.tuple(planted, shapesOf(req.id)), { minLength: 1, maxLength: 4 }),
        batched: fc.boolean(),
      }),
    );
    fc.assert(
      fc.property(scenario, ({ req, answers, batched }) => {
        const h = harness(interceptors["C-app"]);
        const params = req.method === "tools/call" ? { name: "echo", arguments: { text: "hi" } } : {};
        h.json("client", { jsonrpc: "2.0", id: req.id, method: req.method, params });
        const messages = answers.map(([make, id]) => make(id));
        if (batched) h.json("server", messages);
        else for (const m of messages) h.json("server", m);
        for (const out of h.toClient) expect(out.toString("utf8")).not.toContain(KEY);
      }),
      { numRuns: 400 },
    );
  });

  it("forwards only responses whose id is exactly that of a request in flight", () => {
    const h = harness(interceptors["C-app"]);
    h.json("client", { jsonrpc: "2.0", id: 3, method: "ping" });
    h.json("server", { jsonrpc: "2.0", id: "3", result: {} });
    h.json("server", { jsonrpc: "2.0", id: null, error: { code: 1, message: "x" } });
    expect(h.toClient).toEqual([]);
    expect(h.logs).toHaveLength(2);
    expect(h.logs[0]).toMatch(/id "3" is not exactly the id of a request in flight/);
    h.json("server", { jsonrpc: "2.0", id: 3, result: {} });
    expect(h.toClient.map((b) => JSON.parse(b.toString()))).toEqual([{ jsonrpc: "2.0", id: 3, result: {} }]);
  });

  it("refuses a request whose id a coercing client would confuse with one in flight", () => {
    const h = harness(interceptors["C-app"]);
    h.json("client", { jsonrpc: "2.0", id: 3, method: "ping" });
    h.json("client", { jsonrpc: "2.0", id: "3", method: "ping" });
    expect(h.toServer).toHaveLength(1);
    expect(JSON.parse(h.toClient[0]?.toString() ?? "")).toMatchObject({ id: "3", error: { code: -32600 } });
  });

  it("forwards what the layers decided on when a key appears twice", () => {
    const h = harness(interceptors["C-app"]);
    h.send(
      "client",
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/etc/passwd","path":"readme.txt"}}}\n',
    );
    expect(h.toServer.map((b) => b.toString())).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"readme.txt"}}}\n',
    ]);
    h.send(
      "server",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${KEY}"}]},"result":{"content":[]}}\n`,
    );
    expect(h.toClient.map((b) => b.toString())).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n',
    ]);
  });
});

/** JSON as Python's json.dumps writes it: ", " and ": ", non-ASCII as \\uXXXX (and "/" as "\\/", as PHP does). */
function pythonJson(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value)
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .replaceAll("/", "\\/");
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

describe("C-app keeps the server's bytes", () => {
  const LOCK = gunzipSync(
    readFileSync(join(import.meta.dirname, "../../validator/test/fixtures/real-files/package-lock.json.gz")),
  ).toString();
  const call = (h: ReturnType<typeof harness>) =>
    h.json("client", {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    });

  it("forwards a result with nothing to redact as the bytes received, in any spelling", () => {
    for (const frame of [
      `{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "caf\\u00e9 \\/x"}], "n": 1.50, "e": 1E3}}\r\n`,
      `${pythonJson({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: LOCK }] } })}\n`,
      `  { "id" : 1 , "result" : { "content" : [ ] } , "jsonrpc" : "2.0" }\n`,
    ]) {
      const h = harness(interceptors["C-app"]);
      call(h);
      h.send("server", frame);
      expect(h.toClient.map((b) => b.toString())).toEqual([frame]);
    }
  });

  it("changes only the redacted span of a result, in the frame and in the JSON text it carries", () => {
    const token = `ghp_${"aB3".repeat(12)}`;
    const lock = LOCK.replace(
      '"version": "0.1.0",\n',
      `"version": "0.1.0",\n      "resolved": "git+https://${token}@github.com/o/p.git",\n`,
    );
    const frame = `${pythonJson({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: lock }], isError: false } })}\n`;
    const h = harness(interceptors["C-app"]);
    call(h);
    h.send("server", frame);
    expect(h.toClient.map((b) => b.toString())).toEqual([frame.replace(token, "[REDACTED token]")]);
    const text = JSON.parse(h.toClient[0]?.toString() ?? "").result.content[0].text as string;
    expect(text.split("\n")).toHaveLength(lock.split("\n").length);
  });

  it("keeps every other item of a batch as received when one is dropped", () => {
    const h = harness(interceptors["C-app"]);
    const note = `{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1.0}}`;
    h.send("server", `[ ${note} , 5 ]\n`);
    expect(h.toClient.map((b) => b.toString())).toEqual([`[${note}]\n`]);
  });
});

describe("a layer that fails on a server's own request", () => {
  it("withholds it from the client and answers the server, which would otherwise wait", () => {
    const failing: Interceptor = {
      toolCall: () => ({ decision: "allow", layer: "L2", rule: null, reason: "ok" }),
      serverMessage: () => {
        throw new Error("boom");
      },
    };
    const h = harness(failing);
    h.json("server", { jsonrpc: "2.0", id: 7, method: "sampling/createMessage", params: { messages: [] } });
    h.json("server", {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "x" },
    });
    expect(h.toClient).toEqual([]);
    const answers = h.toServer.map((b) => JSON.parse(b.toString()));
    expect(answers).toEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32603, message: expect.stringMatching(/could not inspect this request/) },
      },
    ]);
    expect(h.logs.filter((l) => l.includes("boom"))).toHaveLength(2);
  });
});

describe("frames no walk can survive", () => {
  const deep = (d: number) => `${"[".repeat(d)}${"]".repeat(d)}`;
  for (const config of ["C0", "C-AB", "C-app"] as const) {
    it(`${config}: 100,000-deep frames are refused with the request's id, and the relay goes on`, () => {
      const h = harness(interceptors[config]);
      h.send(
        "client",
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":${deep(100_000)}}}}\n`,
      );
      h.send("client", `[{"jsonrpc":"2.0","id":2,"method":"ping"},${deep(100_000)}]\n`);
      h.send("server", `{"jsonrpc":"2.0","method":"notifications/message","params":${deep(100_000)}}\n`);
      h.json("client", { jsonrpc: "2.0", id: 3, method: "ping" });
      const replies = h.toClient.map((b) => JSON.parse(b.toString()));
      expect(replies).toEqual([
        {
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32600, message: expect.stringMatching(/deeper than 64 levels/) },
        },
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: expect.stringMatching(/deeper than 64 levels/) },
        },
      ]);
      expect(h.logs).toEqual([expect.stringMatching(/dropped a message from the server .*deeper than 64/)]);
      expect(h.toServer).toHaveLength(1);
    });
  }
});

describe("canonicalJson", () => {
  /** The recursive definition it replaced. */
  const reference = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
    if (value !== null && typeof value === "object") {
      const entries = Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(",")}}`;
    }
    return JSON.stringify(value) ?? "null";
  };

  it("writes what the recursive definition wrote", () => {
    fc.assert(
      fc.property(json(5), (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 300 },
    );
  });

  it("digests a value nested 100,000 deep", () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = { a: [value] };
    expect(canonicalJson(value)).toHaveLength(100_000 * 8 + 1);
  });
});
