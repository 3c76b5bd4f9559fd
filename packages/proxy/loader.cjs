/**
 * Starts the bundled CLI (dist/mcpguard-<hash>.bundle.cjs, made by bundle.mjs) from its V8 code cache;
 * copied to dist/ by bundle.mjs. dist/mcpguard.cjs, which bin/mcpguard.js requires, calls start():
 * it compiles the bundle with the cache that the build wrote for this Node version and this bundle
 * (dist/code-cache/<node>-<arch>/mcpguard-<hash>.bin), then runs it. Node 20 has no
 * module.enableCompileCache, so this is a vm.Script with cachedData (as servers/ts/loader.cjs).
 *
 * Nothing here writes: `mcpguard run` only reads the cache, and a missing or rejected one (another
 * Node, other V8 flags, another bundle, a damaged file) only means the CLI compiles from source, as
 * without a cache. The cache is written once, at build, by prime.cjs beside bundle.mjs.
 */
"use strict";
const { readFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { join } = require("node:path");
const vm = require("node:vm");

const NAME = "mcpguard";

/** Where the build keeps the code cache for the running Node and the bundle's hash. */
function cachePath(dir, hash) {
  return join(dir, "code-cache", `${process.version}-${process.arch}`, `${NAME}-${hash}.bin`);
}

/** The bundle as a function of CommonJS's five arguments, compiled with `cachedData` when given. */
function compile(dir, hash, cachedData) {
  // Named by its hash, like its cache: V8 checks a cache against the source's length, not its text.
  const filename = join(dir, `${NAME}-${hash}.bundle.cjs`);
  const source = readFileSync(filename, "utf8");
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename, ...(cachedData ? { cachedData } : {}) });
  return { script, filename };
}

function run(dir, compiled) {
  const fn = compiled.script.runInThisContext();
  const module = { exports: {}, filename: compiled.filename };
  fn.call(module.exports, module.exports, createRequire(compiled.filename), module, compiled.filename, dir);
  return module.exports;
}

function start(dir, hash) {
  let cachedData;
  try {
    cachedData = readFileSync(cachePath(dir, hash));
  } catch {
    cachedData = undefined;
  }
  return run(dir, compile(dir, hash, cachedData));
}

module.exports = { cachePath, compile, run, start };
