/**
 * The core set: the paper's 82 cases, each by id and the sha256 of its scenario file, in
 * runner/core-manifest.json (docs/BENCHMARK.md "The core set and extensions"). Only these are
 * compared with the paper's Table 1. A case of a core category that is not in the manifest, or
 * whose file has changed since, is the `extension` suite, reported with a table of its own; a
 * scenario file from outside test_cases/ (`--cases DIR`) is the `external` suite. The manifest is
 * written by `node scripts/core-manifest.mjs` and checked by a test against test_cases/.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { z } from "zod";
import { readJsonFile } from "./jsonFile.js";
import { REPO_ROOT, repoPath } from "./paths.js";
import { CORE_CATEGORIES, isCoreCategory, loadScenarios, type Scenario } from "./scenario.js";

export const CORE_MANIFEST = repoPath("runner", "core-manifest.json");
export const CASES_ROOT = repoPath("test_cases");

/** Suites of cases that ran beside the core ones but are never compared with the paper. */
export const EXTENSION_SUITE = "extension";
export const EXTERNAL_SUITE = "external";

const Entry = z.strictObject({
  id: z.string().min(1),
  category: z.enum(CORE_CATEGORIES),
  kind: z.enum(["attack", "benign"]),
  /** The file, relative to the repository. */
  file: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export const CoreManifest = z.strictObject({
  description: z.string(),
  generatedBy: z.string(),
  cases: z.number().int().positive(),
  attacks: z.number().int().nonnegative(),
  benign: z.number().int().nonnegative(),
  entries: z.array(Entry),
});
export type CoreManifest = z.infer<typeof CoreManifest>;

const DESCRIPTION =
  "The core set of the MCPGuard benchmark: the cases of the paper's Table 1, each by id and the sha256 " +
  "of its scenario file. Only these are compared with the paper; other cases of the core categories " +
  "are reported as the extension suite. Regenerate with `node scripts/core-manifest.mjs` only when the " +
  "paper's set itself changes (a test fails when a core file changes or one is added without it).";

const sha256File = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** The manifest test_cases/ describes now: every scenario file of the core categories. */
export function buildCoreManifest(): CoreManifest {
  const { scenarios, issues } = loadScenarios(CORE_CATEGORIES.map((c) => repoPath("test_cases", c)));
  if (issues.length)
    throw new Error(`${issues[0]?.file}: ${issues[0]?.message} (and ${issues.length - 1} more issues)`);
  const entries = scenarios
    .map((s) => {
      const file = resolve(s.file);
      return {
        id: s.id,
        category: s.category as (typeof CORE_CATEGORIES)[number],
        kind: s.kind,
        file: relative(REPO_ROOT, file).split(sep).join("/"),
        sha256: sha256File(file),
      };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
  return {
    description: DESCRIPTION,
    generatedBy: "node scripts/core-manifest.mjs",
    cases: entries.length,
    attacks: entries.filter((e) => e.kind === "attack").length,
    benign: entries.filter((e) => e.kind === "benign").length,
    entries,
  };
}

export function writeCoreManifest(manifest: CoreManifest, path = CORE_MANIFEST): void {
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}

let cached: CoreManifest | undefined;

/** The committed manifest, read once (a malformed one is one line, not a stack trace). */
export function coreManifest(): CoreManifest {
  cached ??= readJsonFile(CORE_MANIFEST, CoreManifest, "core manifest");
  return cached;
}

/**
 * The suite a case of a run belongs to: `core` (in the manifest, with the same bytes), `extension`
 * (a core category, but not in the manifest or changed since), `external` (a file from outside
 * test_cases/), else its category (`benign_corpus`, `real`, `protocol`).
 */
export function suiteOfScenario(
  scenario: Pick<Scenario, "id" | "category"> & { file?: string },
  manifest: CoreManifest = coreManifest(),
): string {
  const file = scenario.file ? resolve(scenario.file) : undefined;
  if (file && !file.startsWith(`${CASES_ROOT}${sep}`)) return EXTERNAL_SUITE;
  if (!isCoreCategory(scenario.category)) return scenario.category;
  const entry = manifest.entries.find((e) => e.id === scenario.id);
  if (!entry) return EXTENSION_SUITE;
  if (file && sha256File(file) !== entry.sha256) return EXTENSION_SUITE;
  return "core";
}

/** A record's or case result's suite; records written before `suite` was kept go by category. */
export function suiteOf(r: { suite?: string; category: string }): string {
  return r.suite ?? (isCoreCategory(r.category) ? "core" : r.category);
}
