/**
 * The sed reader against GNU sed (/usr/bin/sed, 4.9 here). Generated command lines
 * (differential/sedGenerator.ts) go to one Python process (differential/toolOracle.py) that runs
 * each in a folder of its own, with `env -i` and a PATH of stand-ins that log what they are asked
 * to run (e and s///e hand their command to /bin/sh), and reports the commands run and the files
 * of the folder read and written. Whenever the reader lets a command line through under C-app, its
 * run must have run no command, written only files the reader reported as written (with -i, the
 * input files and their backups too), and read only files the reader reported or the line names
 * as operands.
 *
 * MCPGUARD_DIFF_RUNS and MCPGUARD_DIFF_SEED run more lines or other ones; MCPGUARD_DIFF_SED names
 * another sed.
 */
import { existsSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sedUse } from "../src/code/sed.ts";
import { UNCONFINED } from "../src/confinement.ts";
import { sedCommand } from "./differential/sedGenerator.ts";
import { checkTool, PYTHON, runTool, type ToolRun } from "./differential/toolRuns.ts";

const SED = process.env.MCPGUARD_DIFF_SED ?? "/usr/bin/sed";
const RUNS = Number(process.env.MCPGUARD_DIFF_RUNS ?? 300);
const SEED = Number(process.env.MCPGUARD_DIFF_SEED ?? 30);

const check = (lines: string[][]) => checkTool(SED, "sed", (fields) => sedUse(fields, UNCONFINED), lines);

/** What the generated lines found, one of each kind: each ran past the reader before its fix. */
const FOUND: string[][] = [
  ["-fprog.sed", "cmds.txt"],
  ["-nfprog.sed", "input.txt"],
  ["--fi=prog.sed", "input.txt"],
  ["-e1e id", "input.txt"],
  ["--expr=1e id", "input.txt"],
  ["-i", "s/o/0/", "input.txt"],
  ["-i.bak", "s/o/0/", "input.txt"],
  [":x e id", "input.txt"],
  ["-n", ":a e date", "input.txt"],
];
/** Lines the reader refused though GNU sed runs nothing: -e scripts joined, a number after a space. */
const READ_NOW: string[][] = [
  ["-e", "a\\", "-e", "e id", "input.txt"],
  ["-n", "l 5;p", "input.txt"],
];

const available = existsSync(PYTHON) && existsSync(SED);

describe.skipIf(!available)("the sed reader against GNU sed", () => {
  it("accounts for what the generated lines found, each of which runs or writes", () => {
    const runs = runTool(
      SED,
      FOUND.map((argv) => ({ argv })),
    );
    FOUND.forEach((argv, i) => {
      const run = runs[i] as ToolRun;
      expect([...run.commands, ...run.written], argv.join(" ")).not.toEqual([]);
    });
    expect(check(FOUND)).toEqual([]);
  });

  it("reads the lines GNU sed reads, and lets through those that reach nothing", () => {
    for (const argv of READ_NOW) {
      expect(
        sedUse(
          ["sed", ...argv].map((text) => ({ text })),
          UNCONFINED,
        ).refusal,
        argv.join(" "),
      ).toBeUndefined();
    }
    expect(check(READ_NOW)).toEqual([]);
  });

  it(`accounts for every command, read and write of ${RUNS} generated command lines (seed ${SEED})`, () => {
    expect(check(fc.sample(sedCommand, { seed: SEED, numRuns: RUNS }))).toEqual([]);
  });
});
