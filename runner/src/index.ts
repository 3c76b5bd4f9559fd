export * from "./interpreters.js";
export * from "./paths.js";
export * from "./registry.js";
export * from "./world/canaries.js";
export * from "./world/notes.js";
export * from "./world/sink.js";
export * from "./world/world.js";
