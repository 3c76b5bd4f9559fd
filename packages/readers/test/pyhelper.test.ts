/**
 * The Python reader's helper (src/code/pyhelper.ts, pyast.py): CPython's own messages, a time-out
 * that refuses and restarts, what happens without python3, the interpreter it picks, and what a
 * call costs.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  configurePythonReader,
  helperArgv,
  parsePython,
  pythonInterpreter,
  pythonReaderPids,
  stopPythonReader,
} from "../src/code/pyhelper.ts";
import { pythonUse, readPython } from "../src/code/python.ts";
import { emptyUse } from "../src/code/use.ts";
import { UNCONFINED } from "../src/confinement.ts";
import type { Field, Invocation } from "../src/shell/index.ts";

const PYTHON = "/usr/bin/python3";
const scratch = mkdtempSync(join(tmpdir(), "mcpguard-pyhelper-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  stopPythonReader();
});
afterEach(() => configurePythonReader({ path: undefined, timeoutMs: undefined, distrust: undefined }));

/** `python3 -c CODE` as the shell reader hands it over. */
function inline(code: string, program = "python3"): { argv: Field[]; inv: Invocation } {
  const argv = [program, "-c", code].map((text) => ({ text }));
  const inv = {
    kind: "program",
    argvs: [argv],
    env: [],
    redirects: [],
    stdin: { kind: "inherit" },
    cwd: scratch,
  };
  return { argv, inv: inv as unknown as Invocation };
}

describe.skipIf(!existsSync(PYTHON))("the Python reader's helper", () => {
  const interpreter = pythonInterpreter(PYTHON) as string;

  it("answers a syntax error with CPython's own message and place", () => {
    for (const code of [
      "def f(:\n    pass",
      "print('unterminated)",
      "x = (1,\n",
      "f(**)",
      "match x:\ncase 1: pass",
    ]) {
      const own = spawnSync(
        PYTHON,
        [
          "-I",
          "-S",
          "-c",
          "import ast, sys\ntry:\n    ast.parse(sys.argv[1])\nexcept SyntaxError as e:\n    print(f'{type(e).__name__}: {e.msg} (line {e.lineno}, column {e.offset})')",
          code,
        ],
        {
          encoding: "utf8",
        },
      ).stdout.trim();
      expect(readPython(code, emptyUse(), interpreter)).toBe(`does not parse as Python: ${own}`);
    }
  });

  it("refuses a call it gets no answer to in time, and the next call has a helper again", () => {
    configurePythonReader({ timeoutMs: 300 });
    expect(readPython("print(1)", emptyUse(), interpreter)).toBeUndefined();
    const [before] = pythonReaderPids();
    // CPython 3.11 takes seconds over an f-string of 50,000 fields (quadratic in the parser).
    const slow = `x = f'${"{1}".repeat(50_000)}'`;
    const started = performance.now();
    expect(readPython(slow, emptyUse(), interpreter)).toMatch(
      /^cannot be read: the Python reader \(\/usr\/bin\/python3\.\d+\) gave no answer within 300 ms$/,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(readPython("import json; print(json.dumps([1]))", emptyUse(), interpreter)).toBeUndefined();
    const [after] = pythonReaderPids();
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    // The helper that took too long was killed, not left to finish.
    expect(
      existsSync(`/proc/${before}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${before}/status`, "utf8")),
    ).toBe(false);
  });

  it("reads the helper's environment as empty and its input as bounded", () => {
    readPython("print(1)", emptyUse(), interpreter);
    const [pid] = pythonReaderPids();
    expect(readFileSync(`/proc/${pid}/environ`, "utf8")).toBe("");
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(1, 3)).toEqual(["-I", "-S"]);
    expect(parsePython(interpreter, "x = 1\n".repeat(40_000))).toMatchObject({ error: /longer than 200000/ });
  });

  it("refuses Python under C-app where no python3 is on the server's PATH, and leaves it to the kernel under C-full", () => {
    configurePythonReader({ path: join(scratch, "nothing-here") });
    const { argv, inv } = inline("print(1)");
    expect(pythonUse("python3", argv, inv, UNCONFINED).refusal).toBe(
      "the python3 code cannot be read: there is no python3 on the server's PATH, whose own grammar reads it",
    );
    const all = { files: true, exec: true, network: true };
    expect(pythonUse("python3", argv, inv, all).refusal).toBeUndefined();
  });

  it("runs the interpreter the command would run: on the server's PATH, shims skipped", () => {
    const shims = join(scratch, "shims");
    mkdirSync(shims, { recursive: true });
    writeFileSync(join(shims, "python3"), '#!/bin/sh\nexec /usr/bin/python3 "$@"\n');
    chmodSync(join(shims, "python3"), 0o755);
    configurePythonReader({ path: `${shims}:/usr/bin` });
    expect(pythonInterpreter("python3")).toBe(interpreter);
    expect(pythonInterpreter(join(shims, "python3"))).toBe(interpreter);
    expect(pythonInterpreter("python3.11-nonexistent")).toBeUndefined();
    expect(helperArgv(interpreter).slice(1, 3)).toEqual(["-I", "-S"]);
  });

  it("never runs an interpreter it is told the server could have written", () => {
    configurePythonReader({ distrust: (file) => `is not run: ${file} lies where the server may write` });
    const { argv, inv } = inline("print(1)");
    expect(pythonUse("python3", argv, inv, UNCONFINED).refusal).toMatch(
      /^the python3 code cannot be read: the Python reader \(\/usr\/bin\/python3\.\d+\) is not run: /,
    );
  });

  it("reads a program on standard input with its coding declaration, and -c code without", () => {
    // CPython decodes a program's bytes by its declaration: in UTF-7 this line is exec(...).
    const utf7 = "# coding: utf-7\n+AGUAeABlAGM-('1')\n";
    expect(readPython(utf7, emptyUse(), interpreter, true)).toMatch(/exec|does not parse/);
    expect(readPython(utf7, emptyUse(), interpreter, false)).toBeUndefined();
  });

  it("answers a one-liner in well under a few milliseconds once warm", () => {
    readPython("print(0)", emptyUse(), interpreter);
    const times: number[] = [];
    for (let i = 1; i <= 200; i++) {
      const started = performance.now();
      readPython(`import json; print(json.dumps({'n': ${i}}))`, emptyUse(), interpreter);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[100] as number;
    console.log(
      `python reader: median ${median.toFixed(3)} ms, p90 ${(times[180] as number).toFixed(3)} ms a call`,
    );
    expect(median).toBeLessThan(20);
  });
});
