export * from "./decide.js";
export * from "./derive.js";
export * from "./env.js";
export * from "./load.js";
export * from "./paths.js";
export * from "./schema.js";
export * from "./shell.js";
export * from "./sql.js";
