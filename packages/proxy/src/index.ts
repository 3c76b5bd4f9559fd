export { type AuditEvent, AuditLog, canonicalJson, digest } from "./audit.js";
export {
  availableConfigs,
  CONFIG_NAMES,
  CONFIGS,
  ConfigError,
  type ConfigName,
  resolveConfig,
} from "./configs.js";
export { type Containment, createContainment, findCgroup2, removeCgroupTree } from "./containment.js";
export { defaultLimits, type Limits, type LimitsInfo, v1LimitParents } from "./limits.js";
export {
  exitStatus,
  type Interceptor,
  Relay,
  type RelayOptions,
  type ToolCall,
  type Verdict,
} from "./relay.js";
