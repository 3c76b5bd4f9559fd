/**
 * Where the launcher, the loader and the reaper are: `bpf/.output/` of the checkout, or
 * `$MCPGUARD_BPF_DIR`. Loaded on its own (`@mcpguard/kernel/binaries`) by configs without L3.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function bpfOutput(): string {
  if (process.env.MCPGUARD_BPF_DIR) return process.env.MCPGUARD_BPF_DIR;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "bpf", ".output");
    if (existsSync(join(dir, "bpf", "Makefile"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return join(process.cwd(), "bpf", ".output");
    dir = parent;
  }
}

export function binaries(): { launcher: string; loader: string; reaper: string; dir: string } {
  const dir = bpfOutput();
  return {
    dir,
    launcher: join(dir, "mcpguard-exec"),
    loader: join(dir, "mcpguard-loader"),
    reaper: join(dir, "mcpguard-reaper"),
  };
}
