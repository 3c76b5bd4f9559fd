/**
 * Every command of the CLI, given bad input as a user would type it: one `mcpguard ...` line on
 * stderr, a non-zero exit, and never a stack trace. The commands run in parallel (each is a real
 * `mcpguard` process), so the table stays cheap as it grows.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MCPGUARD } from "./helpers.ts";

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-cli-errors-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
};
const notJson = file("not.json", "{ not json");
const emptyPolicy = file("policy.json", JSON.stringify({ version: 1, server: "s", tools: {} }));
const badPolicy = file("bad-policy.json", JSON.stringify({ version: 2, server: "s", tools: {} }));
const summaryOf = (configs: unknown) =>
  JSON.stringify({ runId: "r", trials: 1, direct: null, configs, caseResults: [] });
const badSummary = file("summary.json", summaryOf({ C0: { apr: "12%" } }));
const noConfigs = file("empty-summary.json", summaryOf({}));
const badRun = join(scratch, "run");
mkdirSync(badRun);
writeFileSync(join(badRun, "trials.ndjson"), `${JSON.stringify({ config: "C0" })}\n`);
const clientConfig = file("claude.json", JSON.stringify({ mcpServers: 3 }));

/** [what, argv, the line stderr must hold]. */
const CASES: [string, string[], RegExp][] = [
  ["unknown command", ["frobnicate"], /unknown command "frobnicate"\n/],
  ["mistyped command", ["rnu", "--", "true"], /unknown command "rnu" \(did you mean run\?\)/],
  ["mistyped external command", ["benhc"], /unknown command "benhc" \(did you mean bench\?\)/],
  ["run without a command", ["run", "--config", "C0"], /mcpguard run: /],
  [
    "run with a stray word before --",
    ["run", "echo", "hi", "--", "there"],
    /unexpected argument "echo" before --/,
  ],
  ["run with an unknown config", ["run", "--config", "C-nope", "--", "true"], /mcpguard run: .*C-nope/],
  ["run with an unknown option", ["run", "--bogus", "--", "true"], /mcpguard run: .*--bogus/],
  [
    "run with a policy that is not JSON",
    ["run", "--config", "C-app", "--policy", notJson, "--", "true"],
    /mcpguard run: /,
  ],
  [
    "run with an invalid policy",
    ["run", "--config", "C-app", "--policy", badPolicy, "--", "true"],
    /mcpguard run: /,
  ],
  [
    "run with a missing policy",
    ["run", "--config", "C-app", "--policy", join(scratch, "nope.json"), "--", "true"],
    /mcpguard run: /,
  ],
  [
    "run with a bad --pids-max",
    ["run", "--config", "C0", "--pids-max", "lots", "--", "true"],
    /mcpguard run: /,
  ],
  ["policy without a subcommand", ["policy"], /usage: mcpguard policy <command>(.|\n)*derive/],
  ["policy derive of a server that exits", ["policy", "derive", "--", "false"], /mcpguard policy: .*exited/],
  [
    "policy derive of a missing program",
    ["policy", "derive", "--", join(scratch, "no-such-server")],
    /mcpguard policy: /,
  ],
  ["policy check of an invalid policy", ["policy", "check", badPolicy], /bad-policy\.json/],
  ["policy export without a format", ["policy", "export", "--policy", emptyPolicy], /mcpguard policy: /],
  ["pin without --pins", ["pin", "--", "true"], /mcpguard pin: /],
  ["audit of a directory", ["audit", "--file", scratch], /mcpguard audit: /],
  ["audit with a bad --since", ["audit", "--file", notJson, "--since", "yesterday"], /mcpguard audit: /],
  ["audit verify of a missing file", ["audit", "verify", join(scratch, "nope.ndjson")], /mcpguard audit: /],
  ["bench with --trials 0", ["bench", "--trials", "0"], /--trials must be at least 1/],
  // The same thing has the same name everywhere; the other spellings are aliases.
  [
    "bench --config (run's spelling) with an unknown config",
    ["bench", "--config", "C-nope"],
    /unknown config "C-nope"/,
  ],
  ["bench with --config and --configs", ["bench", "--config", "C0", "--configs", "C0"], /not both/],
  [
    "run with a --max-message-bytes no string can hold",
    ["run", "--max-message-bytes", "99999999999999999999", "--", "true"],
    /mcpguard run: --max-message-bytes must be between 1 and 268435456/,
  ],
  [
    "run with a missing overrides folder",
    [
      "run",
      "--config",
      "C-app",
      "--policy",
      emptyPolicy,
      "--overrides",
      join(scratch, "no-overrides"),
      "--",
      "true",
    ],
    /mcpguard run: .*no-overrides: no such overrides file or folder/,
  ],
  [
    "run with an audit log that is a device",
    ["run", "--audit-log", "/dev/full", "--", "true"],
    /mcpguard run: cannot use \/dev\/full as the audit log: it is not a regular file/,
  ],
  [
    "run with an audit log that is its own stdout",
    ["run", "--audit-log", "/dev/stdout", "--", "true"],
    /mcpguard run: cannot use \/dev\/stdout as the audit log: it is the proxy's stdout/,
  ],
  [
    "run with a missing server program",
    ["run", "--", join(scratch, "no-such-server")],
    /mcpguard run: cannot find the server's program/,
  ],
  [
    "audit --audit-log (run's spelling) of a directory",
    ["audit", "--audit-log", scratch],
    /mcpguard audit: .*EISDIR/,
  ],
  [
    "bench latency --cases (bench's spelling) of an unknown case",
    ["bench", "latency", "--cases", "NOPE-1"],
    /NOPE-1/,
  ],
  [
    "bench validate of a missing folder",
    ["bench", "validate", join(scratch, "nope")],
    /no such file or directory/,
  ],
  [
    "bench latency with a bad --rounds",
    ["bench", "latency", "--iterations", "1", "--rounds", "3"],
    /--iterations must be at least --rounds/,
  ],
  ["report of a missing run", ["report", join(scratch, "nope")], /trials\.ndjson does not exist/],
  [
    "report of a run whose records are not trials",
    ["report", badRun],
    /trials\.ndjson:1: not a trial record/,
  ],
  ["compare of summaries whose metrics are strings", ["compare", badSummary, badSummary], /configs\.C0\.apr/],
  ["compare of summaries with no config", ["compare", noConfigs, noConfigs], /no config in it/],
  [
    "compare with an unwritable --junit",
    ["compare", badSummary, badSummary, "--junit", "/proc/nope/x.xml"],
    /mcpguard compare: /,
  ],
  ["soak with a bad option", ["soak", "--bogus"], /mcpguard soak: /],
  ["wrap of a missing file", ["wrap", join(scratch, "nope.json")], /mcpguard wrap: /],
  ["wrap of a config whose servers are not an object", ["wrap", clientConfig], /mcpguard wrap: /],
  ["unwrap of a file never wrapped", ["unwrap", emptyPolicy], /mcpguard unwrap: /],
];

function mcpguard(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ status: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MCPGUARD, ...args], {
      cwd: scratch,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
    });
    child.on("close", (status) => resolve({ status, stderr, stdout }));
  });
}

describe("every command with bad input", () => {
  const results = Promise.all(CASES.map(([, args]) => mcpguard(args)));

  it.each(CASES.map((c, i) => [...c, i] as const))(
    "%s: one line, non-zero, no stack trace",
    async (_what, args, line, i) => {
      const r = (await results)[i] as Awaited<ReturnType<typeof mcpguard>>;
      expect(r.status, `${args.join(" ")}\n${r.stderr}`).not.toBe(0);
      // The message is on stderr; a command called without what it needs prints its usage instead.
      expect(r.stderr || r.stdout).toMatch(line);
      expect(r.stderr).not.toMatch(/^\s+at .+[:(]\d+/m);
      expect(r.stderr + r.stdout).not.toMatch(/\b(TypeError|ReferenceError|RangeError|SyntaxError): /);
    },
    60_000,
  );

  it("wrap refuses an L3 config where the kernel layer cannot run, before anything starts", async () => {
    const config = file(
      "mcp.json",
      JSON.stringify({ mcpServers: { s: { command: "node", args: ["server.js"] } } }),
    );
    const before = readFileSync(config, "utf8");
    // No launcher, loader or BPF programs where MCPGUARD_BPF_DIR points: what a host without L3 sees.
    const r = await mcpguard(["wrap", config], { ...process.env, MCPGUARD_BPF_DIR: join(scratch, "no-bpf") });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^mcpguard wrap: C-full needs the kernel layer, which cannot enforce .* here .*--config C-app/,
    );
    expect(readFileSync(config, "utf8")).toBe(before);
  });

  it("--version prints the package's version and the Node.js it runs on", async () => {
    const r = await mcpguard(["--version"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^mcpguard \d+\.\d+\.\d+ \(node \d+\.\d+\.\d+\)\n$/);
  });

  it("--help of every command answers with its usage, exit 0", async () => {
    const commands = [
      ["run"],
      ["policy"],
      ["pin"],
      ["doctor"],
      ["audit"],
      ["audit", "verify"],
      ["bench"],
      ["bench", "validate"],
      ["bench", "latency"],
      ["bench", "merge"],
      ["report"],
      ["compare"],
      ["soak"],
      ["wrap"],
      ["unwrap"],
    ];
    const helps = await Promise.all(commands.map((c) => mcpguard([...c, "--help"])));
    helps.forEach((r, i) => {
      expect(r.status, `${commands[i]?.join(" ")} --help\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/usage: /);
    });
  }, 60_000);
});
