import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { alignEdits, hasDuplicateKey, spliceJson, spliceString } from "../src/splice.ts";

const MARK = "[REDACTED token]";

/** Characters that matter to JSON text (quotes, escapes, brackets, pairs) among any others. */
const unit = fc.oneof(
  fc.constantFrom('"', "\\", "/", "[", "{", "é", "𝄞", "\u2028", "\n", "\t", " "),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);
const json = fc.jsonValue({ maxDepth: 4, stringUnit: unit });

/** A small deterministic generator, so that a failing case replays from its seed. */
function prng(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/** JSON text of `value` in another writer's spelling: spaces, escapes, number forms of its own. */
function write(value: unknown, draw: (n: number) => number): string {
  const space = () => [" ", "", "\n  ", "\t", ""][draw(5)] as string;
  if (typeof value === "string") {
    let out = '"';
    for (const c of value) {
      const plain = JSON.stringify(c).slice(1, -1);
      const code = c.codePointAt(0) as number;
      if (plain.length > 1 || draw(4) > 0) out += plain === "/" ? (draw(2) ? "\\/" : "/") : plain;
      else if (code > 0xffff) out += [...c].map((u) => `\\u${u.charCodeAt(0).toString(16)}`).join("");
      else out += `\\u${code.toString(16).padStart(4, "0")}`;
    }
    return `${out}"`;
  }
  if (typeof value === "number") {
    const spellings = [String(value), value.toExponential()];
    if (/^-?\d+$/.test(String(value))) spellings.push(`${value}.0`, `${value}E0`);
    return spellings[draw(spellings.length)] as string;
  }
  if (Array.isArray(value))
    return `[${space()}${value.map((v) => `${write(v, draw)}${space()}`).join(`,${space()}`)}]`;
  if (value !== null && typeof value === "object")
    return `{${space()}${Object.entries(value)
      .map(([k, v]) => `${write(k, draw)}${space()}:${space()}${write(v, draw)}`)
      .join(`${space()},${space()}`)}${space()}}`;
  return JSON.stringify(value);
}

/** `value` with some of its parts changed (the rest shared), as a layer changes a message. */
function mutate(value: unknown, draw: (n: number) => number): unknown {
  if (typeof value === "string") {
    if (draw(3) !== 0) return value;
    const a = draw(value.length + 1);
    const b = a + draw(value.length - a + 1);
    return `${value.slice(0, a)}${draw(4) ? MARK : "x"}${value.slice(b)}`;
  }
  if (draw(8) === 0) return draw(2) ? "new" : [1, { n: 2 }];
  if (Array.isArray(value)) {
    const next = value.map((v) => mutate(v, draw));
    if (next.length > 0 && draw(4) === 0) next.splice(draw(next.length), 1);
    if (draw(6) === 0) next.push("added");
    return next.every((v, k) => v === value[k]) && next.length === value.length ? value : next;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => [k, mutate(v, draw)] as const);
    const kept = entries.filter(() => draw(6) !== 0);
    if (draw(6) === 0) kept.push(["added", "x"]);
    const changed =
      kept.length !== entries.length || kept.some(([k, v]) => (value as Record<string, unknown>)[k] !== v);
    return changed ? Object.fromEntries(kept) : value;
  }
  return value;
}

describe("spliceJson", () => {
  it("reads as the new value, whatever the text's spelling and the change", () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const draw = prng(seed);
        const text = write(value, draw);
        const before = JSON.parse(text);
        const after = mutate(before, draw);
        const out = spliceJson(text, before, after, { inserted: [MARK] });
        expect(JSON.parse(out)).toEqual(after);
        if (after === before) expect(out).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps every byte around a string that changed, and the string's own escapes", () => {
    const text = '{\n  "b" : 1.50,\n  "a": [1e3, "caf\\u00e9 \\/tmp KEY_abc", true],\n  "2": "x"\n}\n';
    const before = JSON.parse(text);
    const after = { ...before, a: [before.a[0], `café /tmp ${MARK}`, true] };
    expect(spliceJson(text, before, after, { inserted: [MARK] })).toBe(
      `{\n  "b" : 1.50,\n  "a": [1e3, "caf\\u00e9 \\/tmp ${MARK}", true],\n  "2": "x"\n}\n`,
    );
  });

  it("writes anew only around members added or removed, keeping the others' bytes", () => {
    const text = '{ "keep" : { "n" : 1.0 }, "drop": 2, "list": [ {"a" : 1}, {"b" : 2}, {"c" : 3} ] }';
    const before = JSON.parse(text);
    const after = { keep: before.keep, list: [before.list[0], before.list[2]], extra: true };
    expect(spliceJson(text, before, after)).toBe(
      '{"keep":{ "n" : 1.0 },"list":[{"a" : 1},{"c" : 3}],"extra":true}',
    );
  });
});

describe("spliceString", () => {
  it("replaces only the spans a marker took, keeping escapes between them", () => {
    const literal = '"A=\\u0041\\u00e9 ghp_1 \\/x\\n\\ud834\\udd1e ghp_2 end\\t"';
    const before = JSON.parse(literal) as string;
    const after = before.replace(/ghp_\d/g, MARK);
    expect(spliceString(literal, before, after, [MARK])).toBe(
      `"A=\\u0041\\u00e9 ${MARK} \\/x\\n\\ud834\\udd1e ${MARK} end\\t"`,
    );
    // Without the marker known, the text from the first difference to the last is written anew.
    expect(JSON.parse(spliceString(literal, before, after))).toBe(after);
  });

  it("escapes new text as the literal does, and never splits a surrogate pair", () => {
    const literal = '"caf\\u00e9 secret"';
    expect(spliceString(literal, "café secret", "café ✓ [x]")).toBe('"caf\\u00e9 \\u2713 [x]"');
    const pair = '"a𝄞b"';
    for (const after of ["a𝄟b", "a\ud834", "ab", "a[x]𝄞b"]) {
      const out = spliceString(pair, "a𝄞b", after);
      expect(JSON.parse(out)).toBe(after);
      expect(Buffer.from(out).toString()).toBe(out);
    }
  });

  it("reads as the new string for any change", () => {
    fc.assert(
      fc.property(fc.string({ unit }), fc.integer(), (value, seed) => {
        const draw = prng(seed);
        const literal = write(value, draw);
        const after = mutate(mutate(value, draw), draw) as string;
        expect(JSON.parse(spliceString(literal, value, after, [MARK, "x"]))).toBe(after);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("alignEdits", () => {
  it("finds each replaced span, however long, and keeps the text between", () => {
    const before = `key=${"s".repeat(500)}\nother=1\ntoken: abcdef\n`;
    const after = `key=${MARK}\nother=1\ntoken: ${MARK}\n`;
    expect(alignEdits(before, after, [MARK])).toEqual([
      [4, 504, 4, 4 + MARK.length],
      [520, 526, 20 + MARK.length, 20 + 2 * MARK.length],
    ]);
  });
});

describe("hasDuplicateKey", () => {
  const dup = (text: string) => hasDuplicateKey(Buffer.from(text));

  it("finds a key twice in any object, in any spelling", () => {
    expect(dup('{"a":1,"a":2}')).toBe(true);
    expect(dup('{"x":{"a":1,"b":[{"c":1}],"\\u0061":2}}')).toBe(true);
    expect(dup('[{"é":1},{"é":1,"\\u00e9":2}]')).toBe(true);
    expect(dup('{"a":{"a":1},"b":{"a":1},"c":["a","a"],"d":"\\"a\\":1,\\"a\\":2"}')).toBe(false);
  });

  it("agrees with JSON.parse on every object", () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const text = write(value, prng(seed));
        expect(dup(text)).toBe(false);
        const twice = text.replace(/^(\s*\{)(\s*"(?:[^"\\]|\\.)*"\s*:)/, "$1$2 0,$2");
        if (twice !== text) expect(dup(twice)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
