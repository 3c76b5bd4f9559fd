/**
 * Runs awk or sed command lines through toolOracle.py (one Python process for all of them) and
 * sums up disagreements: the shared half of awkDifferential.test.ts and sedDifferential.test.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

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
export function summary(problems: { line: string; p: string }[]): string[] {
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
