/** Behaviour of `mcpguard run` that a client or operator notices: relaying, errors, lifecycle. */

import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LogLimiter } from "../src/relay.ts";
import {
  connect,
  eventually,
  FIXTURE,
  isAlive,
  processesWith,
  proxied,
  RawProxy,
  toolText,
} from "./helpers.ts";

let scratch: string;
let marker: string;

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "mcpguard-relay-"));
  marker = `--marker=${randomUUID()}`;
});

afterEach(async () => {
  // Whatever a test did, no fixture process may outlive it.
  expect(await eventually(() => processesWith(marker).length === 0, 5000)).toBe(true);
  rmSync(scratch, { recursive: true, force: true });
});

const fixture = (...flags: string[]) => ["node", FIXTURE, marker, ...flags];

describe("relaying", () => {
  it("forwards unchanged messages byte for byte, with unknown methods, fields and versions", async () => {
    const record = join(scratch, "received");
    const proxy = new RawProxy(["--", ...fixture("--record", record)]);
    const sent = [
      '{ "jsonrpc" : "2.0", "id": "s-1", "method":"initialize", "params": {"protocolVersion": "2099-12-31", "capabilities": {"future": {}}, "clientInfo": {"name": "c", "version": "9"}}, "x-extra": [1, 2.50] }\r\n',
      '{"jsonrpc":"2.0","method":"notifications/vendor-thing","params":{"ünïcode":"✓"}}\n',
      '{"jsonrpc":"2.0","id":7,"method":"vendor/unknown","params":{}}\n',
      '{"jsonrpc":"2.0","id":"7","method":"ping"}\n',
    ];
    proxy.send(sent[0]!);
    const init = await proxy.next();
    expect(init).toMatchObject({ id: "s-1", result: { protocolVersion: "2099-12-31" } });
    for (const line of sent.slice(1)) proxy.send(line);
    const replies = [await proxy.next(), await proxy.next()];
    expect(replies).toContainEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32601, message: "Method not found: vendor/unknown" },
    });
    expect(replies).toContainEqual({ jsonrpc: "2.0", id: "7", result: {} });
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
    expect(readFileSync(record, "utf8")).toBe(sent.join(""));
  });

  it("answers a malformed client line with a parse error and never forwards it", async () => {
    const record = join(scratch, "received");
    const proxy = new RawProxy(["--", ...fixture("--record", record)]);
    await proxy.initialize();
    proxy.send("this is not json\n");
    expect(await proxy.next()).toMatchObject({
      id: null,
      error: { code: -32700, message: expect.stringMatching(/invalid JSON/) },
    });
    proxy.send(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":9,"method":"ping","x":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}\n'),
      ]),
    );
    expect(await proxy.next()).toMatchObject({
      id: null,
      error: { code: -32700, message: expect.stringMatching(/UTF-8/) },
    });
    proxy.send('{"id":4,"method":"ping"}\n');
    expect(await proxy.next()).toMatchObject({ id: 4, error: { code: -32600 } });
    proxy.request(5, "ping");
    expect(await proxy.next()).toEqual({ jsonrpc: "2.0", id: 5, result: {} });
    proxy.child.stdin.end();
    await proxy.exited;
    const received = readFileSync(record);
    expect(received.includes("not json")).toBe(false);
    expect(received.includes(Buffer.from([0xc3, 0x28]))).toBe(false);
    expect(received.includes('"id":4')).toBe(false);
  });

  it("refuses a client message over the size limit and keeps going", async () => {
    const proxy = new RawProxy(["--max-message-bytes", "300", "--", ...fixture()]);
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "echo", arguments: { text: "a".repeat(400) } });
    // Answered with the id its first bytes hold: the client is not left waiting.
    expect(await proxy.next()).toMatchObject({
      id: 1,
      error: { code: -32700, message: expect.stringMatching(/exceeds the 300-byte limit/) },
    });
    proxy.request(2, "ping");
    expect(await proxy.next()).toMatchObject({ id: 2, result: {} });
    proxy.child.stdin.end();
    await proxy.exited;
  });

  it("drops a server message over the size limit, logs it, and fails its request at once", async () => {
    const proxy = new RawProxy(["--max-message-bytes", "300", "--", ...fixture()]);
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "big", arguments: { bytes: 1000 } });
    expect(await proxy.next()).toMatchObject({
      id: 1,
      error: {
        code: -32603,
        message: expect.stringMatching(/answer to "tools\/call" was dropped: .*300-byte limit/),
      },
    });
    proxy.request(2, "ping");
    expect(await proxy.next()).toMatchObject({ id: 2, result: {} });
    expect(proxy.stderr).toMatch(/exceeds the 300-byte limit/);
    proxy.child.stdin.end();
    await proxy.exited;
  });

  it("carries a multi-megabyte result intact to an SDK client", async () => {
    // 8 MiB: the SDK client's own read buffer stops at 10 MiB.
    const session = await connect(proxied(fixture()));
    const result = await session.client.callTool({ name: "big", arguments: { bytes: 8 * 1024 * 1024 } });
    expect(toolText(result)).toBe("x".repeat(8 * 1024 * 1024));
    await session.client.close();
  });

  it("carries a 20 MiB message both ways", async () => {
    const proxy = new RawProxy(["--", ...fixture()]);
    await proxy.initialize();
    const payload = "é✓".repeat(4 * 1024 * 1024); // 20 MiB of UTF-8
    proxy.request(1, "tools/call", { name: "echo", arguments: { text: payload } });
    const reply = await proxy.next(20_000);
    expect(toolText(reply.result) === payload).toBe(true);
    proxy.child.stdin.end();
    await proxy.exited;
  });

  it("drops junk a server writes to stdout, logs it, and keeps the protocol stream clean", async () => {
    const session = await connect(proxied(fixture("--noisy")));
    const result = await session.client.callTool({ name: "echo", arguments: { text: "through the noise" } });
    expect(toolText(result)).toBe("through the noise");
    expect((await session.client.listTools()).tools.map((t) => t.name)).toContain("echo");
    expect(session.stderr()).toContain("dropped a malformed line from the server");
    await session.client.close();
  });

  it("starts the server with the client's environment and working directory", async () => {
    const session = await connect(proxied(fixture()), {
      ...(process.env as Record<string, string>),
      MCPGUARD_TEST_VALUE: "from-client-config",
    });
    const env = await session.client.callTool({ name: "env", arguments: { name: "MCPGUARD_TEST_VALUE" } });
    expect(toolText(env)).toBe("from-client-config");
    await session.client.close();

    const proxy = new RawProxy(["--", ...fixture()], { cwd: scratch });
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "cwd", arguments: {} });
    expect(toolText((await proxy.next()).result)).toBe(scratch);
    proxy.child.stdin.end();
    await proxy.exited;
  });
});

describe("audit log", () => {
  it("records the server's start and exit and one decision per tool call, digesting the arguments", async () => {
    const log = join(scratch, "audit.ndjson");
    const session = await connect(proxied(fixture(), ["--config", "C0", "--audit-log", log]));
    const secret = `s3cr3t-${randomUUID()}`;
    await session.client.callTool({ name: "echo", arguments: { text: secret } });
    await session.client.callTool({ name: "echo", arguments: { text: secret } });
    await session.client.close();
    const raw = readFileSync(log, "utf8");
    expect(raw).not.toContain(secret);
    const events = raw
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual(["lifecycle", "decision", "decision", "lifecycle"]);
    expect(events[0]).toMatchObject({ event: "start", config: "C0", pid: expect.any(Number) });
    expect(events[1]).toMatchObject({
      server: "server", // from the command (server.mjs), never the server's own claim
      tool: "echo",
      config: "C0",
      layer: "none",
      decision: "allow",
      argsDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      latencyMs: expect.any(Number),
    });
    expect(events[2].argsDigest).toBe(events[1].argsDigest);
    expect(events[3]).toMatchObject({ event: "exit", status: 0, claimedName: "proxy-fixture" });
    for (const event of events) expect(Date.parse(event.time)).not.toBeNaN();
  });
});

describe("slow server", () => {
  it("lets the client time out, and the cancellation reaches the server", async () => {
    const session = await connect(proxied(fixture()));
    const call = session.client.callTool({ name: "sleep", arguments: { ms: 10_000 } }, undefined, {
      timeout: 300,
    });
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toThrow(/timed out/i);
    const seen = JSON.parse(
      toolText(await session.client.callTool({ name: "cancellations", arguments: {} })),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      requestId: expect.anything(),
      reason: expect.stringMatching(/timed out/i),
    });
    await session.client.close();
  });
});

describe("diagnostics", () => {
  it("says the first lines of a kind, then how many more, every 10 s and at the end", () => {
    const said: string[] = [];
    let now = 0;
    const log = new LogLimiter(
      (line) => said.push(line),
      () => now,
    );
    for (let i = 0; i < 25; i++) log.line(`dropped a malformed line from the server (${i} bytes): x`);
    log.line("dropped a message from the server (3 bytes): y");
    expect(said).toHaveLength(21);
    now = 10_000;
    log.line("dropped a malformed line from the server (99 bytes): x");
    expect(said.at(-1)).toBe('6 more lines like "dropped a malformed line from the server" not shown');
    log.line("dropped a malformed line from the server (100 bytes): x");
    log.flush();
    expect(said.at(-1)).toBe('1 more lines like "dropped a malformed line from the server" not shown');
    expect(said).toHaveLength(23);
  });

  it("keeps a flood of junk from the server to a few lines on stderr", async () => {
    const junk = join(scratch, "junk.mjs");
    writeFileSync(
      junk,
      `process.stdin.once("data", (c) => {
        const id = /"id":(\\d+)/.exec(String(c))?.[1] ?? "1";
        process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"j","version":"1"}}}\\n' + "not json\\n".repeat(5000));
      }); // ${marker}\n`,
    );
    const proxy = new RawProxy(["--", "node", junk]);
    await proxy.initialize();
    proxy.child.stdin.end();
    await proxy.exited;
    const lines = proxy.stderr.split("\n").filter((l) => l.includes("malformed line"));
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toMatch(
      /^mcpguard: 4980 more lines like "dropped a malformed line from the server" not shown$/,
    );
  });
});

describe("crashing server", () => {
  it("fails the call in flight, exits with the server's status and leaves no process behind", async () => {
    const pidFile = join(scratch, "grandchild.pid");
    const proxy = new RawProxy(["--", ...fixture("--crash-on", "crash", "--pid-file", pidFile)]);
    await proxy.initialize();
    proxy.request("call-1", "tools/call", { name: "crash", arguments: {} });
    const reply = await proxy.next();
    expect(reply).toMatchObject({
      id: "call-1",
      error: { code: -32000, message: expect.stringMatching(/exited with status 3/) },
    });
    expect((await proxy.exited).code).toBe(3);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
  });

  it("stops a server that closed its output but goes on running, failing the call it left", async () => {
    const proxy = new RawProxy(["--", ...fixture("--mute-on", "mute")]);
    await proxy.initialize();
    proxy.request("call-1", "tools/call", { name: "mute", arguments: {} });
    expect(await proxy.next(10_000)).toMatchObject({
      id: "call-1",
      error: { code: -32000, message: expect.stringMatching(/the MCP server exited/) },
    });
    // Its input ended first, on which the fixture exits (one that does not gets SIGTERM next).
    expect((await proxy.exited).code).toBe(0);
    expect(proxy.stderr).toMatch(/the server closed its output but goes on running; stopping it/);
  });

  it("answers a request sent after the server died", async () => {
    const proxy = new RawProxy(["--", ...fixture("--crash-on", "crash", "--pid-file", join(scratch, "pid"))]);
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "crash", arguments: {} });
    await proxy.next();
    await proxy.exited;
    expect(proxy.unread).toEqual([]);
  });
});

describe("lifecycle", () => {
  it("closes the server's stdin when the client closes, and exits with its status", async () => {
    const proxy = new RawProxy(["--", ...fixture()]);
    await proxy.initialize();
    proxy.child.stdin.end();
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
  });

  it("escalates to SIGTERM and then SIGKILL for a server that ignores both", async () => {
    const proxy = new RawProxy([
      "--close-grace-ms",
      "100",
      "--term-grace-ms",
      "200",
      "--",
      ...fixture("--stubborn"),
    ]);
    await proxy.initialize();
    const started = Date.now();
    proxy.child.stdin.end();
    expect(await proxy.exited).toEqual({ code: 137, signal: null });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("forwards SIGTERM to the server and exits with the server's status", async () => {
    const onTerm = join(scratch, "term");
    const proxy = new RawProxy(["--", ...fixture("--on-term", onTerm)]);
    await proxy.initialize();
    proxy.child.kill("SIGTERM");
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(onTerm, "utf8")).toBe("SIGTERM");
  });

  it("forwards SIGINT, and kills a server that ignores it", async () => {
    const proxy = new RawProxy(["--term-grace-ms", "200", "--", ...fixture("--stubborn")]);
    await proxy.initialize();
    proxy.child.kill("SIGINT");
    // SIGINT kills the stubborn fixture (it only ignores SIGTERM); either way the proxy ends with it.
    const { code } = await proxy.exited;
    expect([130, 137]).toContain(code);
  });
});

describe("command line", () => {
  it("refuses an unknown config by name, before starting anything", async () => {
    const record = join(scratch, "received");
    const proxy = new RawProxy(["--config", "C-nope", "--", ...fixture("--record", record)]);
    expect((await proxy.exited).code).toBe(2);
    expect(proxy.stderr).toMatch(
      /unknown config "C-nope"; the configs are C0, C-AB, C-app, C-ebpf, C-full, C-AB\+ebpf/,
    );
    expect(existsSync(record)).toBe(false);
  });

  it("reports a server that cannot be started in one line, exit 2, before spawning anything", async () => {
    const notExecutable = join(mkdtempSync(join(tmpdir(), "mcpguard-noexec-")), "server.py");
    writeFileSync(notExecutable, "print(1)\n", { mode: 0o644 });
    for (const [argv, line] of [
      ["/nonexistent/mcp-server", 'cannot find the server\'s program "/nonexistent/mcp-server"'],
      ["no-such-mcp-server", 'cannot find the server\'s program "no-such-mcp-server" on its PATH'],
      ["", "the server's command is empty"],
      [
        notExecutable,
        `cannot run the server's program ${JSON.stringify(notExecutable)}: it is not executable`,
      ],
    ] as const) {
      const proxy = new RawProxy(["--", argv]);
      expect((await proxy.exited).code, argv).toBe(2);
      expect(proxy.stderr, argv).toBe(`mcpguard run: ${line}\n`);
    }
    rmSync(join(notExecutable, ".."), { recursive: true, force: true });
  });

  it("requires a server command", async () => {
    const proxy = new RawProxy(["--config", "C0"]);
    expect((await proxy.exited).code).toBe(2);
    expect(proxy.stderr).toMatch(/no server command given/);
  });
});
