// The language readers are their own package: @mcpguard/readers.

export { UNCONFINED } from "@mcpguard/readers";
export { shellContext } from "./command.js";
export { decide, missingGrants } from "./decide.js";
export { type Decision, destinationAllowed } from "./decision.js";
export { derivePolicy, probeTool, takesFiles, takesPath } from "./derive.js";
export {
  aboutASecret,
  type FilteredEnvironment,
  filterEnvironment,
  secretName,
  tokenShaped,
  WORLD_VARIABLES,
} from "./env.js";
export {
  broadCoverage,
  formatIssues,
  loadOverrides,
  loadPolicy,
  loadValidated,
  PolicyError,
  policyNeeds,
  type ResolvedPolicy,
  readJson,
  resolvePolicy,
  type Variables,
} from "./load.js";
export { callPathResolver, canonicalPath, isWithin, type PathResolver, PathSet } from "./paths.js";
export { asDrafted, knownServerData, packageOf, serverRoots } from "./roots.js";
// The zod schemas are at "@mcpguard/policy/schema": loading them is the costly part of a start.
export type { ArgRole } from "./schema.js";
