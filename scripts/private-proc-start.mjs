#!/usr/bin/env node
/**
 * What the server's private /proc costs at start (issue 31): cold starts of `mcpguard run --config
 * C-full` to `initialized`, with the PID and mount namespaces and without them
 * (MCPGUARD_NO_PRIVATE_PROC=1, a switch for this measurement only), interleaved round by round with
 * `node -e 0` (the machine's floor) and the launcher alone (`mcpguard-exec [--isolate pid] --
 * /bin/true`), so no variant always runs on a warmer or busier machine. Prints medians (and p90) in
 * ms, one JSON line per variant, and the median of the per-round differences with and without.
 *
 *   node scripts/private-proc-start.mjs [ROUNDS]     (default 25; needs root and `make -C bpf`)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const MCPGUARD = join(root, "packages", "proxy", "bin", "mcpguard.js");
const FIXTURE = join(root, "packages", "proxy", "test", "fixtures", "server.mjs");
const LAUNCHER = join(root, "bpf", ".output", "mcpguard-exec");
const rounds = Number(process.argv[2] ?? 25);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("private-proc-start: ROUNDS must be a whole number above 0");
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-proc-start-"));
const policy = join(scratch, "policy.json");
writeFileSync(
  policy,
  JSON.stringify({ version: 1, server: "proxy-fixture", tools: { echo: { args: { text: "text" } } } }),
);

/** Milliseconds from spawn to exit. */
function timeExit(command, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: "ignore", env });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve(Number(process.hrtime.bigint() - start) / 1e6)
        : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

/** Milliseconds from spawning the proxy to the answer to `initialize`; then the session is closed. */
function timeInitialize(env) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(
      process.execPath,
      [MCPGUARD, "run", "--config", "C-full", "--policy", policy, "--", process.execPath, FIXTURE],
      {
        stdio: ["pipe", "pipe", "pipe"],
        cwd: scratch,
        env,
      },
    );
    let out = "";
    let err = "";
    let took;
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (took === undefined && out.includes('"id":0')) {
        took = Number(process.hrtime.bigint() - start) / 1e6;
        child.stdin.end('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      }
    });
    child.once("exit", (code) =>
      took !== undefined ? resolve(took) : reject(new Error(`no initialize answer (${code}): ${err}`)),
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "measure", version: "1" } } })}\n`,
    );
  });
}

const variants = {
  "node -e 0": () => timeExit(process.execPath, ["-e", "0"]),
  "launcher --isolate pid -- /bin/true": () => timeExit(LAUNCHER, ["--isolate", "pid", "--", "/bin/true"]),
  "launcher -- /bin/true": () => timeExit(LAUNCHER, ["--", "/bin/true"]),
  "C-full, private /proc": () => timeInitialize(process.env),
  "C-full, MCPGUARD_NO_PRIVATE_PROC=1": () =>
    timeInitialize({ ...process.env, MCPGUARD_NO_PRIVATE_PROC: "1" }),
};
const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
try {
  await variants["C-full, private /proc"](); // the probe cache and the page cache, warmed for both
  for (let round = 0; round < rounds; round++) {
    // Each round in another order: the first of a round runs after the previous round's last.
    const names = Object.keys(variants);
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) times[name].push(await variants[name]());
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const round2 = (n) => Math.round(n * 100) / 100;
for (const [name, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      variant: name,
      n: sorted.length,
      medianMs: round2(quantile(sorted, 0.5)),
      p90Ms: round2(quantile(sorted, 0.9)),
    }),
  );
}
// The same round's two starts, one with and one without: the median of their differences.
for (const [a, b] of [
  ["C-full, private /proc", "C-full, MCPGUARD_NO_PRIVATE_PROC=1"],
  ["launcher --isolate pid -- /bin/true", "launcher -- /bin/true"],
]) {
  const diffs = times[a].map((t, i) => t - times[b][i]).sort((x, y) => x - y);
  console.log(
    JSON.stringify({ paired: `${a} minus ${b}`, n: diffs.length, medianMs: round2(quantile(diffs, 0.5)) }),
  );
}
