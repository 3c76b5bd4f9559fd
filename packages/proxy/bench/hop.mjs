#!/usr/bin/env node
/**
 * What the proxy hop costs: a trivial tool call round trip from an SDK client, straight to the
 * server and through `mcpguard run --config C0`, measured with tinybench in interleaved rounds.
 *
 *   node bench/hop.mjs [--rounds 5] [--iterations 400] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Bench } from "tinybench";

const here = dirname(fileURLToPath(import.meta.url));
const server = join(here, "..", "test", "fixtures", "server.mjs");
const mcpguard = join(here, "..", "bin", "mcpguard.js");

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "400" },
    json: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);

async function session(args) {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "inherit" });
  const client = new Client({ name: "hop-bench", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const sessions = {
  direct: await session([server]),
  C0: await session([mcpguard, "run", "--config", "C0", "--", process.execPath, server]),
};
const call = { name: "echo", arguments: { text: "ping" } };
const samples = { direct: [], C0: [] };

for (let round = 0; round < rounds; round++) {
  const bench = new Bench({ iterations, time: 0, warmupIterations: 50, warmupTime: 0, retainSamples: true });
  // Alternate the order between rounds so neither path always runs on a warmer machine.
  const order = round % 2 === 0 ? ["direct", "C0"] : ["C0", "direct"];
  for (const name of order) bench.add(name, () => sessions[name].callTool(call));
  await bench.run();
  for (const task of bench.tasks) samples[task.name].push(...(task.result.latency.samples ?? []));
}
await Promise.all(Object.values(sessions).map((c) => c.close()));

function quantile(sorted, q) {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  const sd = Math.sqrt(sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / (sorted.length - 1));
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    mean,
    sd,
  };
}

const result = { direct: stats(samples.direct), C0: stats(samples.C0) };
result.addedP50Ms = result.C0.p50 - result.direct.p50;
const ms = (v) => v.toFixed(3);
const lines = [
  "| path | n | p50 (ms) | p95 (ms) | p99 (ms) | mean ± sd (ms) |",
  "|---|---:|---:|---:|---:|---:|",
  ...["direct", "C0"].map((k) => {
    const s = result[k];
    return `| ${k} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${ms(s.mean)} ± ${ms(s.sd)} |`;
  }),
  "",
  `proxy hop adds ${ms(result.addedP50Ms)} ms at p50 (target: at most 0.100 ms)`,
];
process.stdout.write(`${lines.join("\n")}\n`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
