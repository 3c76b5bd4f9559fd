export { type Binaries, binaries, KERNEL_LAYER_MANIFEST, whyAbsent } from "./binaries.js";
export {
  compile,
  encodeRecords,
  type KernelNeeds,
  planAccess,
  RULESET_HEADER,
  writablePaths,
} from "./compile.js";
export { type KernelEvent, KernelGuard, KernelSetupError, PendingLoader } from "./guard.js";
export { LaunchError, parseNpx, resolveLaunch, splitCommand } from "./launchers.js";
export {
  CAPABILITIES,
  capabilityBackends,
  HARDENING,
  hardeningBackends,
  LANDLOCK_MIN_ABI,
  probeBackends,
} from "./probe.js";
export { parseUpstream, type Upstream } from "./resolver.js";
