/**
 * Starting a bundled program from its V8 code cache: the proxy's CLI (packages/proxy/bundle.mjs)
 * and the TypeScript victim servers (servers/ts/build.mjs). Each build copies this file into its
 * dist/ as loader.cjs, beside the bundles it writes, and generates entry points that call start().
 * Node 20 has no module.enableCompileCache, so this is a vm.Script with cachedData.
 *
 * At run time nothing here writes: a program only reads its cache, and a missing or rejected one
 * (another Node, other V8 flags, another bundle, a damaged file) only means it compiles from source.
 * saveCache() is called by the builds' prime.cjs, once, at build.
 */
"use strict";
const { isAscii } = require("node:buffer");
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { dirname, join } = require("node:path");
const vm = require("node:vm");

/** Where a build keeps the cache named `cacheName` for the running Node. */
function cachePath(dir, cacheName) {
  return join(dir, "code-cache", `${process.version}-${process.arch}`, `${cacheName}.bin`);
}

/**
 * The bundle `dir/bundleFile` as a function of CommonJS's five arguments, compiled with `cachedData`
 * when given. A bundle's cache is named by the bundle's hash: V8 checks a cache against the length of
 * the source, not its text. A bundle that is all ASCII (the builds make it so) is read as latin1, the
 * same text: a one-byte string without UTF-8 decoding, about 4 ms less for the proxy's 1.5 MB.
 */
function compile(dir, bundleFile, cachedData) {
  const filename = join(dir, bundleFile);
  const bytes = readFileSync(filename);
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  // One string in V8's heap, the wrapper and the bundle together, copied once. Node makes a large
  // latin1 string an external one, from which V8 compiles the functions that are not in the cache
  // more slowly (measured: +1 ms on C0's first call), so it is copied into the heap; but copied
  // before the wrapper is joined to it, it was copied again by the compile, which flattens the
  // joined string (1.5-2.5 ms for the proxy's bundle, measured). The slice flattens the joined one
  // here; leaving that to the compile would cost the same.
  const wrapped = ` (function (exports, require, module, __filename, __dirname) {${source}\n})`.slice(1);
  const script = new vm.Script(wrapped, { filename, ...(cachedData ? { cachedData } : {}) });
  return { script, filename };
}

/** Run what compile() returned, as Node runs a CommonJS module; its exports. */
function run(dir, compiled) {
  const fn = compiled.script.runInThisContext();
  const module = { exports: {}, filename: compiled.filename };
  fn.call(module.exports, module.exports, createRequire(compiled.filename), module, compiled.filename, dir);
  return module.exports;
}

/** Compile `bundleFile` with the cache named `cacheName` when there is one, and run it. */
function start(dir, bundleFile, cacheName) {
  let cachedData;
  try {
    cachedData = readFileSync(cachePath(dir, cacheName));
  } catch {
    cachedData = undefined;
  }
  return run(dir, compile(dir, bundleFile, cachedData));
}

/** Build time only: what V8 compiled of `compiled` so far, written to `target` through a renamed temporary file. */
function saveCache(compiled, target) {
  const data = compiled.script.createCachedData();
  mkdirSync(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, data);
  renameSync(temporary, target);
}

module.exports = { cachePath, compile, run, saveCache, start };
