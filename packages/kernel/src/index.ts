export * from "./binaries.js";
export * from "./compile.js";
export * from "./guard.js";
export * from "./launchers.js";
export * from "./probe.js";
export { parseUpstream, systemNameServers, type Upstream } from "./resolver.js";
