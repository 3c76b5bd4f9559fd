/**
 * The awk reader against the awk the servers run. The benchmark's shell server runs its lines with
 * /bin/sh, which finds `awk` through PATH: here /usr/bin/awk, mawk 1.3.4 (Debian's default; gawk
 * is not installed). Generated command lines (differential/awkGenerator.ts) go to one Python
 * process (differential/toolOracle.py) that runs each in a folder of its own, with `env -i` and a
 * PATH of stand-ins that log what they are asked to run, and reports the commands run and the
 * files of the folder read and written. Whenever the reader lets a command line through under
 * C-app, its run must have run no command, written only files the reader reported as written,
 * and read only files the reader reported or the line names as operands.
 *
 * MCPGUARD_DIFF_RUNS and MCPGUARD_DIFF_SEED run more lines or other ones; MCPGUARD_DIFF_AWK names
 * another awk.
 */
import { existsSync, realpathSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { awkUse } from "../src/code/awk.ts";
import { UNCONFINED } from "../src/confinement.ts";
import { awkCommand } from "./differential/awkGenerator.ts";
import { checkTool, PYTHON, runTool, type ToolRun } from "./differential/toolRuns.ts";

const AWK = process.env.MCPGUARD_DIFF_AWK ?? "/usr/bin/awk";
const RUNS = Number(process.env.MCPGUARD_DIFF_RUNS ?? 300);
const SEED = Number(process.env.MCPGUARD_DIFF_SEED ?? 30);

const check = (lines: string[][]) =>
  checkTool(AWK, "awk", (fields) => awkUse("awk", fields, UNCONFINED), lines);

/** What the generated lines found, one of each kind: each ran past the reader before its fix. */
const FOUND: string[][] = [
  ["-fprog.awk", "input.txt"],
  ["-W", "exec", "prog.awk", "input.txt"],
  ["-W", "interactive", '{ "uname -a" | getline x }', "input.txt"],
  ['{ print > "\\x6fut.txt" }', "input.txt"],
  ['{ print > "\\157ut.txt" }', "input.txt"],
  ['{ print > "o" "ut.txt" }', "input.txt"],
  ['BEGIN { x = 1 + /"/; system("id"); y = 2 + /"/ }', "input.txt"],
  ['BEGIN { ARGV[1] = "a.txt" } { print }', "input.txt"],
  ['BEGIN { sub(/input/, "a", ARGV[1]) } { print }', "input.txt"],
  ['{ getline a[1] < "b.txt"; print a[1] }', "input.txt"],
];

const available = existsSync(PYTHON) && existsSync(AWK);

describe.skipIf(!available)(`the awk reader against ${available ? realpathSync(AWK) : AWK}`, () => {
  it("accounts for what the generated lines found, each of which runs, reads or writes", () => {
    const runs = runTool(
      AWK,
      FOUND.map((argv) => ({ argv })),
    );
    FOUND.forEach((argv, i) => {
      const run = runs[i] as ToolRun;
      expect(
        [...run.commands, ...run.written, ...run.read.filter((f) => f !== "input.txt")],
        argv.join(" "),
      ).not.toEqual([]);
    });
    expect(check(FOUND)).toEqual([]);
    // gawk's @ forms are refused, and a lone @ no longer throws.
    expect(awkUse("awk", [{ text: "awk" }, { text: "@ x" }], UNCONFINED).refusal).toMatch(/@/);
  });

  it(`accounts for every command, read and write of ${RUNS} generated command lines (seed ${SEED})`, () => {
    expect(check(fc.sample(awkCommand, { seed: SEED, numRuns: RUNS }))).toEqual([]);
  });
});
