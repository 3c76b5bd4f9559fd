/** This mcpguard's own bin script, by absolute path: what wrapped entries and nested starts run. */
import { existsSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function ownBin(): string {
  const bin = fileURLToPath(new URL("../bin/mcpguard.js", import.meta.url));
  return existsSync(bin) ? realpathSync(bin) : realpathSync(process.argv[1] as string);
}
