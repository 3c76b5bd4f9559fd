#!/usr/bin/env node
import { main } from "../dist/cli.js";

process.exitCode = await main("soak", process.argv.slice(2));
