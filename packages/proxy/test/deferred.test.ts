/**
 * What `mcpguard run` sets up once the server is released (layers.ts `defer`, `complete`): the
 * layers refuse rather than pass before it is done, are whole after it, and the relay reads no
 * message before it, and stops the server when it fails.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildLayers } from "../src/layers.ts";
import { Relay } from "../src/relay.ts";

const POLICY = join(import.meta.dirname, "fixtures", "policy.json");
const KEY = "AKIAQ3EGZT5NXBRW7YLM";
const base = { layers: ["L1", "L2"] as const, policy: POLICY, env: process.env, cwd: process.cwd() };
const answer = {
  jsonrpc: "2.0",
  id: 3,
  result: { content: [{ type: "text", text: `key ${KEY} here` }] },
};
const request = {
  method: "tools/call",
  params: { name: "echo", arguments: {} },
  call: { name: "echo", arguments: {} },
};

describe("layers left for after the release", () => {
  it("without defer, are whole at once", async () => {
    const layers = await buildLayers({ ...base });
    expect(layers.complete).toBeUndefined();
    expect(JSON.stringify(layers.interceptor?.response?.(request, answer))).not.toContain(KEY);
  });

  it("with defer, throw (so the relay refuses) until complete() has run, then sanitize", async () => {
    const layers = await buildLayers({ ...base, defer: true });
    expect(layers.complete).toBeTypeOf("function");
    // Present before, so that the relay matches answers by exact id from its construction.
    expect(layers.interceptor?.response).toBeTypeOf("function");
    expect(() => layers.interceptor?.response?.(request, answer)).toThrow(/the validator is not loaded yet/);
    await layers.complete?.();
    expect(JSON.stringify(layers.interceptor?.response?.(request, answer))).not.toContain(KEY);
  });
});

/** A relay over a server that answers its first line with `{"hello":1}`, its input and output collected. */
function relayOver(ready: Promise<void>) {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString();
  });
  const logs: string[] = [];
  const script =
    'process.stdout.write(JSON.stringify({jsonrpc:"2.0",method:"notifications/hello"})+"\\n");' +
    'process.stdin.on("data",()=>{});process.stdin.on("end",()=>process.exit(0));';
  const relay = new Relay({
    argv: [process.execPath, "-e", script],
    config: "C-app",
    input,
    output,
    log: (line) => logs.push(line),
    ready,
    closeGraceMs: 100,
    termGraceMs: 100,
  });
  return { status: relay.run(), input, written: () => written, logs };
}

describe("the relay, given what is left to set up", () => {
  it("passes nothing on until it is done", async () => {
    let done = () => {};
    const r = relayOver(new Promise<void>((resolve) => (done = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.written()).toBe("");
    done();
    for (let i = 0; i < 100 && !r.written(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.written()).toContain("notifications/hello");
    r.input.end();
    expect(await r.status).toBe(0);
  });

  it("stops the server, saying why, when it fails", { timeout: 15_000 }, async () => {
    const r = relayOver(Promise.reject(new Error("no validator")));
    expect(await r.status).not.toBe(0);
    expect(r.written()).toBe("");
    expect(r.logs.join("\n")).toMatch(/stopping the server: a layer could not be set up: no validator/);
  });
});
