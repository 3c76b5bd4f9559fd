/**
 * The Python reader against CPython itself. Generated programs (differential/pythonGenerator.ts:
 * identifiers in ASCII and NFKC-equivalent letters, strings of every prefix and escape, blocks,
 * decorators, match, walrus, lambda defaults, comments, \r line ends; imports of pure and impure
 * modules, exec/eval/compile/__import__/getattr, opens of literal and computed paths, attribute
 * chains through what pure modules hold) are read by the reader, then run by /usr/bin/python3
 * -I -S in a scratch folder each, under a PEP 578 audit hook (differential/pythonAudit.py, the
 * `-c` prelude, one process for a batch). Whenever a run shows what the C-app rules refuse (a
 * process, the network, native code, frames; an impure import, an exec or compile by the
 * program's own code), the reader must have refused the program; and every file the run opened,
 * made, listed or removed must be one the reader returned (or lie under one), opened for writing
 * only where the reader said so. The bypass classes of issue 30 run the same way, one by one.
 *
 * MCPGUARD_PYDIFF_RUNS and MCPGUARD_PYDIFF_SEED run more programs or other ones.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { pythonInterpreter } from "../src/code/pyhelper.ts";
import { PURE_MODULES, readPython } from "../src/code/python.ts";
import { emptyUse } from "../src/code/use.ts";
import { pythonProgram } from "./differential/pythonGenerator.ts";

const PYTHON = "/usr/bin/python3";
const PRELUDE = join(import.meta.dirname, "differential", "pythonAudit.py");
const RUNS = Number(process.env.MCPGUARD_PYDIFF_RUNS ?? 400);
const SEED = Number(process.env.MCPGUARD_PYDIFF_SEED ?? 30);
const BATCH = 100;

interface Run {
  refusable: string[];
  files: [string, string][];
  error: string | null;
}

const scratch = existsSync(PYTHON) ? mkdtempSync(join(tmpdir(), "mcpguard-pydiff-")) : "";
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});
let batches = 0;

/** Each program run by CPython under the audit hook, in a scratch folder of its own. */
function run(programs: string[]): Run[] {
  const dir = join(scratch, `batch${batches++}`);
  const out = `${dir}.json`;
  const done = spawnSync(PYTHON, ["-I", "-S", "-c", readFileSync(PRELUDE, "utf8")], {
    input: JSON.stringify({ dir, out, pure: [...PURE_MODULES], programs }),
    cwd: scratch,
    env: {},
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (done.status !== 0) throw new Error(`the audit prelude failed (${done.status}): ${done.stderr}`);
  return JSON.parse(readFileSync(out, "utf8")) as Run[];
}

function read(program: string): { why?: string; files: { path: string; access: string }[] } {
  const use = emptyUse();
  const why = readPython(program, use, pythonInterpreter(PYTHON));
  return { why, files: use.files };
}

/** What the reader missed in a run of a program it allowed: nothing, if it read it right. */
function missed(reading: ReturnType<typeof read>, result: Run, cwd: string): string[] {
  if (reading.why !== undefined) return [];
  const out = [...result.refusable];
  const returned = reading.files.map((f) => ({ ...f, path: posix.resolve(cwd, f.path) }));
  for (const [event, path] of result.files) {
    if (path === ":memory:" || path === "") continue;
    const full = posix.resolve(cwd, path);
    const covering = returned.filter((f) => f.path === full || full.startsWith(`${f.path}/`));
    const writes = event === "open" ? undefined : true;
    if (covering.length === 0) out.push(`${event} ${path}: not a file the reader returned`);
    else if (writes && covering.every((f) => f.access === "read"))
      out.push(`${event} ${path}: returned for reading only`);
  }
  return out;
}

describe.skipIf(!existsSync(PYTHON))("the Python reader against CPython's own runs", () => {
  it("refuses every generated program whose run shows what the C-app rules refuse", () => {
    const programs = fc.sample(pythonProgram, { numRuns: RUNS, seed: SEED });
    let refused = 0;
    let shown = 0;
    const wrong: string[] = [];
    for (let at = 0; at < programs.length; at += BATCH) {
      const batch = programs.slice(at, at + BATCH);
      const readings = batch.map(read);
      const results = run(batch);
      batch.forEach((program, i) => {
        const result = results[i] as Run;
        const reading = readings[i] as ReturnType<typeof read>;
        if (reading.why !== undefined) refused++;
        if (result.refusable.length > 0) shown++;
        const missing = missed(reading, result, join(scratch, `batch${batches - 1}`, `run${i}`));
        if (missing.length > 0)
          wrong.push(
            `the reader allowed ${JSON.stringify(program)}, whose run showed: ${missing.join("; ")}`,
          );
      });
    }
    expect(wrong).toEqual([]);
    // The generator reaches both sides: programs the rules refuse, and programs they allow.
    expect(shown).toBeGreaterThan(programs.length / 10);
    expect(programs.length - refused).toBeGreaterThan(programs.length / 20);
  });

  /**
   * The bypass classes, run: each does what the rules refuse (the run shows it), and the reader
   * refuses it. The token reader before CPython's grammar let each of these through.
   */
  it.each([
    ["full-width exec", "\uff45\uff58\uff45\uff43('import os')"],
    ["mathematical exec", "\u212f\u{1d4cd}\u212f\u{1d4b8}('import os')"],
    ["modifier letter eval", "\u1d49val('1')"],
    ["full-width __import__", "__\uff49\uff4d\uff50\uff4f\uff52\uff54__('os').getpid()"],
    [
      "full-width getattr on the builtins",
      '\uff47\uff45\uff54\uff41\uff54\uff54\uff52(__builtins__, "ex" + "ec")("x = 1")',
    ],
    ["full-width vars", "\uff56\uff41\uff52\uff53()['__builtins__'].exec('x = 1')"],
    ["full-width import", "import \uff4f\uff53; \uff4f\uff53.system('true')"],
    [
      "full-width sys.modules",
      "import sys; sys.\uff4d\uff4f\uff44\uff55\uff4c\uff45\uff53['os'].system('true')",
    ],
    ["a decorator", "@\uff45\uff58\uff45\uff43\n@(lambda f: 'import os')\ndef f(): pass"],
    ["a decorator lambda", "@(lambda f: \uff45\uff56\uff41\uff4c('1') or f)\ndef g(): pass"],
    ["a match statement", "match 1:\n    case _:\n        \uff45\uff58\uff45\uff43('x = 1')"],
    ["walrus", "(e := \uff45\uff58\uff45\uff43)('x = 1')"],
    ["a lambda default", "(lambda e=\uff45\uff58\uff45\uff43: e('x = 1'))()"],
    ["an f-string field", "print(f'{\uff45\uff58\uff45\uff43(\"x = 1\")}')"],
    ["a carriage return ending the import", "import json\rexec('x = 1')"],
    ["a module a pure one holds", "import pathlib; pathlib.os.system('true')"],
    ["a private module a pure one holds", "import random; random._os.system('true')"],
    ["linecache through traceback", "import traceback; traceback.linecache.getline('/etc/hostname', 1)"],
    ["connect taken from sqlite3", "from sqlite3 import connect; connect(''.join(['db', '.sqlite']))"],
    ["sys by another name", "import sys as s; m = s; m._getframe()"],
    ["timeit's statements", "import timeit; timeit.timeit('import os', number=1)"],
    [
      "a string annotation evaluated",
      "import typing\ndef h(x: \"__import__('os').getpid()\"): pass\ntyping.get_type_hints(h)",
    ],
  ])("%s", (_, program) => {
    const [result] = run([program]) as [Run];
    const cwd = join(scratch, `batch${batches - 1}`, "run0");
    const reading = read(program);
    // What the run did, as the reader would have to see it.
    const shows = [...result.refusable, ...missed({ files: reading.files }, result, cwd)];
    expect(shows, `${program}: ${result.error}`).not.toEqual([]);
    expect(reading.why).toBeDefined();
  });

  it.each([
    ["\\N{...}", "print(open('\\N{SOLIDUS}etc\\N{SOLIDUS}hostname').read())"],
    ["\\x and \\u", "print(open('\\x2fetc\\u002fhostname').read())"],
    ["a full-width open", "print(\uff4f\uff50\uff45\uff4e('/etc/hostname').read())"],
    ["a Path class by another name", "from pathlib import Path as P; print(P('/etc/hostname').read_text())"],
  ])("returns the file the run opens, spelled with %s", (_, program) => {
    const [result] = run([program]) as [Run];
    const cwd = join(scratch, `batch${batches - 1}`, "run0");
    const reading = read(program);
    expect(result.files.map(([, path]) => path)).toContain("/etc/hostname");
    expect(reading.why).toBeUndefined();
    expect(missed(reading, result, cwd)).toEqual([]);
    expect(reading.files.map((f) => f.path)).toContain("/etc/hostname");
  });
});
