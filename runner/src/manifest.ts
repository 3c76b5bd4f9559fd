/** `manifest.json`: what ran, where, with which versions, so a result can be traced and repeated. */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { join } from "node:path";
import type { BenchPlan, BenchResult } from "./bench.js";
import { REPO_ROOT, repoPath } from "./paths.js";
import { peerManifest, peerWorldBase } from "./peers.js";
import { resolveRealServers } from "./real.js";
import type { ServerEntry } from "./registry.js";
import { configsNotRunOf } from "./summarize.js";
import { defaultWorldBase } from "./world/world.js";

function gitCommit(): { commit: string | null; dirty: boolean | null } {
  try {
    const commit = execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

function osName(): string | null {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

function packageVersion(path: string): string | null {
  try {
    return (JSON.parse(readFileSync(path, "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

export function writeManifest(
  plan: BenchPlan,
  result: BenchResult,
  facts: { hostSudo: boolean; servers?: ReadonlyMap<string, ServerEntry> },
): void {
  const used = new Set(plan.scenarios.map((s) => s.server));
  // A config that ran nothing (the host cannot enforce it, a peer not installed) is one entry, not
  // every case of it.
  const configsNotRun = configsNotRunOf(result.records);
  const notRun = [
    ...new Map(
      result.records
        .filter((r) => r.notRun && !Object.hasOwn(configsNotRun, r.config))
        .map((r) => [r.id, { id: r.id, reason: r.notRun }]),
    ).values(),
  ];
  const manifest = {
    runId: plan.runId,
    createdAt: new Date().toISOString(),
    commandLine: plan.commandLine,
    interrupted: result.interrupted,
    wallMs: result.wallMs,
    configs: plan.configs,
    trials: plan.trials,
    jobs: plan.jobs,
    shard: plan.shard ?? null,
    cases: plan.scenarios.map((s) => s.id).sort(),
    casesNotRun: notRun,
    configsNotRun,
    l3: Object.fromEntries(
      plan.configs.map((c) => [c, result.records.find((r) => r.config === c && r.l3)?.l3 ?? null]),
    ),
    versions: {
      mcpguard: packageVersion(repoPath("packages", "proxy", "package.json")),
      node: result.interpreters.nodeVersion,
      python: result.interpreters.pythonVersion,
      mcpSdk: packageVersion(
        repoPath("runner", "node_modules", "@modelcontextprotocol", "sdk", "package.json"),
      ),
    },
    interpreters: { node: result.interpreters.node, python: result.interpreters.python },
    // The peer sandboxes of the run (their versions, or why they did not run) and where worlds lived.
    peers: peerManifest(plan.configs),
    worldBase: peerWorldBase(plan.configs) ?? defaultWorldBase(),
    // Third-party servers of the real suite: the package and the script each was started from.
    realServers: resolveRealServers([...(facts.servers?.values() ?? [])].filter((s) => used.has(s.id))),
    host: {
      kernel: release(),
      os: osName(),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      memoryBytes: totalmem(),
      uid: process.getuid?.() ?? null,
      hostSudoUsable: facts.hostSudo,
    },
    git: gitCommit(),
  };
  writeFileSync(join(plan.outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}
