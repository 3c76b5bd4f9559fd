#!/usr/bin/env node
// The CLI bundled into one file and started from its V8 code cache (dist/mcpguard.cjs, written by
// bundle.mjs at build); the modules it is made of are dist/cli.js and its imports.
import { createRequire } from "node:module";

createRequire(import.meta.url)("../dist/mcpguard.cjs");
