#!/usr/bin/env node
/**
 * Write runner/core-manifest.json, the core set (the paper's cases by id and the sha256 of each
 * scenario file), from the scenario files of the core categories in test_cases/ as they are now.
 * Run it only when the paper's set itself changes: a case added to test_cases/ is an extension
 * otherwise (docs/BENCHMARK.md "The core set and extensions"). Needs the runner built
 * (`npm run setup`, or `npx tsc -p tsconfig.build.json` in runner/).
 *
 *   node scripts/core-manifest.mjs           write it
 *   node scripts/core-manifest.mjs --check   exit 1, with what differs, when it is not up to date
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(ROOT, "runner", "dist", "coreSet.js");
if (!existsSync(dist)) {
  process.stderr.write("core-manifest: the runner is not built (npm run setup)\n");
  process.exit(1);
}
const { buildCoreManifest, CORE_MANIFEST, writeCoreManifest } = await import(dist);
let built;
try {
  built = buildCoreManifest();
} catch (error) {
  process.stderr.write(`core-manifest: ${error.message}\n`);
  process.exit(1);
}
if (process.argv.includes("--check")) {
  const committed = existsSync(CORE_MANIFEST)
    ? JSON.parse(readFileSync(CORE_MANIFEST, "utf8"))
    : { entries: [] };
  const was = new Map(committed.entries.map((e) => [e.id, e.sha256]));
  const now = new Map(built.entries.map((e) => [e.id, e.sha256]));
  const lines = [
    ...[...now.keys()].filter((id) => !was.has(id)).map((id) => `added: ${id}`),
    ...[...was.keys()].filter((id) => !now.has(id)).map((id) => `removed: ${id}`),
    ...[...now].filter(([id, sha]) => was.has(id) && was.get(id) !== sha).map(([id]) => `changed: ${id}`),
  ];
  for (const line of lines) process.stdout.write(`${line}\n`);
  process.stdout.write(`${lines.length ? "differs from" : "matches"} ${CORE_MANIFEST}\n`);
  process.exit(lines.length ? 1 : 0);
}
writeCoreManifest(built);
process.stdout.write(
  `${CORE_MANIFEST}: ${built.cases} cases (${built.attacks} attacks, ${built.benign} benign)\n`,
);
