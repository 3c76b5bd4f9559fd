/**
 * Where mcpguard keeps what it may reuse between starts (the kernel probe, validated policies).
 * Never derived from HOME or TMPDIR: those are the server's world (the benchmark gives each trial
 * its own), and no harness file may land in it.
 */
import { accessSync, constants } from "node:fs";
import { join } from "node:path";

export function cacheDir(): string {
  if (process.env.MCPGUARD_CACHE_DIR) return process.env.MCPGUARD_CACHE_DIR;
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) {
    try {
      accessSync("/run", constants.W_OK);
      return "/run/mcpguard";
    } catch {
      // No writable /run: fall through.
    }
  }
  return join("/var/tmp", `mcpguard-${uid}`);
}
