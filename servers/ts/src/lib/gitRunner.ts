/**
 * Runs git in the workspace: `--no-optional-locks` so that a read never rewrites the index, at most
 * 10 s per process and 4 MiB of output. A failing git fails the tool; there is no canned fallback.
 */
import { execFile } from "node:child_process";

const GIT_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

interface GitFailure {
  killed?: boolean;
  code?: unknown;
  message: string;
}

function describeFailure(command: string, error: GitFailure, stderr: string): string {
  if (error.killed) return `git ${command} timed out after ${GIT_TIMEOUT_MS / 1000} s`;
  if (error.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
    return `git ${command} output exceeds ${MAX_OUTPUT_BYTES} bytes`;
  }
  const detail = stderr.split("\n").find((line) => line.trim() !== "");
  return `git ${command} failed: ${detail?.trim() ?? error.message}`;
}

/** The stdout of `git --no-optional-locks <args…>` run in the cwd. */
export function runGit(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      ["--no-optional-locks", ...args],
      { cwd: process.cwd(), timeout: GIT_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) reject(new Error(describeFailure(args[0] ?? "", error, stderr)));
        else resolve(stdout);
      },
    );
    child.stdin?.end();
  });
}
