/**
 * The readers package's two large dependencies, mvdan-sh (the shell grammar, 1.5 MB of GopherJS) and
 * acorn, required through a V8 code cache written at build (prime.mjs), the way the proxy's CLI
 * starts (scripts/code-cache.cjs). Compiling mvdan-sh from source and running its first parses is
 * most of what a shell server's proxy spends at start: measured on a 2-core VM here, loading it and
 * parsing eight command lines took 290 ms of CPU from source and 110 ms from the cache.
 *
 * A cache is named by the running Node.js and the sha256 of the module's source, so a reinstalled or
 * upgraded dependency never meets the cache of another text (V8 itself checks only the length). At
 * run time nothing here writes: a missing or rejected cache (another Node.js, other V8 flags, a
 * damaged file) only means the module compiles from source, as `require` would.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

/**
 * node:crypto on first use: this module is loaded with the readers package by every start that
 * reads a policy (C-app, C-full), which requires nothing through it before the server runs, and
 * loading node:crypto costs such a start 2-4 ms.
 */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

/** What each module required so far is: its exports, and for the build its script and cache file. */
const loaded = new Map<string, { exports: unknown; cacheFile: string; script: vm.Script }>();

/** dist/code-cache/<node version>-<arch>/ of this package, from src/ (tests) or dist/ alike. */
function cacheDir(): string {
  return join(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "dist",
    "code-cache",
    `${process.version}-${process.arch}`,
  );
}

/**
 * `require(specifier)` as resolved from this package, through its code cache when there is one.
 * Once per process.
 */
export function requireCached(specifier: string): unknown {
  const done = loaded.get(specifier);
  if (done) return done.exports;
  const filename = createRequire(import.meta.url).resolve(specifier);
  const bytes = readFileSync(filename);
  const hash = nodeCrypto().createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const cacheFile = join(cacheDir(), `${specifier}-${hash}.bin`);
  const { exports, script } = runModule(filename, bytes, cacheFile);
  loaded.set(specifier, { exports, cacheFile, script });
  return exports;
}

/**
 * The CommonJS file `filename` (its text `bytes`) compiled with the cache in `cacheFile` when that
 * can be read, and run as Node runs one (the same five arguments); its exports and its script.
 */
export function runModule(
  filename: string,
  bytes: Buffer,
  cacheFile: string,
): { exports: unknown; script: vm.Script } {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No code cache: the module compiles from source.
    cachedData = undefined;
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${bytes.toString("utf8")}\n})`;
  const script = new vm.Script(wrapped, { filename, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as unknown, filename };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, createRequire(filename), module, filename, dirname(filename));
  return { exports: module.exports, script };
}

/**
 * Build time only (prime.mjs): write the code cache of every module required so far, with what
 * V8 compiled of it while the build exercised it, each through a temporary file renamed over it.
 * Returns the files written.
 * @public (prime.mjs imports it from dist/, which knip does not map to src/)
 */
export function writeModuleCaches(): string[] {
  const written: string[] = [];
  for (const { cacheFile, script } of loaded.values()) {
    const data = script.createCachedData();
    mkdirSync(dirname(cacheFile), { recursive: true });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temporary, data);
    renameSync(temporary, cacheFile);
    written.push(cacheFile);
  }
  return written;
}

/**
 * For `specifier` once required: whether V8 took the cache it was given (true), refused it (false),
 * or none was found (undefined).
 * @public (moduleCache.test.ts calls it in a child process, which knip does not see)
 */
export function cacheTaken(specifier: string): boolean | undefined {
  const rejected = loaded.get(specifier)?.script.cachedDataRejected;
  return rejected === undefined ? undefined : !rejected;
}
