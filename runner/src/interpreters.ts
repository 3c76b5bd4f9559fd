/**
 * The interpreters the victim servers run on, resolved once per run to absolute, symlink-free
 * paths (SERVERS.md §2): a shim on PATH (pyenv, asdf) is never launched.
 */
import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface Interpreters {
  python: string;
  pythonVersion: string;
  node: string;
  nodeVersion: string;
}

let cached: Promise<Interpreters> | undefined;

export function resolveInterpreters(): Promise<Interpreters> {
  cached ??= (async () => {
    let stdout: string;
    try {
      ({ stdout } = await run("python3", [
        "-c",
        "import sys, os; print(os.path.realpath(sys.executable)); print('%d.%d.%d' % sys.version_info[:3])",
      ]));
    } catch (error) {
      throw new Error(
        `python3 is required on PATH for the Python victim servers: ${(error as Error).message}`,
      );
    }
    const [python = "", pythonVersion = ""] = stdout.trim().split("\n");
    const [major, minor] = pythonVersion.split(".").map(Number);
    if ((major ?? 0) < 3 || (major === 3 && (minor ?? 0) < 11)) {
      throw new Error(`the Python victim servers need Python >= 3.11; ${python} is ${pythonVersion}`);
    }
    return { python, pythonVersion, node: realpathSync(process.execPath), nodeVersion: process.version };
  })();
  return cached;
}
