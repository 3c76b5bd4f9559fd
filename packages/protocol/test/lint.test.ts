/**
 * biome finds nothing to fix in the workspace (biome.json: what it reads), so lint and format stay
 * checked by `npm test`, which is what CI runs; `npm run check` adds the typecheck.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BIOME = join(ROOT, "node_modules", "@biomejs", "biome", "bin", "biome");

it.skipIf(!existsSync(BIOME))("biome check reports nothing in the workspace", () => {
  const run = spawnSync(process.execPath, [BIOME, "check", "--colors=off", "."], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stdout + run.stderr).toBe(0);
});
