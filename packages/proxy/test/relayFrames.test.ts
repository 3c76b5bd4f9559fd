/**
 * Generated frames both ways through the whole relay: the in-process Relay over PassThrough streams
 * with a real server process, and a few runs through the built CLI. The server side is a mirror
 * that writes whatever frame the test hands it. The relay never dies, and every line it writes is
 * one well-formed message.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { LineFramer } from "@mcpguard/protocol";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { buildLayers } from "../src/layers.ts";
import { type Interceptor, Relay } from "../src/relay.ts";
import { lineProblem, traffic } from "./frames.ts";
import { MCPGUARD } from "./helpers.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const MIRROR = join(FIXTURES, "mirror.mjs");
const POLICY = join(FIXTURES, "policy.json");
const MAX_DEPTH = 64;

type Lines = ["client" | "server", Buffer][];

/** The client's bytes: its own lines, and the server's lines wrapped in a `mirror/emit` for the mirror. */
function clientBytes(lines: Lines): Buffer {
  return Buffer.concat(
    lines.map(([side, bytes]) =>
      side === "client"
        ? bytes
        : Buffer.from(
            `${JSON.stringify({ jsonrpc: "2.0", method: "mirror/emit", params: { b64: bytes.toString("base64") } })}\n`,
          ),
    ),
  );
}

/** Split what the relay wrote into its lines, each with its terminator. */
function linesOf(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const framer = new LineFramer(
    { frame: (f) => out.push(f.raw), error: () => out.push(Buffer.from("too large")) },
    1 << 26,
  );
  framer.push(bytes);
  framer.end();
  return out;
}

let appLayers: Interceptor | undefined;
beforeAll(async () => {
  const layers = await buildLayers({
    layers: ["L1", "L2"],
    policy: POLICY,
    env: process.env,
    cwd: process.cwd(),
    maxDepth: MAX_DEPTH,
  });
  appLayers = layers.interceptor;
});

async function throughRelay(lines: Lines, interceptor: Interceptor | undefined) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: Buffer[] = [];
  output.on("data", (chunk: Buffer) => written.push(chunk));
  const logs: string[] = [];
  const relay = new Relay({
    argv: [process.execPath, MIRROR],
    config: interceptor ? "C-app" : "C0",
    input,
    output,
    interceptor,
    maxDepth: MAX_DEPTH,
    log: (line) => logs.push(line),
    closeGraceMs: 2000,
  });
  const status = relay.run();
  input.end(clientBytes(lines));
  return { status: await status, lines: linesOf(Buffer.concat(written)), logs };
}

describe("the in-process relay", () => {
  for (const [config, interceptor] of [
    ["C0", () => undefined],
    ["C-app", () => appLayers],
  ] as const) {
    it(`${config}: any traffic both ways, and the relay writes only well-formed lines and exits with the server`, async () => {
      await fc.assert(
        fc.asyncProperty(traffic, async (lines) => {
          const run = await throughRelay(lines, interceptor());
          expect(run.status).toBe(0);
          for (const line of run.lines) expect(lineProblem(line, MAX_DEPTH)).toBeUndefined();
          expect(run.logs.filter((l) => l.includes("failed to handle"))).toEqual([]);
        }),
        { numRuns: 12 },
      );
    });
  }
});

describe("the CLI", () => {
  it("C0 and C-app: any traffic both ways, and the proxy writes only well-formed lines and exits 0", async () => {
    const { spawn } = await import("node:child_process");
    await fc.assert(
      fc.asyncProperty(traffic, fc.constantFrom("C0", "C-app"), async (lines, config) => {
        const policy = config === "C0" ? [] : ["--policy", POLICY];
        const child = spawn(
          process.execPath,
          [
            MCPGUARD,
            "run",
            "--config",
            config,
            ...policy,
            "--max-depth",
            String(MAX_DEPTH),
            "--",
            process.execPath,
            MIRROR,
          ],
          { stdio: ["pipe", "pipe", "pipe"] },
        );
        const out: Buffer[] = [];
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
        child.stdin.end(clientBytes(lines));
        expect(await exited).toBe(0);
        for (const line of linesOf(Buffer.concat(out))) expect(lineProblem(line, MAX_DEPTH)).toBeUndefined();
        expect(stderr).not.toMatch(/failed to handle|RangeError|at .*\.js:\d+/);
      }),
      { numRuns: 6 },
    );
  });
});
