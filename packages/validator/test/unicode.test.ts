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
    expect(rule("pass\u00adwd.txt", "path.read")).toBe("l2.unicode.invisible");
    expect(rule("\ufeffid,name", "sql")).toBe("l2.unicode.invisible");
    // Tag characters smuggle ASCII text invisibly.
    expect(rule("hi\u{E0049}\u{E0067}", "text")).toBe("l2.unicode.invisible");
  });

  it("refuses a character out of its script's place, whatever the text around it", () => {
    // Joiners and the zero-width space between Latin letters split a word.
    expect(rule("pass\u200cword", "text")).toBe("l2.unicode.invisible");
    expect(rule("cat\u200b /etc/hosts", "command")).toBe("l2.unicode.invisible");
    // Bidi isolates reorder what is shown: never in syntax, even beside right-to-left letters.
    expect(rule("echo \u05e9\u05dc\u05d5\u05dd \u2067; rm -rf ~\u2069", "command")).toBe(
      "l2.unicode.invisible",
    );
    expect(rule("\u05e9\u05dc\u05d5\u05dd \u202e text", "text")).toBe("l2.unicode.invisible");
    // Trojan Source in free text: one right-to-left letter does not make an isolate harmless.
    expect(rule("\u05d0 int x = 1; /* \u2067 } if (admin) { \u2069 */", "text")).toBe("l2.unicode.invisible");
    // Four zero-width characters in a row are a code, not a word break.
    expect(rule("\u0645\u200c\u200c\u200c\u200c\u0627", "text")).toBe("l2.unicode.invisible");
    expect(rule("x\u2060y", "path.read")).toBe("l2.unicode.invisible");
  });

  it("accepts the format characters writing systems use, in place", () => {
    // ZWNJ in Persian and Hindi, ZWJ after a Malayalam virama, ZWSP between Thai words.
    expect(rule("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "text")).toBeUndefined();
    expect(rule("notes/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.txt", "path.write")).toBeUndefined();
    expect(rule("SELECT '\u0915\u094d\u200c\u0937'", "sql")).toBeUndefined();
    expect(rule("\u0d28\u0d4d\u200d \u0d05\u0d24\u0d4d", "text")).toBeUndefined();
    expect(
      rule("\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u200b\u0e04\u0e23\u0e31\u0e1a", "text"),
    ).toBeUndefined();
    // Bidi marks in text that holds right-to-left letters.
    expect(rule("\u05e9\u05dc\u05d5\u05dd\u200f world", "text")).toBeUndefined();
    expect(rule("echo '\u0645\u0631\u062d\u0628\u0627\u061c 42'", "command")).toBeUndefined();
    // In free text: a soft hyphen inside a word, a byte order mark at the start (a CSV's).
    expect(rule("Donau\u00addampf\u00adschiff", "text")).toBeUndefined();
    expect(rule("\ufeffid,name\n1,Ada", "text")).toBeUndefined();
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

  it("refuses folded syntax beside ASCII, and Greek or Cyrillic letters shaped like Latin ones", () => {
    expect(rule("\u2025/etc/passwd", "path.read")).toBe("l2.unicode.confusable");
    // In CJK text the full-width forms pass this rule, and the path is still judged folded.
    expect(
      rule("\u6771\u4eac/\uff0e\uff0e\uff0f\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fetc/shadow", "path.read"),
    ).toMatch(/^l2\.path\./);
    expect(rule("pass\u03bfword", "identifier")).toBe("l2.unicode.confusable");
    expect(rule("Stra\u03b2e", "identifier")).toBe("l2.unicode.confusable");
    expect(rule("\u039cAX_SIZE", "key")).toBe("l2.unicode.confusable");
  });

  it("refuses, even in CJK text, a fold that would quote or comment raw syntax out of the checks' sight", () => {
    // bash and SQLite read the raw text, where these are plain characters: `cat .env` runs.
    expect(rule("echo \uff02\u65e5; echo x > .git/hooks/pre-commit #\uff02", "command")).toBe(
      "l2.unicode.confusable",
    );
    expect(rule("echo \uff02\u65e5; cat .env #\uff02", "command")).toBe("l2.unicode.confusable");
    expect(rule("echo \u65e5\uff3c; cat .env", "command")).toBe("l2.unicode.confusable");
    expect(rule("SELECT 1 AS \uff07\u65e5; DROP TABLE t; --\uff07", "sql")).toBe("l2.unicode.confusable");
    expect(rule("SELECT 1 \uff0f\uff0a \u65e5; DROP TABLE t; \uff0a\uff0f", "sql")).toBe(
      "l2.unicode.confusable",
    );
    // A comment mark folded in, without CJK text.
    expect(rule("echo ok \uff03; cat .env", "command")).toBe("l2.unicode.confusable");
    expect(rule("SELECT 1 \uff0d\uff0d; DROP TABLE t", "sql")).toBe("l2.unicode.confusable");
  });

  it("accepts CJK text's full-width forms, the ellipsis, and Greek unit symbols", () => {
    expect(
      rule("docs/\u4f1a\u8b70\uff08\u6771\u4eac\uff09\u306e\u8cc7\u6599.txt", "path.write"),
    ).toBeUndefined();
    expect(
      rule("SELECT '\uff11\uff10\uff10\uff05 \u5b8c\u4e86', '9\u6642\uff5e17\u6642'", "sql"),
    ).toBeUndefined();
    expect(rule("echo 'Loading\u2026 done'", "command")).toBeUndefined();
    expect(rule("printf '%s\\n' 'latency 150\u00b5s p99'", "command")).toBeUndefined();
    expect(rule("data/R_10k\u2126.csv", "path.read")).toBeUndefined();
    expect(rule("SELECT avg(\u0394T), max(\u03bbmax) FROM runs", "sql")).toBeUndefined();
  });

  it("accepts words of one script, and leaves text roles alone", () => {
    expect(rule("data/café.txt", "path.read")).toBeUndefined();
    expect(rule("data/отчёт.txt", "path.read")).toBeUndefined();
    expect(rule("／ｅｔｃ is full-width", "text")).toBeUndefined();
    expect(rule("Москва and London", "text")).toBeUndefined();
  });
});
