/**
 * Commands that live in other packages (the benchmark's `bench` and `report`) run as external
 * programs named `mcpguard-<command>`, found on PATH or in a `node_modules/.bin` above this file,
 * as git does with its subcommands. The proxy never imports the packages built on top of it.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function candidates(name: string): string[] {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    dirs.push(join(dir, "node_modules", ".bin"));
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return dirs.map((d) => join(d, name));
}

export function findExternal(command: string): string | undefined {
  if (!/^[a-z][a-z0-9-]*$/.test(command)) return undefined;
  for (const path of candidates(`mcpguard-${command}`)) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Run an external command with our stdio; its exit status becomes ours. */
export function runExternal(path: string, argv: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(path, argv, { stdio: "inherit" });
    // Ctrl-C reaches the child directly (same process group); wait for it to clean up and exit.
    const ignore = () => {};
    process.on("SIGINT", ignore);
    process.on("SIGTERM", ignore);
    child.once("error", (error) => {
      process.stderr.write(`mcpguard: cannot run ${path}: ${error.message}\n`);
      resolve(127);
    });
    child.once("exit", (code, signal) => {
      process.off("SIGINT", ignore);
      process.off("SIGTERM", ignore);
      resolve(code ?? 128 + (signal === "SIGINT" ? 2 : 15));
    });
  });
}
