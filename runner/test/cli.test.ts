/** `mcpguard bench` and `mcpguard report` through the real CLI, as a user runs them. */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCgroup2 } from "@mcpguard/proxy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pinToCpus } from "../src/latency.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import { BYTE_RELAY, REAPER } from "../src/session.ts";

const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");

function mcpguard(...args: string[]) {
  return mcpguardIn(process.env, ...args);
}

function mcpguardIn(env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = spawnSync(process.execPath, [MCPGUARD, ...args], {
    cwd: REPO_ROOT,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "mcpguard-cli-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("bad flags are refused with a message that says why", () => {
  it.each([
    [["--trials", "0"], /--trials must be at least 1/],
    [["--jobs", "two"], /--jobs must be a non-negative integer, got "two"/],
    [["--configs", "C-nope"], /--configs: unknown config "C-nope"/],
    [["--cases", "NOPE-99"], /--cases: "NOPE-99" is neither a path nor a case id/],
    [["--run-id", "a b"], /--run-id may hold only/],
    [["--bogus"], /unknown option '--bogus'/],
    [["extra"], /unexpected argument "extra"/],
  ])("mcpguard bench %j", (args, message) => {
    const r = mcpguard("bench", ...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("names an unknown command and the report usage", () => {
    expect(mcpguard("frobnicate").stderr).toMatch(/unknown command "frobnicate"/);
    expect(mcpguard("report").status).toBe(2);
    const missing = mcpguard("report", join(scratch, "nowhere"));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/trials\.ndjson does not exist/);
  });

  it("says in one line why a run failed, with no stack trace", () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "");
    // Its worlds in a folder of its own, to see that the failed run leaves none behind.
    const worlds = join(scratch, "worlds");
    const r = mcpguardIn(
      { ...process.env, MCPGUARD_WORLD_DIR: worlds },
      "bench",
      "--cases",
      "BN-01",
      "--configs",
      "C0",
      "--no-direct",
      "--out",
      join(file, "out"),
    );
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatch(/^mcpguard bench: .*ENOTDIR[^\n]*$/);
    expect(existsSync(worlds)).toBe(false);
  });
});

describe("scenario files", () => {
  it("bench validate accepts the 82 cases", () => {
    const r = mcpguard("bench", "validate");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("82 scenario files read, 0 invalid\n");
  });

  it("bench validate lists every invalid file with the field and what was expected", () => {
    const dir = join(scratch, "bad-cases");
    mkdirSync(join(dir, "env_leak"), { recursive: true });
    writeFileSync(
      join(dir, "env_leak", "ZZ-01.json"),
      JSON.stringify({ id: "ZZ-01", category: "env_leak", kind: "attack" }),
    );
    writeFileSync(join(dir, "env_leak", "ZZ-02.json"), "{");
    const r = mcpguard("bench", "validate", dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${join(dir, "env_leak", "ZZ-01.json")}: title: Invalid input: expected string, received undefined`,
    );
    expect(r.stderr).toMatch(/ZZ-01\.json: server: /);
    expect(r.stderr).toMatch(/ZZ-02\.json: not valid JSON/);
    expect(r.stdout).toMatch(/2 invalid/);
    const run = mcpguard("bench", "--configs", "C0", "--cases", dir, "--out", join(scratch, "never"));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/2 scenario file\(s\) are invalid; nothing was run/);
    expect(existsSync(join(scratch, "never"))).toBe(false);
  });
});

describe("a run and its reports", () => {
  it("runs a new case dropped into a scratch directory, and rebuilds every report from trials.ndjson", () => {
    const cases = join(scratch, "cases");
    mkdirSync(join(cases, "benign"), { recursive: true });
    cpSync(repoPath("test_cases", "benign", "BN-06.json"), join(cases, "benign", "BN-06.json"));
    mkdirSync(join(cases, "exfiltration"));
    cpSync(repoPath("test_cases", "exfiltration", "EX-03.json"), join(cases, "exfiltration", "EX-03.json"));
    writeFileSync(
      join(cases, "benign", "XN-01.json"),
      JSON.stringify({
        id: "XN-01",
        category: "benign",
        kind: "benign",
        title: "forecast for Tokyo",
        server: "weather",
        tool: "get_forecast",
        arguments: { city: "Tokyo", days: 1 },
        expect: { response_matches: '"high_c":\\s*25\\b' },
      }),
    );
    const out = join(scratch, "run");
    const r = mcpguard(
      "bench",
      "--configs",
      "C0",
      "--cases",
      cases,
      "--trials",
      "2",
      "--out",
      out,
      "--run-id",
      "scratch-run",
    );
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.status).toBe(0);
    // A directory from outside test_cases/ is a suite of its own, even with copies of core cases.
    expect(r.stdout).toContain(
      "external cases: 3 cases from outside test_cases/ ran as a suite of their own (external), left out of the comparison with Table 1.",
    );
    expect(r.stdout).toMatch(
      /^suite external, C0: benign failed 0\/2 \(FPR 0\.0% .*\), attacks never fired 0\/1$/m,
    );
    // Off a terminal, progress is plain lines; the last one says every trial is done.
    const last = r.stderr.trim().split("\n").at(-1) ?? "";
    expect(last).toMatch(/^\[bench\] (\d+)\/\1 trials, [\dms]+ elapsed$/);
    expect(r.stderr).not.toContain("\r");
    expect(r.stdout).toContain(`report: ${join(out, "index.html")}`);

    const records = readFileSync(join(out, "trials.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.filter((rec) => rec.config === "C0")).toHaveLength(6);
    expect(
      records
        .filter((rec) => rec.config === "direct")
        .map((rec) => rec.id)
        .sort(),
    ).toEqual(["BN-06", "BN-06", "XN-01", "XN-01"]);
    const xn = records.find((rec) => rec.id === "XN-01" && rec.config === "C0");
    expect(xn).toMatchObject({ kind: "benign", passed: true, evidence: ["response_matches"] });
    expect(records.find((rec) => rec.id === "EX-03")).toMatchObject({
      fired: true,
      evidence: ["sink_contacted"],
    });
    for (const rec of records) {
      expect(rec).not.toHaveProperty("response");
      expect(rec.responseSha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // External cases are never rows of the core cases table beside Table 1: their suite has its own.
    const markdown = readFileSync(join(out, "summary.md"), "utf8");
    expect(markdown).not.toContain("| XN-01 | benign | 0/2 |");
    expect(markdown).toContain("## Suite `external` (not part of the paper comparison)");
    expect(markdown).toContain("- **XN-01**: forecast for Tokyo");
    expect(readFileSync(join(out, "results.csv"), "utf8")).toContain(
      "scratch-run,C0,XN-01,benign,benign,,2,,0,,",
    );
    expect(readFileSync(join(out, "results.csv"), "utf8")).toMatch(/^scratch-run,C0,XN-01,.*,external,$/m);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({
      runId: "scratch-run",
      configs: ["C0"],
      trials: 2,
      cases: ["BN-06", "EX-03", "XN-01"],
    });
    expect(manifest.interpreters.python).toMatch(/^\//);
    const html = readFileSync(join(out, "index.html"), "utf8");
    expect(html).not.toMatch(/<script[^>]+src=/);
    // The figures are inline SVG, each with its SVG and PNG download buttons; no chart library.
    const figures = [
      ...html.matchAll(/<figure class="figure[^"]*" data-figure="([^"]+)">([\s\S]*?)<\/figure>/g),
    ];
    // (no heat map: its rows are the core categories, and this run has no core case)
    expect(figures.map((m) => m[1])).toEqual(["rates", "paper", "latency-cdf"]);
    for (const [, name, body] of figures) {
      expect(body, name).toMatch(/<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(body, name).toContain('<button type="button" data-download="svg">SVG</button>');
      expect(body, name).toContain('<button type="button" data-download="png">PNG</button>');
    }
    expect(html).not.toContain("new Chart(");

    const original = readFileSync(join(out, "summary.json"), "utf8");
    for (const f of ["summary.json", "summary.md", "results.csv", "index.html"]) rmSync(join(out, f));
    const rebuilt = mcpguard("report", out);
    expect(rebuilt.status).toBe(0);
    expect(readFileSync(join(out, "summary.json"), "utf8")).toBe(original);
    for (const f of ["summary.md", "results.csv", "index.html"]) expect(existsSync(join(out, f))).toBe(true);
  });
});

describe("latency benchmark", () => {
  it("times each path in a long-lived session and the cold start, in Markdown, CSV and JSON", () => {
    const out = join(scratch, "latency");
    const r = mcpguard(
      "bench",
      "latency",
      "--configs",
      "C0",
      "--case",
      "BN-06",
      "--iterations",
      "20",
      "--rounds",
      "2",
      "--warmup",
      "2",
      "--cold-starts",
      "2",
      "--cpus",
      "0",
      "--out",
      out,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# Tool call latency — BN-06, .*every process pinned to CPUs 0\)$/m);
    expect(r.stdout).toMatch(/^\| direct \| 20 \| [\d.]+ \|/m);
    expect(r.stderr).toMatch(/^\[latency\] round 2\/2: 10 calls on each of \d paths, \d+ s elapsed$/m);
    // Differences taken within each round, their median and range over the rounds.
    expect(r.stdout).toContain("## Round by round (2 rounds)");
    expect(r.stdout).toMatch(
      /^\| C0 \| – \| [\d.]+× \[[\d.]+, [\d.]+\] \| [+-][\d.]+ \[-?[\d.]+, -?[\d.]+\] \|$/m,
    );
    expect(r.stderr).toMatch(/^\[latency\] cold starts 2\/2 on each of \d paths/m);
    expect(r.stdout).toMatch(/^\| pipe \| 20 \| [\d.]+ \| .* \| – \| – \| [+-][\d.]+ \([\d.]+×\) \| – \|$/m);
    expect(r.stdout).toMatch(
      /^\| C0 \| 20 \| [\d.]+ \| .* \| – \| [+-][\d.]+ \([\d.]+×\) \| [+-][\d.]+ \([\d.]+×\) \| 0\.362 \|$/m,
    );
    const json = JSON.parse(readFileSync(join(out, "latency.json"), "utf8"));
    expect(json.cpus).toBe("0");
    // CPU per call, round by round: the spawned process's own, and (as root, with a cgroup per
    // session) the whole session's; C0 is compared with pipe, and every path's session with direct's.
    expect(r.stdout).toContain("## CPU per call, round by round");
    expect(r.stdout).toMatch(/^\| C0 \| [\d.]+ \[[\d.]+, [\d.]+\] \| [+-][\d.]+ \[-?[\d.]+, -?[\d.]+\] \| /m);
    for (const path of Object.keys(json.calls)) {
      expect(json.roundCpuMicros.process[path]).toHaveLength(2);
      for (const us of json.roundCpuMicros.process[path]) expect(us).toBeGreaterThan(0);
    }
    if (process.getuid?.() === 0) expect(json.roundCpuMicros.session.C0).toHaveLength(2);
    // pipe-c is the C relay that `npm run setup` builds with bpf/; without it the run says so and leaves it out.
    const native = existsSync(BYTE_RELAY);
    // pipe-contained, pipe with the server contained as every config contains it, makes cgroups:
    // as root, where there is cgroup2 and the reaper is built; otherwise the run says why not.
    const contained = process.getuid?.() === 0 && findCgroup2() !== undefined && existsSync(REAPER);
    expect(Object.keys(json.calls)).toEqual([
      "direct",
      ...(native ? ["pipe-c"] : []),
      "pipe",
      ...(contained ? ["pipe-contained"] : []),
      "C0",
    ]);
    if (contained) {
      // Its cold start over pipe's: what containment costs; C0's over it: the proxy's own start.
      expect(r.stdout).toMatch(
        /^\| pipe-contained \| 2 \| [\d.]+ \| .* \| – \| [+-][\d.]+ \([\d.]+×\) \| – \| [+-][\d.]+ \([\d.]+×\) \| – \|$/m,
      );
      expect(r.stdout).toMatch(
        /^\| C0 \| 2 \| [\d.]+ \| .* \| – \| [+-][\d.]+ \([\d.]+×\) \| [+-][\d.]+ \([\d.]+×\) \| [+-][\d.]+ \([\d.]+×\) \| (-?\d+\.\d\d|–) \|$/m,
      );
    } else expect(r.stderr).toMatch(/pipe-contained is left out: /);
    if (native) {
      expect(r.stdout).toMatch(
        /^\| pipe-c \| 20 \| [\d.]+ \| .* \| – \| – \| [+-][\d.]+ \([\d.]+×\) \| – \|$/m,
      );
      expect(json.coldStart["pipe-c"].n).toBe(2);
    } else {
      expect(r.stderr).toMatch(/pipe-c is left out: .*byte-relay is not built/);
    }
    expect(json.coldStart.pipe.n).toBe(2);
    expect(json.coldStart.C0.n).toBe(2);
    // The proxy's own start over Node.js's boot (pipe over direct), the figure machines of different speed share.
    expect(r.stdout).toContain("| p50 vs pipe-contained | p50 vs direct | own start / Node.js boot |");
    // Two cold starts each: on a busy machine `pipe` may come out below direct, and the multiple
    // of Node.js's boot is then left out ("–") rather than divided by a boot of no time.
    const boot = json.coldStart.pipe.p50 - json.coldStart.direct.p50;
    expect(r.stdout).toMatch(
      boot > 0 ? /^\| C0 \| 2 \| [\d.]+ \| .* \| -?\d+\.\d\d \|$/m : /^\| C0 \| 2 \| [\d.]+ \| .* \| – \|$/m,
    );
    expect(readFileSync(join(out, "latency.csv"), "utf8").split("\n")[0]).toBe(
      "kind,path,n,p50,p95,p99,mean,sd",
    );
    expect(mcpguard("bench", "latency", "--iterations", "1", "--rounds", "3").stderr).toMatch(
      /--iterations must be at least --rounds/,
    );
    expect(mcpguard("bench", "latency", "--cpus", "all").stderr).toMatch(/--cpus must be a CPU list/);
    expect(mcpguard("bench", "latency", "--cpus", "4095").stderr).toMatch(/--cpus 4095: taskset refused: /);
    // Two spawned runs of up to 120 s each (the helper's timeout) on a busy machine.
  }, 300_000);

  it("--cpus pins a process and every thread of it, as the run's children inherit it", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      pinToCpus("0", child.pid);
      expect(readFileSync(`/proc/${child.pid}/status`, "utf8")).toMatch(/^Cpus_allowed_list:\s+0$/m);
    } finally {
      child.kill();
    }
  });
});
