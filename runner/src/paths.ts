import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the mcpguard repository root (pnpm-workspace.yaml)");
    dir = parent;
  }
  return dir;
}

/** The repository root: scenario, server and fixture paths are relative to it. */
export const REPO_ROOT = findRoot();

export const repoPath = (...parts: string[]): string => join(REPO_ROOT, ...parts);
