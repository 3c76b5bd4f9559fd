/**
 * Frames for the frame soak, drawn from a seeded generator so a run can be repeated: valid
 * JSON-RPC of every shape and hostile frames (malformed, random bytes, nesting past the limit,
 * bare CR, raw U+2028, batches, ids of every type, large strings). Shared by the soak's driver
 * (the client side) and its server.
 */

/** A fake AWS key the soak's server plants in what it sends; C-full must never let it through. */
export const SOAK_KEY = "AKIAQ3EGZT5NXBRW7YLM";

/** mulberry32: small, fast, and the same sequence for the same seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;
const int = (r: Rng, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rng, items: readonly T[]): T => items[int(r, items.length)] as T;

const ODD = ["\u2028", "\u2029", "\u0085", "é", "✓", "𝄞", '"', "\\", "[", "{", "\t"];
function text(r: Rng, max = 40): string {
  let out = "";
  const n = int(r, max);
  for (let i = 0; i < n; i++) out += r() < 0.1 ? pick(r, ODD) : String.fromCharCode(32 + int(r, 95));
  return out;
}

function oddId(r: Rng): unknown {
  return pick(r, [
    null,
    true,
    [1],
    { a: 1 },
    1.5,
    -0,
    1e21,
    "",
    " 3",
    "3.0",
    "0x3",
    int(r, 10),
    `s${int(r, 10)}`,
  ]);
}

const nested = (depth: number, inner: string) => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;

/** A depth past any sane limit: usually a few hundred, sometimes 100,000. */
const deepDepth = (r: Rng) => (r() < 0.01 ? 100_000 : 129 + int(r, 2000));

function insertAt(r: Rng, line: string, what: string): string {
  const at = int(r, line.length + 1);
  return `${line.slice(0, at)}${what}${line.slice(at)}`;
}

export type FrameKind =
  | "valid"
  | "batch"
  | "malformed"
  | "bytes"
  | "deep"
  | "bare-cr"
  | "separator"
  | "odd-id"
  | "big"
  | "planted";

/** One frame: its kind and its bytes, terminator included. */
export interface Frame {
  kind: FrameKind;
  bytes: Buffer;
}

const line = (kind: FrameKind, body: string | Buffer, r: Rng): Frame => ({
  kind,
  bytes: Buffer.concat([
    typeof body === "string" ? Buffer.from(body) : body,
    Buffer.from(r() < 0.1 ? "\r\n" : "\n"),
  ]),
});

/** A message a client sends: requests the soak's server answers, and the rest. */
function clientMessage(r: Rng, id: number): Record<string, unknown> {
  switch (int(r, 6)) {
    case 0:
      return { jsonrpc: "2.0", id, method: "ping" };
    case 1:
      return {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo", arguments: { text: text(r) } },
      };
    case 2:
      return {
        jsonrpc: "2.0",
        id: `c-${id}`,
        method: "resources/read",
        params: { uri: `file:///${int(r, 99)}` },
      };
    case 3:
      return { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: int(r, id + 1) } };
    case 4:
      return { jsonrpc: "2.0", id: int(r, 50), result: { x: text(r, 10) } };
    default:
      return { jsonrpc: "2.0", id, method: "vendor/thing", params: { a: [text(r), { b: int(r, 9) }] } };
  }
}

/** A message a server sends of its own accord, or an answer to no one in particular. */
function serverMessage(r: Rng): Record<string, unknown> {
  switch (int(r, 5)) {
    case 0:
      return { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: text(r) } };
    case 1:
      return {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: int(r, 9), progress: 1 },
      };
    case 2:
      return { jsonrpc: "2.0", id: int(r, 1000), result: { content: [{ type: "text", text: text(r) }] } };
    case 3:
      return {
        jsonrpc: "2.0",
        id: `s-${int(r, 9)}`,
        method: "sampling/createMessage",
        params: { messages: [] },
      };
    default:
      return { jsonrpc: "2.0", id: int(r, 1000), error: { code: -32000, message: text(r) } };
  }
}

/** A result-bearing message with the key in it, as a hostile server would send. */
function planted(r: Rng): unknown {
  const id = r() < 0.5 ? int(r, 1000) : String(int(r, 1000));
  return pick(r, [
    { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${SOAK_KEY}` }] } },
    { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: { k: SOAK_KEY } } },
    { jsonrpc: "2.0", id, error: { code: -1, message: SOAK_KEY } },
    [{ jsonrpc: "2.0", id, result: { contents: [{ uri: "file:///k", text: SOAK_KEY }] } }],
  ]);
}

/** One frame from `side`, its kind drawn with fixed weights. */
export function frame(r: Rng, side: "client" | "server", id: number): Frame {
  const message = () => (side === "client" ? clientMessage(r, id) : serverMessage(r));
  const roll = r();
  if (roll < 0.4) return line("valid", JSON.stringify(message()), r);
  if (roll < 0.45) return line("batch", JSON.stringify(Array.from({ length: 1 + int(r, 3) }, message)), r);
  if (roll < 0.52)
    return line("malformed", insertAt(r, JSON.stringify(message()), pick(r, ["}", ",", "x", '"'])), r);
  if (roll < 0.56)
    return line(
      "bytes",
      Buffer.from(Array.from({ length: int(r, 120) }, () => int(r, 256)).filter((b) => b !== 10)),
      r,
    );
  if (roll < 0.64) {
    const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${nested(deepDepth(r), "{}")}}`;
    return line("deep", r() < 0.5 ? body : nested(deepDepth(r), "1"), r);
  }
  if (roll < 0.72) return line("bare-cr", insertAt(r, JSON.stringify(message()), "\r"), r);
  if (roll < 0.8) {
    const m = { ...message(), note: `a${pick(r, ["\u2028", "\u2029", "\u0085"])}b` };
    return line("separator", JSON.stringify(m), r);
  }
  if (roll < 0.86) return line("odd-id", JSON.stringify({ ...message(), id: oddId(r) }), r);
  if (roll < 0.865) {
    const big = "x".repeat(64 * 1024 + int(r, 512 * 1024));
    return line(
      "big",
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: big } }),
      r,
    );
  }
  if (side === "server" && roll < 0.95) return line("planted", JSON.stringify(planted(r)), r);
  return line("valid", JSON.stringify(message()), r);
}

/** The nesting depth of a JSON value, walked with a stack of its own. */
export function depthOf(value: unknown): number {
  let max = 0;
  const todo: [unknown, number][] = [[value, 0]];
  while (todo.length > 0) {
    const [v, d] = todo.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > max) max = d + 1;
    for (const child of Object.values(v)) todo.push([child, d + 1]);
  }
  return max;
}

/**
 * Why a line the proxy forwarded is not one well-formed message, or undefined: it must be valid
 * UTF-8 JSON within the depth limit, with no CR but right before its LF and no raw U+2028,
 * U+2029 or U+0085. `line` is the body, without its LF.
 */
export function lineProblem(line: Buffer, maxDepth: number): string | undefined {
  const body = line.at(-1) === 0x0d ? line.subarray(0, -1) : line;
  if (body.includes(0x0d)) return "bare CR";
  const text = body.toString("utf8");
  if (/[\u0085\u2028\u2029]/.test(text)) return "raw line separator";
  if (!Buffer.from(text, "utf8").equals(body)) return "not UTF-8";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (depthOf(value) > maxDepth) return "nested too deep";
  return undefined;
}
