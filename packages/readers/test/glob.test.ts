/**
 * Globs against bash's own matching: generated (text, pattern) pairs, each matched by bash
 * (`case $text in $pattern)`, LC_ALL=C, one bash for all pairs; no pattern is ever expanded against
 * files) and by the readers' two matchers: the shell reader's string patterns (shell/text.ts) and
 * picomatch's file name flavour (glob.ts). Both must agree with bash on every pair, but for a
 * pattern a matcher says it cannot read (a range out of order), which the callers treat as unknown.
 * Also the policy path flavour's own rules.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { globMatcher } from "../src/glob.ts";
import { globSource } from "../src/shell/text.ts";

const BASH = existsSync("/bin/bash");

const piece = fc.constantFrom(
  "a",
  "b",
  "A",
  "1",
  ".",
  "-",
  "]",
  "[",
  "!",
  "^",
  "*",
  "?",
  "\\",
  ":",
  " ",
  "(",
  ")",
  "{",
  "}",
  ",",
  "+",
  "@",
  "$",
  "[:alpha:]",
  "[:digit:]",
  "[:upper:]",
  "[:space:]",
  "[:punct:]",
  "[:alnum:]",
  "[:foo:]",
  "[!",
  "[]",
  "a-z",
  "z-a",
);
const textChar = fc.constantFrom(
  "a",
  "b",
  "A",
  "Z",
  "1",
  ".",
  "-",
  "]",
  "[",
  "!",
  "^",
  "*",
  "?",
  "\\",
  ":",
  " ",
  "(",
  "{",
  "+",
  "@",
  "$",
  "/",
);
const pattern = fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => p.join(""));
const text = fc.array(textChar, { maxLength: 5 }).map((t) => t.join(""));
const pairs = fc.sample(fc.tuple(text, pattern), { seed: 33, numRuns: 1500 });
// Pairs built to hit the bracket rules: the classes, negation, a `]` first, escapes.
const chosen: [string, string][] = [
  ["a", "[[:alpha:]]"],
  ["1", "[[:alpha:]]"],
  ["1", "[[:alnum:]]"],
  ["x", "[![:digit:]]"],
  [" ", "[[:space:]]"],
  ["]", "[]]"],
  ["a", "[]a]"],
  ["b", "[!b]"],
  ["-", "[a-]"],
  ["b", "a\\b"],
  ["ab", "a\\b"],
  ["a/b", "a*"],
  [".x", "*"],
  ["[", "["],
  ["a", "[[:foo:]]"],
  ["!", "[!]"],
  ["x", "[z-a]"],
];

/** bash's verdict on each pair: true when the pattern matches the whole text. */
function bashMatches(all: readonly [string, string][]): boolean[] {
  const script = `while IFS= read -r -d '' s && IFS= read -r -d '' p; do case $s in $p) printf 1;; *) printf 0;; esac; done`;
  const input = all.map(([s, p]) => `${s}\0${p}\0`).join("");
  const run = spawnSync("/bin/bash", ["--norc", "--noprofile", "-c", script], {
    input,
    env: { LC_ALL: "C", PATH: "/usr/bin:/bin" },
    encoding: "utf8",
  });
  expect(run.status).toBe(0);
  expect(run.stdout).toHaveLength(all.length);
  return [...run.stdout].map((c) => c === "1");
}

function shellString(value: string, pat: string): boolean | undefined {
  try {
    return new RegExp(`^(?:${globSource(pat)})$`).test(value);
  } catch {
    return undefined;
  }
}

describe.skipIf(!BASH)("glob matching against bash", () => {
  const all = [...chosen, ...pairs];
  const verdicts = BASH ? bashMatches(all) : [];

  it("the shell reader's string patterns match as bash's case does", () => {
    const wrong: string[] = [];
    let unread = 0;
    all.forEach(([value, pat], n) => {
      const ours = shellString(value, pat);
      if (ours === undefined) unread++;
      else if (ours !== verdicts[n])
        wrong.push(`${JSON.stringify(value)} ${JSON.stringify(pat)}: bash ${verdicts[n]}`);
    });
    expect(wrong).toEqual([]);
    expect(unread).toBeLessThan(all.length / 10);
  });

  it("picomatch's file name flavour matches a name as bash's pathname expansion does", () => {
    const wrong: string[] = [];
    let compared = 0;
    all.forEach(([value, pat], n) => {
      if (value.includes("/") || pat.includes("/")) return;
      const matches = globMatcher(pat, "name");
      if (matches === undefined) return;
      compared++;
      if (matches(value) !== verdicts[n])
        wrong.push(`${JSON.stringify(value)} ${JSON.stringify(pat)}: bash ${verdicts[n]}`);
    });
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThan(all.length / 2);
  });
});

describe("the policy path flavour", () => {
  const matches = (pattern: string, path: string) => globMatcher(pattern, "path")?.(path);

  it("reads `**` as any number of segments, `/a/**` as /a itself too", () => {
    expect(matches("/a/**", "/a")).toBe(true);
    expect(matches("/a/**", "/a/b/c")).toBe(true);
    expect(matches("/a/**", "/ab")).toBe(false);
    expect(matches("/a/**/c", "/a/c")).toBe(true);
    expect(matches("/a/**/c", "/a/x/y/c")).toBe(true);
    expect(matches("/**", "/etc/passwd")).toBe(true);
  });

  it("reads `*` and `?` within one segment, dot files included", () => {
    expect(matches("/a/*", "/a/.ssh")).toBe(true);
    expect(matches("/a/*", "/a/b/c")).toBe(false);
    expect(matches("/a/b?", "/a/bc")).toBe(true);
    expect(matches("/a/b?", "/a/b/")).toBe(false);
    expect(matches("/srv/m.jsonl*", "/srv/m.jsonl.bak")).toBe(true);
    expect(matches("/a**b", "/a/b")).toBe(false);
  });

  it("takes every other character as itself", () => {
    for (const name of ["x(1)", "x[b]", "x{a,b}", "x+", "!x", "@(x)", "x$", "a.b", "x\\y", "x|y", "x^"]) {
      expect(matches(`/d/${name}`, `/d/${name}`)).toBe(true);
    }
    expect(matches("/d/x[b]", "/d/xb")).toBe(false);
    expect(matches("/d/x{a,b}", "/d/xa")).toBe(false);
    expect(matches("/d/a.b", "/d/axb")).toBe(false);
  });
});
