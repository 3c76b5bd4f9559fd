/**
 * knip finds nothing unused in the workspace packages: no file, export, exported type or
 * dependency that nothing imports (knip.jsonc at the root says what it reads and why some names
 * are exempt). It lives here, in the package at the bottom of the graph, and runs knip once over
 * the whole workspace (about 5 s).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const KNIP = join(ROOT, "node_modules", "knip", "bin", "knip.js");

it.skipIf(!existsSync(KNIP))("knip reports no unused file, export, type or dependency", () => {
  const run = spawnSync(process.execPath, [KNIP, "--no-progress", "--no-config-hints"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    timeout: 60_000,
  });
  expect(run.stdout + run.stderr).toBe("");
  expect(run.status).toBe(0);
});
