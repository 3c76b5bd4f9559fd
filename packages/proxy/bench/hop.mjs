#!/usr/bin/env node
/**
 * What the proxy hop and the application layers cost: a trivial tool call round trip from an SDK
 * client, straight to the server and through `mcpguard run` under each config (one long-lived
 * session each), measured with tinybench in interleaved rounds.
 *
 *   node bench/hop.mjs [--configs C0,C-app,C-AB] [--rounds 5] [--iterations 400] [--json FILE]
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
const policy = join(here, "..", "test", "fixtures", "policy.json");
const manifest = join(here, "..", "test", "fixtures", "manifest.json");

const { values } = parseArgs({
  options: {
    configs: { type: "string", default: "C0" },
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

const configs = values.configs.split(",");
const paths = ["direct", ...configs];
const sessions = { direct: await session([server]) };
for (const config of configs) {
  const layers = ["--policy", policy, "--manifest", manifest];
  sessions[config] = await session([
    mcpguard,
    "run",
    "--config",
    config,
    ...layers,
    "--",
    process.execPath,
    server,
  ]);
}
const call = { name: "echo", arguments: { text: "ping" } };
const samples = Object.fromEntries(paths.map((p) => [p, []]));

for (let round = 0; round < rounds; round++) {
  const bench = new Bench({ iterations, time: 0, warmupIterations: 50, warmupTime: 0, retainSamples: true });
  // Alternate the order between rounds so neither path always runs on a warmer machine.
  const order = round % 2 === 0 ? paths : [...paths].reverse();
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

const result = Object.fromEntries(paths.map((p) => [p, stats(samples[p])]));
const ms = (v) => v.toFixed(3);
const baseline = (p) => (p === "C0" || !result.C0 ? "direct" : "C0");
const lines = [
  "| path | n | p50 (ms) | p95 (ms) | p99 (ms) | mean ± sd (ms) | p50 added |",
  "|---|---:|---:|---:|---:|---:|---|",
  ...paths.map((k) => {
    const s = result[k];
    const added = k === "direct" ? "–" : `+${ms(s.p50 - result[baseline(k)].p50)} vs ${baseline(k)}`;
    return `| ${k} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${ms(s.mean)} ± ${ms(s.sd)} | ${added} |`;
  }),
];
process.stdout.write(`${lines.join("\n")}\n`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
