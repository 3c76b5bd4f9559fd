export { availableConfigs, ConfigError, resolveConfig } from "./configs.js";
export { type Containment, createContainment, findCgroup2, removeCgroupTree } from "./containment.js";
export { defaultLimits, v1LimitParents } from "./limits.js";
