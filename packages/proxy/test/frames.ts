/**
 * Generated frames for the relay's property tests: valid JSON-RPC of every shape, ids of every
 * type, arbitrary JSON, deep nesting, random bytes, CR / LF / U+2028 in every place, batches.
 */
import fc from "fast-check";

/** Characters that matter to framing and scanning, among any others. */
const unit = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.constantFrom("\u2028", "\u2029", "\u0085", "\r", "\n", '"', "\\", "[", "{", "é"),
  },
  { weight: 4, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
export const json = (maxDepth = 3) => fc.jsonValue({ maxDepth, stringUnit: unit, depthSize: "small" });

/** Ids of every JSON type, the coercible look-alikes of small numbers among them. */
export const anyId: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -2, max: 6 }),
  fc.constantFrom("3", " 3", "3.0", "0x3", "3e0", "", null, 3.5, -0, 1e21, true, [3], { id: 3 }),
  fc.string({ unit, maxLength: 6 }),
);

const METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "tasks/result",
  "resources/read",
  "prompts/get",
  "completion/complete",
  "notifications/message",
  "notifications/progress",
  "sampling/createMessage",
  "vendor/x",
];
const method = fc.constantFrom(...METHODS);

const message: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ jsonrpc: fc.constant("2.0"), id: anyId, method, params: json() }),
  fc.record({ jsonrpc: fc.constant("2.0"), method, params: json() }, { requiredKeys: ["jsonrpc", "method"] }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: anyId, result: json() }),
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: anyId,
    error: fc.record({ code: fc.integer(), message: fc.string({ unit }), data: json() }),
  }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: anyId, method: fc.constant("tools/call"), params: json() }),
);

const nested = (depth: number, inner: string) => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;

/** A text with a CR, LF or line separator put somewhere in it. */
const spliced = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(text, fc.nat(), fc.constantFrom("\r", "\u2028", "\u2029", "\u0085", "\r\n", "\n"))
    .map(([t, at, c]) => `${t.slice(0, at % (t.length + 1))}${c}${t.slice(at % (t.length + 1))}`);

const messageText = message.map((m) => JSON.stringify(m));

/** The text of one line (before its terminator), of any kind. */
const lineText: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { weight: 6, arbitrary: messageText },
  { weight: 2, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }).map((b) => JSON.stringify(b)) },
  { weight: 2, arbitrary: json(4).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: spliced(messageText) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 100, max: 100_000 }), anyId)
      .map(
        ([d, id]) =>
          `{"jsonrpc":"2.0","id":${JSON.stringify(id) ?? "1"},"method":"tools/call","params":${nested(d, "{}")}}`,
      ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((d) => nested(d, "1")) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit, maxLength: 60 }) },
);

/** One line as bytes, with its terminator. */
const line = fc
  .tuple(lineText, fc.constantFrom("\n", "\r\n"))
  .map(([text, end]) =>
    Buffer.concat([
      typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.from(text),
      Buffer.from(end),
    ]),
  );

/** A line and the side that sends it. */
export const traffic = fc.array(fc.tuple(fc.constantFrom("client" as const, "server" as const), line), {
  minLength: 1,
  maxLength: 25,
});

/** The nesting depth of a JSON value, walked with a stack of its own. */
function depthOf(value: unknown): number {
  let max = 0;
  const todo: [unknown, number][] = [[value, 0]];
  while (todo.length > 0) {
    const [v, d] = todo.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(v)) todo.push([child, d + 1]);
  }
  return max;
}

/**
 * Why a line the proxy wrote is not one well-formed message (undefined when it is): one LF, at the
 * end; no CR but right before it; no raw U+2028, U+2029 or U+0085; valid UTF-8 JSON within the
 * depth limit.
 */
export function lineProblem(bytes: Buffer, maxDepth: number): string | undefined {
  if (bytes.at(-1) !== 0x0a) return "no LF at the end";
  const body = bytes.subarray(0, bytes.at(-2) === 0x0d ? -2 : -1);
  if (body.includes(0x0a)) return "an LF inside";
  if (body.includes(0x0d)) return "a bare CR";
  const text = body.toString("utf8");
  if (/[\u0085\u2028\u2029]/.test(text)) return "a raw line separator";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (depthOf(value) > maxDepth) return "nested too deep";
  return undefined;
}
