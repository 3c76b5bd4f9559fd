/** Which configs and which scenario files a command runs, from its flags. */
import { existsSync } from "node:fs";
import { availableConfigs, ConfigError, resolveConfig } from "@mcpguard/proxy";
import { UsageError } from "@mcpguard/proxy/args";
import { repoPath } from "./paths.js";
import { loadRegistry } from "./registry.js";
import { loadScenarios, type Scenario, type ScenarioIssue } from "./scenario.js";
import { sortConfigs } from "./summarize.js";

export const DEFAULT_CASES = repoPath("test_cases");

export function knownServers(): Set<string> {
  return new Set(loadRegistry().keys());
}

/** `--cases`: existing paths are scenario directories or files; anything else is a list of ids. */
export function selectScenarios(value: string | undefined): {
  scenarios: Scenario[];
  issues: ScenarioIssue[];
} {
  const servers = knownServers();
  if (value === undefined) return loadScenarios([DEFAULT_CASES], servers);
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.every((p) => existsSync(p))) return loadScenarios(parts, servers);
  const loaded = loadScenarios([DEFAULT_CASES], servers);
  const byId = new Map(loaded.scenarios.map((s) => [s.id, s]));
  const unknown = parts.filter((id) => !byId.has(id));
  if (unknown.length) {
    throw new UsageError(
      `--cases: ${unknown.map((u) => JSON.stringify(u)).join(", ")} is neither a path nor a case id`,
    );
  }
  return { scenarios: parts.map((id) => byId.get(id) as Scenario), issues: loaded.issues };
}

export function resolveConfigs(value: string | undefined): string[] {
  if (value === undefined || value === "all") return availableConfigs();
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError("--configs needs at least one config");
  try {
    return sortConfigs([...new Set(names.map((n) => resolveConfig(n).name))]);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`--configs: ${error.message}`);
    throw error;
  }
}
