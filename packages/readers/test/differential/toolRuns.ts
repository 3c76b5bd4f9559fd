/**
 * Runs awk or sed command lines through toolOracle.py (one Python process for all of them) and
 * sums up disagreements: the shared half of awkDifferential.test.ts and sedDifferential.test.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll } from "vitest";
import type { CodeUse } from "../../src/code/use.ts";

export const PYTHON = "/usr/bin/python3";
const ORACLE = join(import.meta.dirname, "toolOracle.py");

export interface ToolRun {
  status: number | null;
  error: string;
  commands: string[];
  written: string[];
  read: string[];
  dir: string;
}

const scratches: string[] = [];
afterAll(() => {
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

export function runTool(binary: string, runs: { argv: string[] }[]): ToolRun[] {
  const scratch = mkdtempSync(join(tmpdir(), "mcpguard-tooldiff-"));
  scratches.push(scratch);
  const done = spawnSync(PYTHON, [ORACLE], {
    input: JSON.stringify({ scratch, binary, runs }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (done.status !== 0) throw new Error(`the oracle failed: ${done.stderr}`);
  return JSON.parse(done.stdout);
}

/** Disagreements by kind, each with its shortest command line. */
function summary(problems: { line: string; p: string }[]): string[] {
  const kinds = new Map<string, { line: string; p: string; n: number }>();
  for (const problem of problems) {
    const kind = problem.p.replace(/;.*/, "").replace(/\S+\.(?:txt|awk|sed|bak)|\d+/g, "_");
    const seen = kinds.get(kind);
    if (!seen || problem.line.length < seen.line.length)
      kinds.set(kind, { ...problem, n: (seen?.n ?? 0) + 1 });
    else seen.n++;
  }
  return [...kinds.values()].map((k) => `${k.p} (${k.n}x)\n    ${k.line}`);
}

/** The reader under test: what it makes of a command line's words (the program's name first). */
export type ToolReader = (fields: { text: string }[]) => CodeUse;

/**
 * What of a run the reader's reading of `argv` does not account for: a command run, a file written
 * that it did not report as written, or a file read that it neither reported nor sees as an operand.
 */
function violations(name: string, read: ToolReader, argv: string[], run: ToolRun): string[] {
  const fields = [name, ...argv].map((text) => ({ text: text.replaceAll("@DIR@", run.dir) }));
  const use = read(fields);
  if (use.refusal !== undefined) return [];
  const files = use.files.map((f) => ({ path: resolve(run.dir, f.path), access: f.access }));
  const operands = fields
    .map((f, i) =>
      i > 0 && !use.codeOperands.has(i) && !f.text.startsWith("-") ? resolve(run.dir, f.text) : "",
    )
    .filter(Boolean);
  const found: string[] = [];
  for (const command of run.commands) found.push(`it ran ${command}`);
  for (const file of run.written) {
    const full = join(run.dir, file);
    if (!files.some((f) => f.path === full && f.access === "write"))
      found.push(`it wrote ${file}; the reader reported ${JSON.stringify(use.files)}`);
  }
  for (const file of run.read) {
    const full = join(run.dir, file);
    if (!files.some((f) => f.path === full) && !operands.includes(full) && !run.written.includes(file))
      found.push(`it read ${file}; the reader reported ${JSON.stringify(use.files)}`);
  }
  return found;
}

/** Runs each command line with `binary` and sums up what the reader did not account for. */
export function checkTool(binary: string, name: string, read: ToolReader, lines: string[][]): string[] {
  const runs = runTool(
    binary,
    lines.map((argv) => ({ argv })),
  );
  return summary(
    lines.flatMap((argv, i) =>
      violations(name, read, argv, runs[i] as ToolRun).map((p) => ({ line: JSON.stringify(argv), p })),
    ),
  );
}
