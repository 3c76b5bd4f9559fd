import { afterAll, describe, expect, it } from "vitest";
import { makeWorld } from "./helpers.ts";

const world = makeWorld();
afterAll(() => world.remove());
const { rule } = world;

describe("l2.unicode.invisible", () => {
  it("refuses zero-width and bidi characters in any role", () => {
    expect(rule("read\u200dme.txt", "path.read")).toBe("l2.unicode.invisible");
    expect(rule("readme\u202etxt.sh", "path.read")).toBe("l2.unicode.invisible");
    expect(rule("ca\u200dt readme.txt", "command")).toBe("l2.unicode.invisible");
    expect(rule("ls \u202e-la", "command")).toBe("l2.unicode.invisible");
    expect(rule("hello\u200bworld", "text")).toBe("l2.unicode.invisible");
    expect(rule("users\ufeff", "identifier")).toBe("l2.unicode.invisible");
    expect(rule("a\u2066b\u2069", "scalar")).toBe("l2.unicode.invisible");
    expect(rule("\u061cx", "text")).toBe("l2.unicode.invisible");
    expect(rule("x\u200e", "text")).toBe("l2.unicode.invisible");
    expect(rule("soft\u00adhyphen", "text")).toBe("l2.unicode.invisible");
    // Tag characters smuggle ASCII text invisibly.
    expect(rule("hi\u{E0049}\u{E0067}", "text")).toBe("l2.unicode.invisible");
  });

  it("accepts plain text, accented letters and emoji sequences", () => {
    expect(rule("readme.txt", "path.read")).toBeUndefined();
    expect(rule("Café au lait — naïve résumé", "text")).toBeUndefined();
    expect(
      rule(
        "family 👨\u200d👩\u200d👧 and 👍🏽 and 🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
        "text",
      ),
    ).toBeUndefined();
  });
});

describe("l2.nul", () => {
  it("refuses a NUL byte and accepts the same string without it", () => {
    expect(rule("readme.txt\0.png", "path.read")).toBe("l2.nul");
    expect(rule("a\0b", "text")).toBe("l2.nul");
    expect(rule("readme.txt.png", "path.read")).toBeUndefined();
  });
});

describe("l2.unicode.confusable", () => {
  it("refuses full-width path syntax", () => {
    expect(rule("．．／．．／etc/passwd", "path.read")).toBe("l2.unicode.confusable");
    expect(rule("／ｅｔｃ／ｐａｓｓｗｄ", "path.read")).toBe("l2.unicode.confusable");
    expect(rule("cat ＄HOME", "command")).toBe("l2.unicode.confusable");
    expect(rule("SELECT 1 ； DROP TABLE users", "sql")).toBe("l2.unicode.confusable");
    expect(rule("http://example.com／..／admin", "url")).toBe("l2.unicode.confusable");
  });

  it("refuses a Cyrillic homoglyph inside a Latin word", () => {
    expect(rule("/\u0435tc/passwd", "path.read")).toBe("l2.unicode.confusable");
    expect(rule("us\u0435rs", "identifier")).toBe("l2.unicode.confusable");
    expect(rule("c\u0430t readme.txt", "command")).toBe("l2.unicode.confusable");
  });

  it("accepts words of one script, and leaves text roles alone", () => {
    expect(rule("data/café.txt", "path.read")).toBeUndefined();
    expect(rule("data/отчёт.txt", "path.read")).toBeUndefined();
    expect(rule("／ｅｔｃ is full-width", "text")).toBeUndefined();
    expect(rule("Москва and London", "text")).toBeUndefined();
  });
});
