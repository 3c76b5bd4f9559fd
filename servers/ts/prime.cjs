/**
 * Build step (build.mjs runs it, never a trial): starts one bundled server the way dist/<name>.js
 * does, while build.mjs takes it through initialize and tools/list on stdin; when stdin ends it
 * writes the V8 code cache of everything compiled so far, atomically (a temporary file renamed
 * over the target), and exits.
 *
 *   node prime.cjs <dist dir> <name> <bundle hash>
 */
"use strict";
const { join } = require("node:path");

const [dir, name, hash] = process.argv.slice(2);
const loader = require(join(dir, "loader.cjs"));
const target = loader.cachePath(dir, `${name}-${hash}`);
// The server reads its own arguments from process.argv, as when dist/<name>.js starts it.
process.argv = [process.argv[0], join(dir, `${name}.js`)];
const compiled = loader.compile(dir, `${name}.bundle.cjs`, undefined);

let written = false;
function writeCache() {
  if (written) return;
  written = true;
  loader.saveCache(compiled, target);
}

process.stdin.on("end", () => {
  writeCache();
  process.exit(0);
});
loader.run(dir, compiled);
