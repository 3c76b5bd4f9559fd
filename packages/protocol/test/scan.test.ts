import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classify, encodeMessage } from "../src/jsonrpc.ts";
import { looseIdKey, PendingRequests } from "../src/pending.ts";
import {
  escapeLineSeparators,
  recoverId,
  SCAN_BARE_CR,
  SCAN_LINE_SEPARATOR,
  SCAN_TOO_DEEP,
  scanFrame,
  textTooDeep,
} from "../src/scan.ts";

/** Characters that matter to the scan (quotes, escapes, brackets, line breaks) among any others. */
const unit = fc.oneof(
  fc.constantFrom(
    "\u2028",
    "\u2029",
    "\u0085",
    "\r",
    "\n",
    '"',
    "\\",
    "[",
    "]",
    "{",
    "}",
    "é",
    "Ņ",
    "✓",
    "𝄞",
  ),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);
const json = (maxDepth: number) => fc.jsonValue({ maxDepth, stringUnit: unit });

const scan = (text: string, max = 8) => scanFrame(Buffer.from(text, "utf8"), max);
const nested = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;

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

describe("scanFrame", () => {
  it("counts nesting outside strings only, up to the limit", () => {
    expect(scan(nested(8))).toBe(0);
    expect(scan(nested(9))).toBe(SCAN_TOO_DEEP);
    expect(scan(`{"a":${nested(7)}}`)).toBe(0);
    expect(scan(`{"a":${nested(8)}}`)).toBe(SCAN_TOO_DEEP);
    expect(scan(`["${"[".repeat(50)}"]`)).toBe(0);
    expect(scan(`["\\"${"[".repeat(50)}\\\\"]`)).toBe(0);
    expect(scan(`["\\\\", ${nested(8)}]`)).toBe(SCAN_TOO_DEEP);
  });

  it("finds a CR anywhere in the body", () => {
    expect(scan('{"a":1}\r{"b":2}')).toBe(SCAN_BARE_CR);
    expect(scan('\r{"a":1}')).toBe(SCAN_BARE_CR);
    expect(scan('{"a":"x\ry"}')).toBe(SCAN_BARE_CR);
  });

  it("flags raw U+2028, U+2029 and U+0085, and no other character", () => {
    for (const c of ["\u2028", "\u2029", "\u0085"]) expect(scan(`{"a":"x${c}y"}`)).toBe(SCAN_LINE_SEPARATOR);
    // é is C3 A9, Ņ is C5 85, ✓ is E2 9C 93: lookalike bytes, no separator.
    expect(scan('{"a":"é Ņ ✓ \\u2028"}')).toBe(0);
  });

  it("agrees with the real depth of any JSON value", () => {
    fc.assert(
      fc.property(json(12), fc.integer({ min: 1, max: 12 }), (value, max) => {
        const text = JSON.stringify(value);
        const flags = scanFrame(Buffer.from(text), max);
        expect((flags & SCAN_TOO_DEEP) !== 0).toBe(depthOf(value) > max);
        expect(textTooDeep(text, max)).toBe(depthOf(value) > max);
        expect((flags & SCAN_LINE_SEPARATOR) !== 0).toBe(/[\u0085\u2028\u2029]/.test(text));
      }),
      { numRuns: 500 },
    );
  });
});

describe("scanFrame on long strings", () => {
  it("skips strings of any length and any escapes, and counts only the brackets outside them", () => {
    const long = fc.string({ unit, maxLength: 300 });
    fc.assert(
      fc.property(fc.array(long, { maxLength: 4 }), fc.integer({ min: 1, max: 6 }), (strings, depth) => {
        const text = nested(depth, JSON.stringify(strings));
        const flags = scanFrame(Buffer.from(text), 4);
        expect((flags & SCAN_TOO_DEEP) !== 0).toBe(depth + 1 > 4);
      }),
      { numRuns: 500 },
    );
  });
});

describe("escapeLineSeparators", () => {
  it("escapes each separator inside its string and keeps every other byte", () => {
    const text = '{"a":"1\u20282\u20293\u00854","b":"é"}\n';
    const out = escapeLineSeparators(Buffer.from(text)).toString("utf8");
    expect(out).toBe('{"a":"1\\u20282\\u20293\\u00854","b":"é"}\n');
    expect(JSON.parse(out)).toEqual(JSON.parse(text));
  });

  it("means the same JSON, with no raw separator left, for any value", () => {
    fc.assert(
      fc.property(json(4), (value) => {
        const raw = Buffer.from(`${JSON.stringify(value)}\n`);
        const out = escapeLineSeparators(raw).toString("utf8");
        expect(/[\u0085\u2028\u2029]/.test(out)).toBe(false);
        expect(JSON.parse(out)).toEqual(JSON.parse(raw.toString("utf8")));
      }),
      { numRuns: 300 },
    );
  });
});

describe("recoverId", () => {
  const deep = nested(100_000);
  it("reads the id of a message too deep to decode, wherever it stands", () => {
    expect(recoverId(Buffer.from(`{"jsonrpc":"2.0","id":7,"params":${deep}}`))).toBe(7);
    expect(recoverId(Buffer.from(`{"params":${deep},"id":"a\\"b"}`))).toBe('a"b');
    expect(recoverId(Buffer.from(`{"\\u0069d":3,"x":"}"}`))).toBe(3);
    expect(recoverId(Buffer.from(`{"id":1,"id":2}`))).toBe(2);
    expect(recoverId(Buffer.from('\r{"id": 5 ,\r"method":"ping"}'))).toBe(5);
  });

  it("gives null when there is no usable id", () => {
    for (const text of [
      '{"id":null}',
      '{"id":[1]}',
      `[{"id":1}]`,
      '{"id":1e999}',
      "nonsense",
      '{"x":{"id":4}}',
    ]) {
      expect(recoverId(Buffer.from(text))).toBe(null);
    }
  });

  it("agrees with JSON.parse on any message", () => {
    const id = fc.oneof(
      fc.string({ unit }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit }), json(3)), id, (rest, value) => {
        const message = { ...rest, id: value };
        expect(recoverId(Buffer.from(JSON.stringify(message)))).toBe(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});

describe("messages as JSON-RPC", () => {
  it("encodes every message as one line for every reader", () => {
    const out = encodeMessage({ text: "a\u2028b\u2029c\u0085d\re\nf" }).toString("utf8");
    expect(out).toBe('{"text":"a\\u2028b\\u2029c\\u0085d\\re\\nf"}\n');
    expect(out.indexOf("\n")).toBe(out.length - 1);
  });

  it("refuses a request or notification that also carries a result or error", () => {
    expect(classify({ jsonrpc: "2.0", id: 1, method: "x", result: {} }).kind).toBe("invalid");
    expect(classify({ jsonrpc: "2.0", method: "x", error: {} }).kind).toBe("invalid");
  });

  it("reads only own properties", () => {
    expect(classify(JSON.parse('{"jsonrpc":"2.0","__proto__":{"method":"x","id":1}}')).kind).toBe("invalid");
  });
});

describe("PendingRequests", () => {
  it("tells ids a coercing client would confuse", () => {
    const pending = new PendingRequests({ looseIds: true });
    pending.add(3, "tools/call", undefined);
    pending.add("abc", "ping", undefined);
    for (const id of ["3", " 3", "3.0", "0x3", "3e0", 3]) expect(pending.hasLoose(id)).toBe(true);
    for (const id of ["4", "abc ", 0]) expect(pending.hasLoose(id)).toBe(false);
    expect(pending.hasLoose("abc")).toBe(true);
    expect(pending.take("3")).toBeUndefined();
    expect(pending.take(3)?.method).toBe("tools/call");
    expect(pending.hasLoose("3")).toBe(false);
    expect(looseIdKey("")).toBe(looseIdKey(0));
  });

  it("keeps loose ids only when asked to", () => {
    const pending = new PendingRequests();
    pending.add(3, "tools/call", undefined);
    expect(() => pending.hasLoose(3)).toThrow(/looseIds/);
  });
});
