/**
 * Build step (bundle.mjs runs it, never `mcpguard run`): runs the bundled CLI the way
 * dist/mcpguard.cjs does, with the arguments given, while bundle.mjs takes the session through
 * initialize, tools/list and a few tool calls on stdin; when the process exits it writes the V8 code cache of
 * everything compiled so far, atomically (a temporary file renamed over the target), and says
 * "cache written" on stderr.
 *
 *   node prime.cjs <dist dir> <bundle hash> <cache name, or - for none> <mcpguard arguments...>
 */
"use strict";
const { join } = require("node:path");

const [dir, hash, cacheName, ...argv] = process.argv.slice(2);
const loader = require(join(dir, "loader.cjs"));
const target = loader.cachePath(dir, cacheName);
// The CLI reads its arguments from process.argv, as when bin/mcpguard.js starts it.
process.argv = [process.argv[0], join(dir, "..", "bin", "mcpguard.js"), ...argv];
const compiled = loader.compile(dir, `mcpguard-${hash}.bundle.cjs`, undefined);

// "-": run the bundle and write no cache (bundle.mjs asks the new bundle's doctor so).
if (cacheName !== "-")
  process.on("exit", () => {
    loader.saveCache(compiled, target);
    process.stderr.write("cache written\n");
  });
loader.run(dir, compiled);
