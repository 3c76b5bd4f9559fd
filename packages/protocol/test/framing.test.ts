import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DROPPED_HEAD_BYTES, type Frame, FrameTooLargeError, LineFramer } from "../src/framing.ts";
import { decodeMessage } from "../src/jsonrpc.ts";

function collect(maxBytes?: number) {
  const frames: Frame[] = [];
  const errors: FrameTooLargeError[] = [];
  const framer = new LineFramer({ frame: (f) => frames.push(f), error: (e) => errors.push(e) }, maxBytes);
  return { framer, frames, errors, bodies: () => frames.map((f) => f.body.toString("utf8")) };
}

describe("LineFramer", () => {
  const messages = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","method":"x","params":{"s":"héllo ✓ 𝄞"}}',
  ];
  const stream = Buffer.from(messages.map((m) => `${m}\n`).join(""), "utf8");

  it("reassembles frames split at every possible byte boundary, inside UTF-8 sequences included", () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const { framer, bodies, frames } = collect();
      framer.push(stream.subarray(0, cut));
      framer.push(stream.subarray(cut));
      expect(bodies()).toEqual(messages);
      expect(Buffer.concat(frames.map((f) => f.raw)).equals(stream)).toBe(true);
    }
  });

  it("reassembles a stream delivered one byte at a time", () => {
    const { framer, bodies } = collect();
    for (const byte of stream) framer.push(Buffer.from([byte]));
    expect(bodies()).toEqual(messages);
  });

  it("delivers several messages from one chunk in order", () => {
    const { framer, bodies } = collect();
    framer.push(Buffer.from("a\nb\nc\n"));
    expect(bodies()).toEqual(["a", "b", "c"]);
  });

  it("strips CRLF from the body but keeps it in the raw bytes", () => {
    const { framer, frames } = collect();
    framer.push(Buffer.from('{"a":1}\r'));
    framer.push(Buffer.from('\n{"b":2}\r\n'));
    expect(frames.map((f) => f.body.toString())).toEqual(['{"a":1}', '{"b":2}']);
    expect(frames.map((f) => f.raw.toString())).toEqual(['{"a":1}\r\n', '{"b":2}\r\n']);
  });

  it("carries a 10 MB message through intact", () => {
    const payload = "é".repeat(5 * 1024 * 1024); // 10 MiB of UTF-8
    const message = JSON.stringify({ jsonrpc: "2.0", id: 7, result: { text: payload } });
    const bytes = Buffer.from(`${message}\n`);
    const { framer, frames, errors } = collect();
    for (let i = 0; i < bytes.length; i += 65536) framer.push(bytes.subarray(i, i + 65536));
    expect(errors).toEqual([]);
    expect(frames).toHaveLength(1);
    const decoded = decodeMessage(frames[0]!.body);
    expect(decoded.ok && (decoded.value as { result: { text: string } }).result.text).toBe(payload);
  });

  it("reports a message over the cap as an error, never a truncated frame, and resynchronises", () => {
    const { framer, frames, errors, bodies } = collect(100);
    framer.push(Buffer.from(`${"y".repeat(60)}`));
    framer.push(Buffer.from(`${"y".repeat(60)}\nok\n`));
    framer.push(Buffer.from(`${"z".repeat(150)}\nafter\n`));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(FrameTooLargeError);
    expect(errors[0]!.size).toBe(120);
    expect(errors[1]!.size).toBe(150);
    expect(bodies()).toEqual(["ok", "after"]);
    expect(frames.some((f) => f.body.includes("y"))).toBe(false);
  });

  it("keeps the first bytes of a dropped frame, however the chunks split it", () => {
    const big = `{"jsonrpc":"2.0","id":42,"result":{"s":"${"x".repeat(DROPPED_HEAD_BYTES * 2)}"}}`;
    for (const cut of [5, 30, DROPPED_HEAD_BYTES + 7, big.length]) {
      const { framer, errors } = collect(1000);
      framer.push(Buffer.from(big.slice(0, cut)));
      framer.push(Buffer.from(`${big.slice(cut)}\n`));
      framer.push(Buffer.from('{"x":1}'));
      framer.push(Buffer.from(big));
      framer.end();
      expect(
        errors.map((e) => e.head.toString()),
        String(cut),
      ).toEqual([big.slice(0, DROPPED_HEAD_BYTES), `{"x":1}${big}`.slice(0, DROPPED_HEAD_BYTES)]);
    }
  });

  it("accepts a body of exactly the cap, CRLF not counted", () => {
    const { framer, bodies, errors } = collect(10);
    framer.push(Buffer.from("0123456789\r\n0123456789\n"));
    expect(errors).toEqual([]);
    expect(bodies()).toEqual(["0123456789", "0123456789"]);
  });

  it("delivers a final unterminated frame at end of input", () => {
    const { framer, frames } = collect();
    framer.push(Buffer.from('{"a":1}\n{"b":'));
    framer.push(Buffer.from("2}"));
    framer.end();
    expect(frames.map((f) => f.raw.toString())).toEqual(['{"a":1}\n', '{"b":2}']);
  });
});

describe("decodeMessage", () => {
  it("rejects invalid UTF-8", () => {
    const result = decodeMessage(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    expect(result).toMatchObject({ ok: false, reason: "utf8" });
  });

  it("rejects a lone continuation byte and an overlong encoding", () => {
    expect(decodeMessage(Buffer.from([0x22, 0x80, 0x22]))).toMatchObject({ ok: false, reason: "utf8" });
    expect(decodeMessage(Buffer.from([0x22, 0xc0, 0xaf, 0x22]))).toMatchObject({ ok: false, reason: "utf8" });
  });

  it("refuses every byte string that is not UTF-8, and keeps a real U+FFFD", () => {
    // Bytes around the edges of UTF-8: continuation bytes, overlong and surrogate leads, past U+10FFFF.
    const edge = fc.constantFrom(
      0x80,
      0xbf,
      0xc0,
      0xc1,
      0xc2,
      0xdf,
      0xe0,
      0xed,
      0xef,
      0xf0,
      0xf4,
      0xf5,
      0xff,
    );
    const bytes = fc.array(fc.oneof(edge, fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(bytes, (list) => {
        const body = Buffer.concat([Buffer.from('"'), Buffer.from(list), Buffer.from('"')]);
        const result = decodeMessage(body);
        if (!isUtf8(body)) expect(result).toMatchObject({ ok: false, reason: "utf8" });
        else expect(result.ok === false && result.reason === "utf8").toBe(false);
      }),
      { numRuns: 20_000 },
    );
    expect(decodeMessage(Buffer.from('"\uFFFD"'))).toEqual({ ok: true, value: "\uFFFD" });
    expect(decodeMessage(Buffer.from('"\\uFFFD"'))).toEqual({ ok: true, value: "\uFFFD" });
  });

  it("rejects invalid JSON with the parser's reason", () => {
    const result = decodeMessage(Buffer.from('{"jsonrpc": "2.0", '));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe("json");
    expect(!result.ok && result.detail).toMatch(/^invalid JSON: /);
  });

  it("decodes valid UTF-8 JSON", () => {
    expect(decodeMessage(Buffer.from('{"t":"日本"}'))).toEqual({ ok: true, value: { t: "日本" } });
  });
});
