/**
 * The benchmark commands of `mcpguard` (`mcpguard bench ...`, `mcpguard report ...`), reached
 * through the proxy CLI's external-command lookup of `mcpguard-<command>`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, intOption, UsageError } from "@mcpguard/proxy/args";
import { z } from "zod";
import { type BenchPlan, DEFAULT_JOBS, runBench } from "./bench.js";
import { CAVEAT_LABELS, caveats } from "./caveats.js";
import { readJsonFile } from "./jsonFile.js";
import { repoPath } from "./paths.js";
import { withViableBaseline } from "./peers.js";
import { peerLines } from "./peersReport.js";
import { readRecords } from "./records.js";
import { renderMarkdown, writeReports } from "./render.js";
import { loadScenarios, type ScenarioIssue } from "./scenario.js";
import { knownServers, resolveConfigs, selectScenarios, serverVariants, suitePaths } from "./select.js";
import { summarize } from "./summarize.js";
import type { TrialRecord } from "./trial.js";

const BENCH = defineCommand({
  name: "mcpguard bench",
  description:
    "Run every case under every config, N trials each, in fresh isolated worlds, then write " +
    "reports/<run-id>/ (trials.ndjson, summary.json, summary.md, results.csv, index.html, manifest.json).",
  options: {
    configs: {
      type: "string",
      value: "list",
      help:
        'comma-separated configs, or "all" (default: all configs built here); "peers" or P-srt, P-bwrap, ' +
        "P-firejail for the peer sandboxes (never run by default; a run of attacks with a peer always has " +
        "C0, which defines the viable attacks)",
    },
    /** `mcpguard run`'s spelling, kept as an alias. */
    config: { type: "string", value: "list" },
    peers: { type: "boolean", help: "add the peer configs (P-srt, P-bwrap, P-firejail) to --configs" },
    trials: { type: "string", value: "n", help: "trial runs per case and config (default 1)" },
    suite: {
      type: "string",
      value: "list",
      help:
        "comma-separated suites: core (the 82 cases of the paper, the default), corpus (the benign " +
        "corpus, test_cases/benign_corpus), real (third-party servers from node_modules, each case from " +
        "the workspace and from /), protocol (what servers say to the agent: listings, resources, " +
        "prompts, requests, rug pulls), all (every folder of test_cases/), or a category folder name",
    },
    cases: {
      type: "string",
      value: "dir|ids",
      help:
        "a directory or file of scenario JSON, or comma-separated case ids (ids are looked up in every " +
        "suite); instead of --suite",
    },
    jobs: {
      type: "string",
      value: "n",
      help: `trials in parallel (default: 2 per CPU, at most CPUs + 4; ${DEFAULT_JOBS} here)`,
    },
    out: { type: "string", value: "dir", help: "output directory (default reports/<run-id>)" },
    "run-id": {
      type: "string",
      value: "id",
      help: "name of the run (default: the UTC time and a random suffix)",
    },
    "no-direct": { type: "boolean", help: "skip the direct (no proxy) latency baseline" },
    policies: {
      type: "string",
      value: "dir",
      help:
        "each server's policy from <dir>/<server id>.json instead of policies/servers (drafts from " +
        "mcpguard policy derive, a learnt set); a server of the run without one there is an error",
    },
    "audit-dir": {
      type: "string",
      value: "dir",
      help: "keep each trial's audit log there as <config>.<case>.<trial>.ndjson (for mcpguard policy learn)",
    },
    "keep-raw": {
      type: "boolean",
      help: "also keep raw response and sink bytes in <out>/raw/ (never commit them)",
    },
    "allow-host-sudo": {
      type: "boolean",
      help: "run PE-02 even where `sudo -n true` succeeds (it would read /etc/shadow)",
    },
    quiet: {
      type: "boolean",
      help:
        "no progress (on a terminal one line that updates; elsewhere, as in CI, a plain line every 30 s: " +
        "trials done/total, trial errors, elapsed, ETA)",
    },
    shard: {
      type: "string",
      value: "i/n",
      help: "run only the i-th of n deterministic slices of the trials (merge them with mcpguard bench merge)",
    },
  },
  more: `more commands:
  mcpguard bench validate [--suite LIST | DIR...]   check scenario files without running them
  mcpguard bench latency [options]                  the latency benchmark
  mcpguard bench merge [--out DIR] <shard-dir>...   combine the shards of one run
  mcpguard bench drafts [options]                   raw drafts, a learning pass, learnt policies: how far each gets
  mcpguard bench check-layers <run-dir>             trials whose deciding layer disagrees with their audit log
each has its own --help`,
});

function printIssues(issues: ScenarioIssue[]): void {
  for (const issue of issues) {
    process.stderr.write(`${issue.file}: ${issue.field ? `${issue.field}: ` : ""}${issue.message}\n`);
  }
}

function defaultRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${Math.random().toString(16).slice(2, 6)}`;
}

const VALIDATE = defineCommand({
  name: "mcpguard bench validate",
  description:
    "Check scenario files against the scenario schema and the servers they name: each server is " +
    "started once in a scratch world and each case's tool and argument names are checked against its " +
    'tools/list (a case that calls a missing tool on purpose says "unlisted": true). Every invalid file ' +
    "is listed with the case, the field and what was expected. Exit status 1 when a file is invalid.",
  args: [["[paths...]", "scenario files or folders (default: the core suite)"]],
  options: {
    suite: { type: "string", value: "list", help: "the suites of mcpguard bench, instead of paths" },
    "schema-only": {
      type: "boolean",
      help: "check the files only: start no server, so tool and argument names are not checked",
    },
    jobs: { type: "string", value: "n", help: `servers started at a time (default ${DEFAULT_JOBS})` },
  },
});

const MERGE = defineCommand({
  name: "mcpguard bench merge",
  description: "Combine the trials.ndjson of shard runs into one run and build its reports.",
  args: [["<shard-dir...>", "the shards' output directories"]],
  options: {
    out: { type: "string", value: "dir", help: "output directory (default reports/<run-id>)" },
    "run-id": { type: "string", value: "id", help: "the merged run's name (needed when the shards' differ)" },
    partial: {
      type: "boolean",
      help:
        "merge an incomplete or inconsistent shard set (missing shards, shards of other run parameters) " +
        "anyway; the merged summary says it is partial. Duplicate trials are refused even then",
    },
  },
});

const REPORT = defineCommand({
  name: "mcpguard report",
  description: "Rebuild summary.json, summary.md, results.csv and index.html from a run's trials.ndjson.",
  args: [["<run-dir>", "the run's output directory"]],
  options: {},
});

async function validate(argv: string[]): Promise<number> {
  const parsed = VALIDATE.parse(argv);
  if (!parsed) return 0;
  const { values, positionals: args } = parsed;
  if (values.suite !== undefined && args.length)
    throw new UsageError("give --suite or directories, not both");
  const jobs = intOption(values.jobs, "jobs", DEFAULT_JOBS);
  if (jobs < 1) throw new UsageError("--jobs must be at least 1");
  const paths = args.length ? args : suitePaths(values.suite);
  for (const p of paths) if (!existsSync(p)) throw new UsageError(`no such file or directory: ${p}`);
  const { scenarios, issues, files } = loadScenarios(paths, knownServers(), serverVariants());
  if (!values["schema-only"]) {
    // Only the cases whose server is known: an unknown one is already an issue of its file.
    const known = knownServers();
    const listable = scenarios.filter((s) => known.has(s.server));
    const { checkCalls, listServers, listingTargets } = await import("./listing.js");
    const listings = await listServers(listingTargets(listable), { jobs });
    issues.push(...checkCalls(listable, listings));
  }
  printIssues(issues);
  const bad = new Set(issues.map((i) => i.file)).size;
  process.stdout.write(
    `${files} scenario file${files === 1 ? "" : "s"} read, ${bad} invalid${values["schema-only"] ? " (schema only: no server started)" : ""}\n`,
  );
  return issues.length ? 1 : 0;
}

/** `--shard i/n`: the i-th of n deterministic slices (1-based). */
export function parseShard(value: string | undefined): { index: number; count: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(value);
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count) {
    throw new UsageError(`--shard must be i/n with 1 <= i <= n, got "${value}"`);
  }
  return { index, count };
}

async function bench(argv: string[]): Promise<number> {
  if (argv[0] === "validate") return validate(argv.slice(1));
  if (argv[0] === "merge") return merge(argv.slice(1));
  if (argv[0] === "latency") return (await import("./latency.js")).main(argv.slice(1));
  if (argv[0] === "drafts") return (await import("./drafts.js")).drafts(argv.slice(1));
  if (argv[0] === "check-layers") return (await import("./layers.js")).main(argv.slice(1));
  const parsed = BENCH.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const trials = intOption(values.trials, "trials", 1);
  const jobs = intOption(values.jobs, "jobs", DEFAULT_JOBS);
  if (trials < 1) throw new UsageError("--trials must be at least 1");
  if (jobs < 1) throw new UsageError("--jobs must be at least 1");
  const runId = values["run-id"] ?? defaultRunId();
  if (!/^[A-Za-z0-9._-]+$/.test(runId))
    throw new UsageError(`--run-id may hold only letters, digits, ".", "_" and "-"`);
  if (values.config !== undefined && values.configs !== undefined)
    throw new UsageError("give --configs or its alias --config, not both");
  const requested = resolveConfigs(values.configs ?? values.config, values.peers === true);
  const { scenarios, issues } = selectScenarios(values.cases, values.suite);
  if (issues.length) {
    printIssues(issues);
    throw new UsageError(
      `${new Set(issues.map((i) => i.file)).size} scenario file(s) are invalid; nothing was run`,
    );
  }
  if (scenarios.length === 0) throw new UsageError("no scenario files found");
  const configs = withViableBaseline(
    requested,
    scenarios.some((s) => s.kind === "attack"),
  );

  const policiesDir = values.policies === undefined ? undefined : resolve(values.policies);
  if (policiesDir) {
    const missing = [...new Set(scenarios.map((s) => s.server))].filter(
      (id) => !existsSync(join(policiesDir, `${id}.json`)),
    );
    if (missing.length)
      throw new UsageError(
        `--policies ${values.policies}: no policy for ${missing.map((id) => `${id}.json`).join(", ")}`,
      );
  }
  const auditDir = values["audit-dir"] === undefined ? undefined : resolve(values["audit-dir"]);
  if (auditDir) mkdirSync(auditDir, { recursive: true });
  const outDir = resolve(values.out ?? repoPath("reports", runId));
  const plan: BenchPlan = {
    runId,
    outDir,
    configs,
    scenarios,
    trials,
    jobs,
    direct: !values["no-direct"],
    keepRaw: values["keep-raw"] === true,
    allowHostSudo: values["allow-host-sudo"] === true,
    ...(policiesDir ? { policiesDir } : {}),
    ...(auditDir ? { auditDir } : {}),
    explicitConfigs: (values.configs ?? values.config ?? "all").trim() !== "all",
    progress: values.quiet ? "off" : process.stderr.isTTY === true ? "tty" : "lines",
    commandLine: ["mcpguard", "bench", ...argv],
    shard: parseShard(values.shard),
  };
  const controller = new AbortController();
  const interrupt = () => {
    if (!controller.signal.aborted)
      process.stderr.write("\n[bench] interrupted: stopping trials and cleaning up\n");
    controller.abort();
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  try {
    const result = await runBench(plan, controller.signal);
    const summary = summarize(runId, result.records);
    writeReports(outDir, summary, result.records);
    process.stdout.write(mainTable(summary));
    process.stdout.write(suiteLines(summary));
    process.stdout.write(peerLines(summary.peers));
    process.stdout.write(errorLines(summary));
    process.stdout.write(timeLine(summary, result.wallMs, plan.jobs));
    process.stdout.write(`\nreport: ${join(outDir, "index.html")}\n`);
    if (result.interrupted) {
      process.stderr.write(
        `[bench] the run was interrupted; ${result.records.length} records kept in ${outDir}\n`,
      );
      return 130;
    }
    return 0;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}

/** One line per suite beside the core and config, for the terminal. */
function suiteLines(summary: ReturnType<typeof summarize>): string {
  const pct = (v: number | undefined) => (v === undefined ? "–" : `${(v * 100).toFixed(1)}%`);
  const lines: string[] = [];
  for (const [name, suite] of Object.entries(summary.suites)) {
    for (const [config, s] of Object.entries(suite.configs)) {
      const parts = [];
      if (s.benign)
        parts.push(
          `benign failed ${s.failed}/${s.benign} (FPR ${pct(s.fpr?.value)} [${pct(s.fpr?.lo)}, ${pct(s.fpr?.hi)}])`,
        );
      if (s.attacks) parts.push(`attacks never fired ${s.blocked}/${s.attacks}`);
      lines.push(`suite ${name}, ${config}: ${parts.join(", ")}`);
    }
  }
  return lines.length ? `\n${lines.join("\n")}\n` : "";
}

/** What merge reads of a shard's manifest.json; the rest is carried over from the first as it is. */
const ShardManifest = z.looseObject({
  shard: z
    .strictObject({ index: z.number().int().positive(), count: z.number().int().positive() })
    .nullable()
    .optional(),
  wallMs: z.number().nonnegative().optional(),
  interrupted: z.boolean().optional(),
  configs: z.array(z.string()).optional(),
  trials: z.number().int().positive().optional(),
  cases: z.array(z.string()).optional(),
  git: z.looseObject({ commit: z.string().nullable().optional() }).nullable().optional(),
});
type ShardManifest = z.infer<typeof ShardManifest>;

/**
 * Why a set of shard directories is not one whole run: shards missing from 1..n, a shard given
 * twice, shards of other run parameters (configs, trials, cases, commit), an interrupted shard, a
 * directory without the manifest that says which shard it is. Empty for a complete, consistent set.
 */
export function shardSetProblems(dirs: string[], manifests: (ShardManifest | undefined)[]): string[] {
  const problems: string[] = [];
  const without = dirs.filter((_, i) => !manifests[i]);
  if (without.length)
    problems.push(
      `${without.join(", ")} ha${without.length === 1 ? "s" : "ve"} no manifest.json to say which shard it is`,
    );
  const present = manifests.filter((m): m is ShardManifest => m !== undefined);
  const unsharded = dirs.filter((_, i) => manifests[i] && !manifests[i]?.shard);
  if (unsharded.length)
    problems.push(
      `${unsharded.join(", ")} ${unsharded.length === 1 ? "is" : "are"} not a shard (no --shard)`,
    );
  const interrupted = dirs.filter((_, i) => manifests[i]?.interrupted);
  if (interrupted.length)
    problems.push(`${interrupted.join(", ")} ${interrupted.length === 1 ? "was" : "were"} interrupted`);
  const shards = present.flatMap((m) => (m.shard ? [m.shard] : []));
  const counts = [...new Set(shards.map((s) => s.count))];
  if (counts.length > 1)
    problems.push(`the shards split different runs (into ${counts.join(" and ")} shards)`);
  else if (counts.length === 1) {
    const n = counts[0] as number;
    const seen = shards.map((s) => s.index);
    const missing = Array.from({ length: n }, (_, i) => i + 1).filter((i) => !seen.includes(i));
    const twice = [...new Set(seen.filter((i, k) => seen.indexOf(i) !== k))];
    if (missing.length)
      problems.push(
        `missing shard ${missing.map((i) => `${i}/${n}`).join(", ")} (${seen.length - twice.length} of ${n} given)`,
      );
    if (twice.length) problems.push(`shard ${twice.map((i) => `${i}/${n}`).join(", ")} given twice`);
  }
  const parameters: [string, (m: ShardManifest) => unknown][] = [
    ["configs", (m) => m.configs],
    ["trials", (m) => m.trials],
    ["cases", (m) => m.cases],
    ["commit", (m) => m.git?.commit ?? undefined],
  ];
  for (const [name, get] of parameters) {
    const values = [...new Set(present.map((m) => JSON.stringify(get(m) ?? null)))];
    if (values.length > 1) problems.push(`the shards ran different ${name}`);
  }
  return problems;
}
/** The run's wall time, and each suite's trials and median trial, for the terminal. */
function timeLine(summary: ReturnType<typeof summarize>, wallMs: number, jobs: number): string {
  const suites = Object.entries(summary.time ?? {}).map(
    ([name, t]) =>
      `${name} ${t.trials} trials (${t.trialSeconds.toFixed(0)} s of trial time, median ${t.medianTrialMs === null ? "–" : `${(t.medianTrialMs / 1000).toFixed(2)} s`})`,
  );
  return `time: ${(wallMs / 1000).toFixed(1)} s wall with --jobs ${jobs}${suites.length ? `; ${suites.join("; ")}` : ""}\n`;
}

/** The trials that ended in an error, for the terminal (at most 10, then a count). */
function errorLines(summary: ReturnType<typeof summarize>): string {
  const errors = summary.errors ?? [];
  if (errors.length === 0) return "\ntrial errors: 0\n";
  const shown = errors
    .slice(0, 10)
    .map(
      (e) => `  ${e.config} ${e.id} #${e.trial} (${e.counted}): ${e.reason.split("\n")[0]?.slice(0, 160)}`,
    );
  const more =
    errors.length > 10 ? [`  ... and ${errors.length - 10} more (summary.md, "Trial errors")`] : [];
  return `\ntrial errors: ${errors.length}\n${[...shown, ...more].join("\n")}\n`;
}

/** The effectiveness table of summary.md, for the terminal, and the caveats that stand with it. */
function mainTable(summary: ReturnType<typeof summarize>): string {
  const markdown = renderMarkdown(summary);
  const start = markdown.indexOf("| config | APR");
  const end = markdown.indexOf("\n\n", start);
  // Each caveat under its label, as in summary.md: "partial run: ...", "configs not run: ...".
  const lines = caveats(summary).map(
    (c) => `${CAVEAT_LABELS[c.kind].replace(/\.$/, "").toLowerCase()}: ${c.text}\n`,
  );
  return `${markdown.slice(start, end)}\n${lines.join("")}`;
}

export { readRecords } from "./records.js";

/** Combine the outputs of the shards of one run into one run directory. */
function merge(argv: string[]): number {
  const parsed = MERGE.parse(argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const records: TrialRecord[] = [];
  const seen = new Map<string, string>();
  for (const dir of positionals) {
    for (const record of readRecords(resolve(dir))) {
      const key = `${record.config} ${record.id} ${record.trial}`;
      const previous = seen.get(key);
      if (previous)
        throw new UsageError(
          `${dir} and ${previous} both hold ${record.config} ${record.id} trial ${record.trial}`,
        );
      seen.set(key, dir);
      records.push(record);
    }
  }
  const runIds = [...new Set(records.map((r) => r.runId))];
  if (runIds.length > 1 && !values["run-id"]) {
    throw new UsageError(
      `the shards come from different runs (${runIds.join(", ")}); pass --run-id to merge them anyway`,
    );
  }
  const runId = values["run-id"] ?? runIds[0] ?? "merged";
  const out = resolve(values.out ?? repoPath("reports", runId));
  // Every shard's manifest is read, and the set checked, before anything is written.
  const manifests = positionals.map((dir) => {
    const file = join(resolve(dir), "manifest.json");
    return existsSync(file) ? readJsonFile(file, ShardManifest, "manifest.json") : undefined;
  });
  const shards = manifests.filter((m): m is ShardManifest => m !== undefined);
  const problems = shardSetProblems(positionals, manifests);
  if (problems.length && !values.partial)
    throw new UsageError(
      `not one whole run: ${problems.join("; ")}; pass --partial to merge what is there (the summary then says it is partial)`,
    );
  const partial = problems.length ? `merged from an incomplete shard set: ${problems.join("; ")}` : undefined;
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "trials.ndjson"),
    records.map((r) => `${JSON.stringify({ ...r, runId })}\n`).join(""),
  );
  const merged = records.map((r) => ({ ...r, runId }));
  const summary = summarize(runId, merged);
  if (partial) summary.partial = partial;
  writeReports(out, summary, merged);
  const first = shards[0];
  if (first) {
    writeFileSync(
      join(out, "manifest.json"),
      `${JSON.stringify({ ...first, runId, shard: null, ...(partial ? { partial } : {}), mergedFrom: positionals.map((d) => resolve(d)), shards: shards.map((m) => ({ shard: m.shard, wallMs: m.wallMs })) }, null, 2)}\n`,
    );
  }
  process.stdout.write(mainTable(summary));
  process.stdout.write(suiteLines(summary));
  if (partial) process.stdout.write(`\npartial: ${partial}\n`);
  process.stdout.write(`\nmerged ${records.length} records from ${positionals.length} shards into ${out}\n`);
  return 0;
}

function report(argv: string[]): number {
  const parsed = REPORT.parse(argv);
  if (!parsed) return 0;
  const { positionals } = parsed;
  const dir = resolve(positionals[0] as string);
  const records = readRecords(dir);
  if (records.length === 0) throw new UsageError(`${dir}/trials.ndjson holds no records`);
  const summary = summarize(records[0]?.runId ?? "run", records);
  writeReports(dir, summary, records);
  process.stdout.write(
    `rebuilt ${dir}/{summary.json,summary.md,results.csv,index.html} from ${records.length} records\n`,
  );
  return 0;
}

const COMMANDS: Record<string, (argv: string[]) => number | Promise<number>> = {
  bench,
  report,
  compare: async (argv) => (await import("./compare.js")).main(argv),
  soak: async (argv) => (await import("./soak/cli.js")).main(argv),
};

export async function main(command: string, argv: string[]): Promise<number> {
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`mcpguard: unknown benchmark command "${command}"\n`);
    return 2;
  }
  try {
    return await run(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`mcpguard ${command}: ${error.message}\n`);
      return 2;
    }
    // A run refused or failed: its reason, not a stack trace (that only with MCPGUARD_DEBUG).
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`mcpguard ${command}: ${message}\n`);
    if (process.env.MCPGUARD_DEBUG && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}
