/**
 * The server side of the frame soak, started by `mcpguard run` as its MCP server:
 *
 *   node frameServer.js --frames N --seed S --max-depth D
 *
 * It writes N generated frames (hostile ones among them) to stdout, then a `soak/done`
 * notification; it answers every well-formed request it receives (a tool result holding the soak
 * key for `tools/call`), and checks every line the proxy forwarded to it. At the end of its input
 * it reports on stderr, in one line: `mcpguard-frame-soak-server {json}`.
 */
import { parseArgs } from "node:util";
import { type FrameKind, frame, lineProblem, random, SOAK_KEY } from "./generate.js";

export const SERVER_REPORT_PREFIX = "mcpguard-frame-soak-server ";

interface ServerStats {
  sent: number;
  byKind: Partial<Record<FrameKind, number>>;
  received: number;
  malformedReceived: number;
  examples: string[];
}

const write = (bytes: Buffer | string): Promise<void> =>
  process.stdout.write(bytes)
    ? Promise.resolve()
    : new Promise((resolve) => process.stdout.once("drain", resolve));

function answer(message: Record<string, unknown>): string | undefined {
  const { id, method } = message;
  if (id === undefined || typeof method !== "string") return undefined;
  const result =
    method === "tools/call"
      ? { content: [{ type: "text", text: `echo ${SOAK_KEY}` }] }
      : method === "resources/read"
        ? { contents: [{ uri: "file:///k", text: SOAK_KEY }] }
        : {};
  return `${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`;
}

function onLine(line: Buffer, stats: ServerStats, maxDepth: number): void {
  stats.received++;
  const problem = lineProblem(line, maxDepth);
  if (problem) {
    stats.malformedReceived++;
    if (stats.examples.length < 5)
      stats.examples.push(`${problem}: ${line.subarray(0, 80).toString("utf8")}`);
    return;
  }
  const message: unknown = JSON.parse(line.toString("utf8"));
  const items = Array.isArray(message) ? message : [message];
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const reply = answer(item as Record<string, unknown>);
    if (reply) process.stdout.write(reply);
  }
}

function readLines(stats: ServerStats, maxDepth: number, done: () => void): void {
  let pending: Buffer[] = [];
  process.stdin.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      onLine(Buffer.concat([...pending, chunk.subarray(start, nl)]), stats, maxDepth);
      pending = [];
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
  process.stdin.on("end", done);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { frames: { type: "string" }, seed: { type: "string" }, "max-depth": { type: "string" } },
  });
  const frames = Number(values.frames ?? 1000);
  const maxDepth = Number(values["max-depth"] ?? 128);
  const r = random(Number(values.seed ?? 1));
  const stats: ServerStats = { sent: 0, byKind: {}, received: 0, malformedReceived: 0, examples: [] };
  readLines(stats, maxDepth, () => {
    process.stderr.write(`${SERVER_REPORT_PREFIX}${JSON.stringify(stats)}\n`, () => process.exit(0));
  });
  for (let i = 0; i < frames; i++) {
    const f = frame(r, "server", i);
    stats.byKind[f.kind] = (stats.byKind[f.kind] ?? 0) + 1;
    stats.sent++;
    await write(f.bytes);
  }
  await write(`${JSON.stringify({ jsonrpc: "2.0", method: "soak/done" })}\n`);
}

await main();
