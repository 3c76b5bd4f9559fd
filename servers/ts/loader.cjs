/**
 * Starts a bundled TypeScript victim server from its V8 code cache (copied to dist/ by build.mjs).
 * Each dist/<name>.js calls start(): it compiles dist/<name>.bundle.cjs with the cache that the
 * build wrote for this Node version and this bundle (dist/code-cache/<node>-<arch>/<name>-<hash>.bin),
 * then runs it. Node 20 has no module.enableCompileCache, so this is a vm.Script with cachedData.
 *
 * Nothing here writes: a trial only reads the cache, and a missing or rejected one (another Node,
 * other V8 flags, another bundle) only means the server compiles from source, as without a cache.
 * The cache is written once, at build, by prime.cjs beside build.mjs (never from dist/).
 */
"use strict";
const { readFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { join } = require("node:path");
const vm = require("node:vm");

/** Where the build keeps the code cache of `name` for the running Node and the bundle's hash. */
function cachePath(dir, name, hash) {
  return join(dir, "code-cache", `${process.version}-${process.arch}`, `${name}-${hash}.bin`);
}

/** The bundle as a function of CommonJS's five arguments, compiled with `cachedData` when given. */
function compile(dir, name, cachedData) {
  const filename = join(dir, `${name}.bundle.cjs`);
  const source = readFileSync(filename, "utf8");
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename, ...(cachedData ? { cachedData } : {}) });
  return { script, filename };
}

function run(dir, compiled) {
  const fn = compiled.script.runInThisContext();
  const module = { exports: {}, filename: compiled.filename };
  fn.call(module.exports, module.exports, createRequire(compiled.filename), module, compiled.filename, dir);
}

function start(dir, name, hash) {
  let cachedData;
  try {
    cachedData = readFileSync(cachePath(dir, name, hash));
  } catch {
    cachedData = undefined;
  }
  run(dir, compile(dir, name, cachedData));
}

module.exports = { cachePath, compile, run, start };
