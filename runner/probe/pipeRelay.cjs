#!/usr/bin/env node
/**
 * The floor of any Node.js stdio proxy, for `mcpguard bench latency`: spawn the server and pipe
 * bytes both ways, with no framing, parsing or checks. What a real proxy adds above this path is
 * its own work; what this path adds above `direct` is the second process on the way. A CommonJS
 * file, as the proxy's own bin is: an ES module would start Node.js's ESM loader first (about 4 ms
 * of every cold start measured here), which no proxy has to pay, and the floor would be that much
 * too high.
 */
"use strict";
const { spawn } = require("node:child_process");
const { constants } = require("node:os");

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: pipeRelay.cjs <command> [args...]\n");
  process.exit(2);
}
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on("error", () => {});
child.on("error", (error) => {
  process.stderr.write(`pipeRelay: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
