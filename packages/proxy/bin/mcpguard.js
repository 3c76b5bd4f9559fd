#!/usr/bin/env node
// The CLI bundled into one file and started from its V8 code cache (dist/mcpguard.cjs, written by
// bundle.mjs at build); the modules it is made of are dist/cli.js and its imports. A CommonJS file
// (bin/package.json): an ES module entry would start Node's ESM loader first, about 5 ms of every
// start.
"use strict";
require("../dist/mcpguard.cjs");
