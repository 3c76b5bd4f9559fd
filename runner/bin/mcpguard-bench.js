#!/usr/bin/env node
import { main } from "../dist/cli.js";

process.exitCode = await main("bench", process.argv.slice(2));
