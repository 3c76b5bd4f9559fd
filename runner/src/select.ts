/** Which configs and which scenario files a command runs, from its flags. */
import { existsSync } from "node:fs";
import { availableConfigs, ConfigError, resolveConfig } from "@mcpguard/proxy";
import { UsageError } from "@mcpguard/proxy/args";
import { repoPath } from "./paths.js";
import { isPeerConfig, PEER_CONFIGS } from "./peers.js";
import { loadAllServers } from "./registry.js";
import { CATEGORIES, CORE_CATEGORIES, loadScenarios, type Scenario, type ScenarioIssue } from "./scenario.js";
import { sortConfigs } from "./summarize.js";

/** Every scenario file of the repository, all suites. */
export const ALL_CASES = repoPath("test_cases");

/**
 * Named suites: `core` is the 82 cases of the published benchmark (the seven category folders),
 * `corpus` the benign corpus, `all` every folder of test_cases/. A category name is a suite too
 * (`benign_corpus`, `real` (the third-party servers, REAL.md), `protocol` (what servers say to the
 * agent over the protocol, CASES.md §9)).
 */
export const SUITES: Record<string, () => string[]> = {
  core: () => CORE_CATEGORIES.map((c) => repoPath("test_cases", c)),
  corpus: () => [repoPath("test_cases", "benign_corpus")],
  all: () => [ALL_CASES],
};
export const DEFAULT_SUITE = "core";

/** The scenario paths of a comma-separated list of suites. */
export function suitePaths(value: string = DEFAULT_SUITE): string[] {
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError("--suite needs at least one suite");
  const paths: string[] = [];
  for (const name of names) {
    const suite = SUITES[name];
    const category = (CATEGORIES as readonly string[]).includes(name) ? name : undefined;
    if (!suite && !category) {
      throw new UsageError(
        `--suite: unknown suite "${name}"; known: ${[...Object.keys(SUITES), ...CATEGORIES].join(", ")}`,
      );
    }
    const found = (suite ? suite() : [repoPath("test_cases", name)]).filter((p) => existsSync(p));
    if (found.length === 0) throw new UsageError(`--suite: suite "${name}" has no scenario folder yet`);
    for (const p of found) if (!paths.includes(p)) paths.push(p);
  }
  return paths;
}

export function knownServers(): Set<string> {
  return new Set(loadAllServers().keys());
}

/** The variants a server offers (`--variant`), for checking a scenario's `variant`. */
export function serverVariants(): (server: string) => readonly string[] | undefined {
  const servers = loadAllServers();
  return (server) => servers.get(server)?.variants;
}

/**
 * `--cases` / `--suite`: existing paths are scenario directories or files; anything else is a list
 * of ids, looked up in every suite. Without either, the core suite.
 */
export function selectScenarios(
  value: string | undefined,
  suite?: string,
): {
  scenarios: Scenario[];
  issues: ScenarioIssue[];
} {
  const servers = knownServers();
  if (value !== undefined && suite !== undefined) throw new UsageError("give --cases or --suite, not both");
  const variants = serverVariants();
  if (value === undefined) return loadScenarios(suitePaths(suite), servers, variants);
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.every((p) => existsSync(p))) return loadScenarios(parts, servers, variants);
  const loaded = loadScenarios([ALL_CASES], servers, variants);
  const byId = new Map(loaded.scenarios.map((s) => [s.id, s]));
  const unknown = parts.filter((id) => !byId.has(id));
  if (unknown.length) {
    throw new UsageError(
      `--cases: ${unknown.map((u) => JSON.stringify(u)).join(", ")} is neither a path nor a case id`,
    );
  }
  return { scenarios: parts.map((id) => byId.get(id) as Scenario), issues: loaded.issues };
}

/**
 * `--configs`: names, "all" (every config built here) and "peers" (P-srt, P-bwrap, P-firejail:
 * chosen only by name, never by default); `withPeers` (`--peers`) adds the peers to the list.
 */
export function resolveConfigs(value: string | undefined, withPeers = false): string[] {
  if ((value === undefined || value === "all") && !withPeers) return availableConfigs();
  const names = (value ?? "all")
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean)
    .flatMap((n) => (n === "all" ? availableConfigs() : n === "peers" ? [...PEER_CONFIGS] : [n]));
  if (withPeers) names.push(...PEER_CONFIGS);
  if (names.length === 0) throw new UsageError("--configs needs at least one config");
  for (const n of names) {
    if (n.startsWith("P-") && !isPeerConfig(n))
      throw new UsageError(`--configs: unknown peer config "${n}" (${PEER_CONFIGS.join(", ")})`);
  }
  try {
    return sortConfigs([...new Set(names.map((n) => (isPeerConfig(n) ? n : resolveConfig(n).name)))]);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`--configs: ${error.message}`);
    throw error;
  }
}
