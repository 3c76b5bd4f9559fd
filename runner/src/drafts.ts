/**
 * `mcpguard bench drafts`: how far a policy gets without a person, the paper-style check of
 * issue 31. For each server of the core suite:
 *
 * 1. derive: `mcpguard policy derive` in a world of its own (a workspace, HOME and TMPDIR that no
 *    trial uses: drafts are derived in another folder than the runs), no hand edit;
 * 2. learning pass: a few normal calls of each server (the first `--learn` benign corpus cases of
 *    the server, by id) run under C-full with the drafts, every audit log kept;
 * 3. learn: `mcpguard policy learn` over those logs, per server, written as the learnt set;
 * 4. evaluation: the core suite and the rest of the corpus (never a case of the learning pass)
 *    under the given configs, once with the raw drafts and once with the learnt set; C0 runs too,
 *    which says which attacks are viable.
 *
 * Everything goes to `--out`: drafts/, audit/, learned/ (with learn's diffs), the two runs'
 * reports, and results.md with the table. Nothing is tuned by hand between the steps.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, intOption, UsageError } from "@mcpguard/proxy/args";
import { type BenchPlan, DEFAULT_JOBS, runBench } from "./bench.js";
import { resolveInterpreters } from "./interpreters.js";
import { repoPath } from "./paths.js";
import { readRecords } from "./records.js";
import { launchArgv, loadRegistry, type ServerEntry } from "./registry.js";
import type { Scenario } from "./scenario.js";
import { selectScenarios } from "./select.js";
import { MCPGUARD_BIN, serverEnvironment } from "./session.js";
import type { TrialRecord } from "./trial.js";
import { WorldFactory } from "./world/world.js";

export const DRAFTS = defineCommand({
  name: "mcpguard bench drafts",
  description:
    "How far policies get without a person: derive a draft for each core server in a world of its " +
    "own, run a learning pass (the first --learn corpus cases of each server, by id) under C-full with " +
    "the drafts, learn from its audit logs, then run the core suite and the rest of the corpus with " +
    "the raw drafts and with the learnt policies. Writes drafts/, audit/, learned/, both runs and " +
    "results.md to --out.",
  options: {
    out: { type: "string", value: "dir", help: "output directory (default reports/drafts-<time>)" },
    learn: {
      type: "string",
      value: "n",
      help: "corpus cases per server in the learning pass (default 3)",
    },
    configs: {
      type: "string",
      value: "list",
      help: "configs of the evaluation (default C-full,C-app; C0 is added for the viable attacks)",
    },
    evaluate: {
      type: "string",
      value: "suites",
      choices: ["core", "core,corpus"],
      help: "what the evaluation runs: core, or core,corpus (the default; the corpus without the learning cases)",
    },
    jobs: { type: "string", value: "n", help: `trials in parallel (default ${DEFAULT_JOBS})` },
    quiet: { type: "boolean", help: "no progress lines" },
    resume: {
      type: "boolean",
      help: "go on with a study --out holds: a step whose output is there whole (every draft, every learnt policy, a run with a record for each case and config) is read, not run again",
    },
  },
});

interface Counts {
  benign: number;
  broken: string[];
  viable: number;
  fired: string[];
}

/** Benign cases broken and viable attacks that fired, per config, from one run's records. */
function count(records: readonly TrialRecord[], config: string): Counts {
  const viable = new Set(
    records.filter((r) => r.config === "C0" && r.kind === "attack" && r.fired === true).map((r) => r.id),
  );
  const mine = records.filter((r) => r.config === config);
  const benign = mine.filter((r) => r.kind === "benign" && r.passed !== null);
  return {
    benign: benign.length,
    broken: benign.filter((r) => r.passed === false).map((r) => r.id),
    viable: mine.filter((r) => r.kind === "attack" && viable.has(r.id)).length,
    fired: mine.filter((r) => r.kind === "attack" && viable.has(r.id) && r.fired === true).map((r) => r.id),
  };
}

/**
 * A run of an earlier session that holds a record for every case of the evaluation under every
 * config (a run of more cases, the learning ones too, is read for these only), or undefined.
 */
function finishedRun(dir: string, configs: string[], evaluation: Scenario[]): TrialRecord[] | undefined {
  if (!existsSync(join(dir, "trials.ndjson"))) return undefined;
  const ids = new Set(evaluation.map((s) => s.id));
  const records = readRecords(dir).filter((r) => ids.has(r.id) && configs.includes(r.config));
  const seen = new Set(records.map((r) => `${r.config}\0${r.id}`));
  return seen.size === ids.size * configs.length ? records : undefined;
}

function mcpguard(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return spawnSync(process.execPath, [MCPGUARD_BIN, ...args], {
    ...options,
    encoding: "utf8",
    timeout: 120_000,
  });
}

/** Step 1: a draft per server, derived in a world no trial uses. */
async function deriveDrafts(servers: ServerEntry[], dir: string): Promise<void> {
  const interpreters = await resolveInterpreters();
  const factory = await WorldFactory.create();
  try {
    for (const server of servers) {
      const world = await factory.create();
      try {
        const argv = launchArgv(server, interpreters, world);
        const r = mcpguard(
          ["policy", "derive", "--server", server.id, "--out", join(dir, `${server.id}.json`), "--", ...argv],
          {
            cwd: world.workspace,
            env: serverEnvironment(server, world),
          },
        );
        if (r.status !== 0)
          throw new UsageError(
            `policy derive of ${server.id} failed: ${(r.stderr ?? "").trim().split("\n").at(-1)}`,
          );
      } finally {
        await world.destroy();
      }
    }
  } finally {
    factory.dispose();
  }
}

function plan(
  runId: string,
  outDir: string,
  configs: string[],
  scenarios: Scenario[],
  jobs: number,
  quiet: boolean,
  extra: Partial<BenchPlan>,
): BenchPlan {
  return {
    runId,
    outDir,
    configs,
    scenarios,
    trials: 1,
    jobs,
    direct: false,
    keepRaw: false,
    allowHostSudo: false,
    progress: quiet ? "off" : process.stderr.isTTY === true ? "tty" : "lines",
    commandLine: ["mcpguard", "bench", "drafts", runId],
    ...extra,
  };
}

/** Steps 2 and 3: the learning pass under C-full with the drafts, and learn over its audit logs. */
async function learnPolicies(o: {
  servers: ServerEntry[];
  learning: Scenario[];
  dirs: { drafts: string; audit: string; learned: string };
  out: string;
  say: (line: string) => void;
  plan: (dir: string, scenarios: Scenario[], extra: Partial<BenchPlan>) => BenchPlan;
}): Promise<void> {
  const { servers, learning, dirs, out, say } = o;

  say(`learning pass: ${learning.length} calls under C-full with the drafts`);
  await runBench(o.plan(join(out, "learning"), learning, { policiesDir: dirs.drafts, auditDir: dirs.audit }));
  const logs = readdirSync(dirs.audit);
  for (const server of servers) {
    const mine = logs.filter((f) => learning.some((s) => s.server === server.id && f.includes(`.${s.id}.`)));
    const args = [
      "policy",
      "learn",
      ...mine.flatMap((f) => ["--audit", join(dirs.audit, f)]),
      "--policy",
      join(dirs.drafts, `${server.id}.json`),
      "--server",
      server.id,
      "--out",
      join(dirs.learned, `${server.id}.json`),
    ];
    const r = mine.length ? mcpguard(args, { cwd: out, env: process.env }) : undefined;
    if (r?.status !== 0) {
      // Nothing to learn from (no call of the server): the learnt set holds its draft.
      const why = r
        ? (r.stderr ?? "").trim().split("\n").at(-1)
        : "no call of the server in the learning pass";
      say(`learn ${server.id}: ${why}; its draft is kept`);
      copyFileSync(join(dirs.drafts, `${server.id}.json`), join(dirs.learned, `${server.id}.json`));
      continue;
    }
    writeFileSync(join(dirs.learned, `${server.id}.diff.txt`), r.stdout);
  }
}

export async function drafts(argv: string[]): Promise<number> {
  const parsed = DRAFTS.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const perServer = intOption(values.learn, "learn", 3);
  const jobs = intOption(values.jobs, "jobs", DEFAULT_JOBS);
  const configs = (values.configs ?? "C-full,C-app").split(",").filter(Boolean);
  const runId = `drafts-${new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19)}`;
  const out = resolve(values.out ?? repoPath("reports", runId));
  const core = selectScenarios(undefined, "core").scenarios;
  const corpus = selectScenarios(undefined, "corpus").scenarios;
  const registry = loadRegistry();
  const ids = [...new Set(core.map((s) => s.server))].sort();
  const servers = ids.map((id) => registry.get(id)).filter((s): s is ServerEntry => s !== undefined);
  const learning = ids.flatMap((id) =>
    corpus
      .filter((s) => s.server === id && s.kind === "benign")
      .sort((a, b) => a.id.localeCompare(b.id))
      .slice(0, perServer),
  );
  const learnt = new Set(learning.map((s) => s.id));
  const withCorpus = (values.evaluate ?? "core,corpus") === "core,corpus";
  const evaluation = [
    ...core,
    ...(withCorpus ? corpus.filter((s) => !learnt.has(s.id) && ids.includes(s.server)) : []),
  ];
  const dirs = {
    drafts: join(out, "drafts"),
    audit: join(out, "audit"),
    learned: join(out, "learned"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  const say = (line: string) => process.stderr.write(`[drafts] ${line}\n`);

  const resume = values.resume === true;
  const whole = (dir: string) => servers.every((s) => existsSync(join(dir, `${s.id}.json`)));
  if (resume && whole(dirs.drafts)) say(`drafts: the ${servers.length} in ${dirs.drafts}`);
  else {
    say(`deriving ${servers.length} drafts in worlds of their own`);
    await deriveDrafts(servers, dirs.drafts);
  }
  if (resume && whole(dirs.learned)) say(`learnt policies: the ${servers.length} in ${dirs.learned}`);
  else
    await learnPolicies({
      servers,
      learning,
      dirs,
      out,
      say,
      plan: (dir, scenarios, extra) =>
        plan(`${runId}-learning`, dir, ["C-full"], scenarios, jobs, values.quiet === true, extra),
    });
  const runs: Record<string, TrialRecord[]> = {};
  for (const [name, dir] of [
    ["drafts", dirs.drafts],
    ["learned", dirs.learned],
  ] as const) {
    const done = resume ? finishedRun(join(out, `eval-${name}`), ["C0", ...configs], evaluation) : undefined;
    if (done) {
      say(`evaluation with the ${name} policies: read from ${join(out, `eval-${name}`)}`);
      runs[name] = done;
      continue;
    }
    say(`evaluation with the ${name} policies: ${evaluation.length} cases under ${configs.join(", ")}`);
    const result = await runBench(
      plan(
        `${runId}-${name}`,
        join(out, `eval-${name}`),
        ["C0", ...configs],
        evaluation,
        jobs,
        values.quiet === true,
        {
          policiesDir: dir,
        },
      ),
    );
    runs[name] = result.records;
  }
  const lines = [
    `# Policies without a person (${runId})`,
    "",
    `Drafts derived in worlds of their own; learning pass: ${learning.length} corpus calls (${perServer} per server, the first by id) under C-full; evaluation: the core suite and the corpus without the learning cases (${evaluation.length} cases).`,
    "",
    "| policies | config | benign broken | viable attacks that fired |",
    "|---|---|---|---|",
  ];
  for (const [name, records] of Object.entries(runs)) {
    for (const config of configs) {
      const c = count(records, config);
      lines.push(`| ${name} | ${config} | ${c.broken.length}/${c.benign} | ${c.fired.length}/${c.viable} |`);
    }
  }
  lines.push("");
  for (const [name, records] of Object.entries(runs)) {
    for (const config of configs) {
      const c = count(records, config);
      if (c.broken.length) lines.push(`- ${name}, ${config}, broken: ${c.broken.join(", ")}`);
      if (c.fired.length) lines.push(`- ${name}, ${config}, fired: ${c.fired.join(", ")}`);
    }
  }
  const text = `${lines.join("\n")}\n`;
  writeFileSync(join(out, "results.md"), text);
  process.stdout.write(text);
  return 0;
}
