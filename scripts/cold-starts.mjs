#!/usr/bin/env node
/**
 * Cold starts as a client makes them, interleaved: `node scripts/cold-starts.mjs N [--audit]
 * [--pair A,B]... PATH...`, where each PATH (each once) is `pipe`, `contained` (pipe with the
 * containment a proxy must give its server, runner/probe/pipeContained.cjs; root), `direct`, or
 * `<checkout>:<config>` (a built checkout of this repository, such as a worktree of an older
 * commit, and a config). Each start spawns the path over the Python `filesystem` victim in a
 * scratch workspace, with the environment the children really get (without NODE_EXTRA_CA_CERTS),
 * writes `initialize`, and times it to the answer; the paths take turns, in alternating order, N
 * rounds, after one start of each that is not timed. With `--audit`, each proxy keeps an audit
 * log, as every `mcpguard wrap` entry does (a log of its own for each path, kept across rounds, and
 * the key, in a scratch folder under .cache/: the key may not be in the server's TMPDIR). Prints
 * p25, p50 and p75 per path, and for each `--pair A,B` those of B's time minus A's within each
 * round: on a machine whose speed moves from one round to the next, the figure to compare two
 * paths by (docs/PERFORMANCE.md).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const [rounds, ...rest] = process.argv.slice(2);
const pairs = [];
const paths = [];
let audit = false;
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === "--pair") pairs.push((rest[++i] ?? "").split(","));
  else if (rest[i] === "--audit") audit = true;
  else paths.push(rest[i]);
}
if (
  !Number(rounds) ||
  paths.length === 0 ||
  new Set(paths).size !== paths.length ||
  pairs.some((pair) => pair.length !== 2 || pair.some((p) => !paths.includes(p)))
) {
  process.stderr.write(
    "usage: node scripts/cold-starts.mjs N [--audit] [--pair A,B]... PATH... (PATH: pipe, contained, direct, or <checkout>:<config>, each once; A and B among them)\n",
  );
  process.exit(2);
}
const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
  encoding: "utf8",
}).stdout.trim();
const server = [python, join(ROOT, "servers", "python", "filesystem.py")];
const policies = join(ROOT, "policies");
let logs;
if (audit) {
  mkdirSync(join(ROOT, ".cache"), { recursive: true });
  logs = mkdtempSync(join(ROOT, ".cache", "cold-starts-audit-"));
}
const argvOf = (path) => {
  if (path === "direct") return server;
  if (path === "pipe") return [process.execPath, join(ROOT, "runner", "probe", "pipeRelay.cjs"), ...server];
  if (path === "contained")
    return [process.execPath, join(ROOT, "runner", "probe", "pipeContained.cjs"), ...server];
  const at = path.lastIndexOf(":");
  const [checkout, config] = [resolve(path.slice(0, at)), path.slice(at + 1)];
  const files = ["--policy", "servers/filesystem.json", "--manifest", "agentbound/filesystem.json"];
  return [
    process.execPath,
    join(checkout, "packages", "proxy", "bin", "mcpguard.js"),
    "run",
    "--config",
    config,
    "--server-name",
    "filesystem",
    ...files.map((f, i) => (i % 2 ? join(policies, f) : f)),
    "--overrides",
    join(policies, "overrides"),
    ...(logs
      ? [
          "--audit-log",
          join(logs, `${paths.indexOf(path)}.ndjson`),
          "--audit-key",
          join(logs, "key", "audit.key"),
        ]
      : []),
    "--",
    ...server,
  ];
};
const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;
const work = mkdtempSync(join(tmpdir(), "mcpguard-cold-"));
writeFileSync(join(work, "readme.txt"), "This is the MCPGuard sample workspace.\n");
const initialize = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cold", version: "1" } },
})}\n`;

/** One start: spawn to the first line of its answer, in ms. */
async function once(argv) {
  const t0 = performance.now();
  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"], env, cwd: work });
  child.stdin.write(initialize);
  await new Promise((done, fail) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) done();
    });
    child.on("exit", () => fail(new Error(`${argv.join(" ")} exited before answering`)));
  });
  const ms = performance.now() - t0;
  child.stdin.end();
  await new Promise((done) => (child.exitCode === null ? child.on("exit", done) : done()));
  return ms;
}

const times = new Map(paths.map((p) => [p, []]));
try {
  // One start of each path first, not timed: the audit key made, the files read once.
  for (const path of paths) await once(argvOf(path));
  for (let round = 0; round < Number(rounds); round++)
    for (const path of round % 2 ? [...paths].reverse() : paths)
      times.get(path).push(await once(argvOf(path)));
} catch (error) {
  process.stderr.write(`cold-starts: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
  if (logs) rmSync(logs, { recursive: true, force: true });
}
const at = (sorted, q) => sorted[Math.floor(sorted.length * q)]?.toFixed(1) ?? "-";
const quartiles = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return `p25 ${at(sorted, 0.25)}\tp50 ${at(sorted, 0.5)}\tp75 ${at(sorted, 0.75)} ms`;
};
for (const [path, list] of times) process.stdout.write(`${path}\t${quartiles(list)}\n`);
for (const [a, b] of pairs) {
  const [as, bs] = [times.get(a), times.get(b)];
  const within = bs.slice(0, as.length).map((t, round) => t - as[round]);
  process.stdout.write(`${b} - ${a}, within each round\t${quartiles(within)}\n`);
}
