/**
 * Issue 31: drafts that work for what derive can see, and `mcpguard policy learn` for the rest. A
 * server whose data lies where its code says (a journal folder named by a variable it reads, a
 * settings file read at start, a token) is derived in one folder, used under C-full in another
 * (its calls refused by the kernel), learnt from the audit log, and used again in a third folder
 * with the learnt policy: every call works, the SSH key it also reaches for stays refused and is
 * never proposed. The walk of a log (attribution, generalisation, what is never proposed) is
 * tested on records as the proxy writes them.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditRecord } from "../src/auditRecords.ts";
import { report } from "../src/commands/policyLearn.ts";
import { applyProposals, type LearnOptions, learn, withVariables } from "../src/learn.ts";
import { connect, MCPGUARD, toolText } from "./helpers.ts";

const JOURNAL = join(import.meta.dirname, "fixtures", "journal-server.mjs");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(`policy learn under L3 skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

let scratch: string;
/** The audit key, out of every server's reach (not in TMPDIR, which C-full lets a server write). */
let keys: string;
beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-learn-")));
  keys = mkdtempSync("/var/tmp/mcpguard-learn-keys-");
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(keys, { recursive: true, force: true });
});

const TOKEN = "jt_9fQ2xLm4Vb7Kc1Rz8Hs3Wd6";

/** A project folder with a settings file, and a HOME with an SSH key. */
function world(name: string): { cwd: string; env: Record<string, string> } {
  const cwd = join(scratch, name, "project");
  const home = join(scratch, name, "home");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n");
  writeFileSync(join(cwd, ".journalrc"), "[journal] ");
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOME: home,
    JOURNAL_TOKEN: TOKEN,
  };
  delete env.JOURNAL_DIR;
  return { cwd, env };
}

async function session(policy: string, audit: string, where: { cwd: string; env: Record<string, string> }) {
  return connect(
    [
      MCPGUARD,
      "run",
      "--config",
      "C-full",
      "--policy",
      policy,
      "--audit-log",
      audit,
      "--audit-key",
      join(keys, "audit.key"),
      "--",
      process.execPath,
      JOURNAL,
    ],
    where.env,
    where.cwd,
  );
}

describe.skipIf(!l3)("policy derive, then learn, then use, each in another folder (C-full)", () => {
  it("a raw draft keeps the token its code reads, a learning pass finds its data, and the learnt policy works elsewhere", async () => {
    // 1. derive in folder A: no hand edit.
    const a = world("a");
    const draft = join(scratch, "draft.json");
    const derived = spawnSync(
      process.execPath,
      [MCPGUARD, "policy", "derive", "--out", draft, "--", process.execPath, JOURNAL],
      {
        cwd: a.cwd,
        env: a.env,
        encoding: "utf8",
      },
    );
    expect(derived.status, derived.stderr).toBe(0);
    // The token its code reads is kept, and said so; the variable it reads but nobody set is listed.
    expect(derived.stderr).toMatch(/keeps JOURNAL_TOKEN for the server \(its code reads it\): a secret/);
    const drafted = JSON.parse(readFileSync(draft, "utf8"));
    expect(drafted.environment.keep).toContain("JOURNAL_TOKEN");
    expect(drafted.description).toMatch(/Could not see: .*JOURNAL_DIR/);

    // 2. the learning pass in folder B: the kernel refuses the journal and the settings.
    const b = world("b");
    const audit = join(scratch, "audit", "journal.ndjson");
    mkdirSync(join(scratch, "audit"), { mode: 0o700 });
    const learning = await session(draft, audit, b);
    try {
      const added = await learning.client.callTool({ name: "add_entry", arguments: { text: "first" } });
      expect(added.isError, toolText(added)).toBe(true);
      await learning.client.callTool({ name: "sync", arguments: {} });
      await learning.client.callTool({ name: "list_entries", arguments: {} });
    } finally {
      await learning.client.close();
    }

    // 3. learn, in yet another working folder.
    const learnt = join(scratch, "learnt.json");
    const r = spawnSync(
      process.execPath,
      [
        MCPGUARD,
        "policy",
        "learn",
        "--audit",
        audit,
        "--policy",
        draft,
        "--out",
        learnt,
        "--audit-key",
        join(keys, "audit.key"),
      ],
      { cwd: "/", encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    // The journal folder it made, written against {{cwd}}; the settings it read at start.
    expect(r.stdout).toMatch(/ {2}add_entry\n(?:[+ ] [^\n]*\n)*\+ {3}write \{\{cwd\}\}\/journal\/\*\*\n/);
    expect(r.stdout).toMatch(/\+ {3}read \{\{cwd\}\}\/\.journalrc\*/);
    // The SSH key: listed, never proposed.
    expect(r.stdout).toMatch(/not proposed:[\s\S]*\.ssh\/id_rsa[\s\S]*secret/);
    const policy = JSON.parse(readFileSync(learnt, "utf8"));
    expect(JSON.stringify(policy)).not.toMatch(/\.ssh/);
    expect(policy.draft).toBe(true);

    // 4. used in folder C with the learnt policy: every call works; the key stays out of reach.
    const c = world("c");
    const used = await session(learnt, join(scratch, "audit", "used.ndjson"), c);
    try {
      const added = await used.client.callTool({ name: "add_entry", arguments: { text: "second" } });
      expect(toolText(added)).toBe("added");
      const listed = await used.client.callTool({ name: "list_entries", arguments: {} });
      expect(toolText(listed)).toBe("[journal] second");
      expect(toolText(await used.client.callTool({ name: "sync", arguments: {} }))).toBe("synced");
    } finally {
      await used.client.close();
    }
    const kernelDenials = readFileSync(join(scratch, "audit", "used.ndjson"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"event":"denied"'));
    expect(kernelDenials.some((l) => l.includes(".ssh/id_rsa"))).toBe(true);

    // A log that does not verify is refused: learn proposes nothing from records it cannot prove.
    const lines = readFileSync(audit, "utf8").split("\n");
    const forged = lines.map((l) => l.replace(`${b.cwd}/journal`, "/etc/cron.d"));
    writeFileSync(join(scratch, "audit", "forged.ndjson"), forged.join("\n"));
    const refused = spawnSync(
      process.execPath,
      [
        MCPGUARD,
        "policy",
        "learn",
        "--audit",
        join(scratch, "audit", "forged.ndjson"),
        "--policy",
        draft,
        "--audit-key",
        join(keys, "audit.key"),
      ],
      { encoding: "utf8" },
    );
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/does not verify/);
    expect(refused.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  }, 120_000);
});

/** Records as the proxy writes them, parsed by the audit log's schema. */
function records(world: { cwd: string; home?: string }, lines: Record<string, unknown>[]) {
  const common = { time: "2026-12-04T00:00:00.000Z", server: "s", config: "C-full", session: "S1" };
  const all = [
    { type: "lifecycle", event: "start", world, ...common },
    ...lines.map((l) => ({ ...common, ...l })),
  ];
  return all.map((r, seq) => AuditRecord.parse({ ...r, seq }));
}
const call = (tool: string, extra: Record<string, unknown> = {}) => ({
  type: "decision",
  tool,
  layer: "L1+L2",
  rule: null,
  decision: "allow",
  reason: "allowed",
  latencyMs: 0.1,
  argsDigest: "sha256:0",
  ...extra,
});
const denied = (syscall: string, path: string, access?: string) => ({
  type: "kernel",
  event: "denied",
  decision: "deny",
  backend: "landlock",
  syscall,
  errno: 13,
  pid: 1,
  comm: "node",
  path,
  ...(access ? { access } : {}),
});
const describeRecord = (r: Record<string, unknown>) => `${String(r.syscall ?? r.op)} ${String(r.path ?? "")}`;

function options(tools: Record<string, { takesPath?: boolean; reads?: boolean }>): LearnOptions {
  return {
    server: "s",
    tools: new Map(
      Object.entries(tools).map(([n, t]) => [
        n,
        { takesPath: t.takesPath ?? false, reads: t.reads ?? false },
      ]),
    ),
    sensitive: (path) => (/\/\.ssh\//.test(path) ? "a file that holds secrets" : undefined),
    guardPaths: ["/var/lib/mcpguard"],
    path: "/usr/bin:/bin",
  };
}

describe("learning from a log", () => {
  const w = { cwd: "/srv/project", home: "/home/ann" };

  it("gives each refusal to the call it happened in, and generalises data to its folder", () => {
    const result = learn(
      records(w, [
        denied("openat", "/usr/share/locale/locale.alias", "r"),
        call("add"),
        denied("mkdir", "/srv/project/data/notes", "w"),
        call("show"),
        denied("openat", "/etc/app.conf", "r"),
        denied("openat", "/home/ann/.config/app/settings.json", "r"),
        denied("openat", "/home/ann/.ssh/id_ed25519", "r"),
        denied("openat", "/var/lib/mcpguard/audit.key", "r"),
        denied("openat", "/home/ann/cache.json", "w"),
      ]),
      options({ add: {}, show: {} }),
      describeRecord,
    );
    const proposed = result.proposals.map((p) => `${p.tool} ${p.capability} ${p.value}`).sort();
    expect(proposed).toEqual([
      // A folder it made is its data folder, below {{cwd}}.
      "add write {{cwd}}/data/notes/**",
      // A file read outside the working folder is that file, with {{home}} where it lies there.
      "show read /etc/app.conf",
      "show read {{home}}/.config/app/settings.json",
      // A write in HOME itself: the file and its siblings, never HOME whole.
      "show write {{home}}/cache.json*",
    ]);
    expect(result.notProposed.map((n) => n.why).join("\n")).toMatch(
      /id_ed25519 is a file that holds secrets[\s\S]*audit\.key is the guard's own/,
    );
    // What a runtime probes at start and does without is listed, not proposed.
    expect(result.atStart.map((r) => r.need?.value)).toEqual(["/usr/share/locale/locale.alias"]);
  });

  it("gives a start refusal of data to the tools that take no path, and a program's folder to a tool that reads nothing", () => {
    const result = learn(
      records(w, [
        denied("openat", "/srv/project/store.json", "r"),
        call("log"),
        denied("execve", "/usr/bin/git", "x"),
      ]),
      options({ log: {}, read_file: { takesPath: true, reads: true } }),
      describeRecord,
    );
    const proposed = result.proposals.map((p) => `${p.tool} ${p.capability} ${p.value}`).sort();
    expect(proposed).toEqual([
      "log exec git",
      // git works in the repository it is started in: the pass stopped at the exec.
      "log read {{cwd}}/**",
      "log read {{cwd}}/store.json*",
    ]);
  });

  it("learns a refused unix socket by the name the server gave, never a root daemon's", () => {
    const unix = (op: string, path: string) => ({
      type: "kernel",
      event: "deny",
      decision: "deny",
      backend: "cgroup-bpf",
      op,
      pid: 1,
      comm: "node",
      af: 1,
      proto: "stream",
      path,
    });
    const result = learn(
      records(w, [
        call("notify"),
        unix("connect_unix", "/home/ann/.local/share/app/app.sock"),
        unix("sendmsg_unix", "/run/systemd/journal/socket"),
        unix("connect_unix", "/var/run/docker.sock"),
        unix("connect_unix", "/run/systemd/private"),
        unix("connect_unix", "run/app.sock"),
        unix("connect_unix", "/proc/self/fd/3"),
        unix("connect_unix", "/dev/fd/3"),
        unix("connect_unix", "/run/user/0/bus"),
        unix("connect_unix", "/tmp/tmux-0/default"),
        unix("connect_unix", "/home/ann/.gnupg/S.gpg-agent"),
        unix("connect_unix", "/home/ann/.ssh/agent.sock"),
      ]),
      options({ notify: {} }),
      describeRecord,
    );
    expect(result.proposals.map((p) => `${p.tool} ${p.capability} ${p.value}`).sort()).toEqual([
      "notify sockets /run/systemd/journal/socket",
      "notify sockets {{home}}/.local/share/app/app.sock",
    ]);
    expect(result.notProposed.map((n) => n.why).join("\n")).toMatch(
      new RegExp(
        [
          "docker\\.sock is the socket of a daemon or agent",
          "private is the socket of a daemon",
          "run/app\\.sock must be an absolute path",
          "/proc/self/fd/3 leads through procfs",
          "/dev/fd/3 leads through procfs",
          "/run/user/0/bus is the socket of a daemon",
          "tmux-0/default is the socket of a daemon",
          "S\\.gpg-agent is the socket of a daemon or agent",
          "\\.ssh/agent\\.sock is (the socket|a file that holds secrets)",
        ].join("[\\s\\S]*"),
      ),
    );
  });

  it("prints what it read from the log with its control characters escaped", () => {
    const result = learn(
      records(w, [call("notify"), denied("openat", "/etc/app\u001b[2K\r+   read /etc/ok.conf", "r")]),
      options({ notify: {} }),
      describeRecord,
    );
    const text = report("s", result, result.proposals);
    expect(text).toContain("/etc/app\\u001b[2K\\u000d+   read /etc/ok.conf");
    expect([...text].filter((c) => c === "\u001b" || c === "\r")).toEqual([]);
  });

  it("takes an L1 refusal's needs from the record, and never proposes for an L2 refusal", () => {
    const result = learn(
      records(w, [
        call("run", {
          decision: "deny",
          layer: "L1",
          rule: "l1.exec",
          reason: "cut is not a program run may run",
          needs: [
            { capability: "exec", value: "cut" },
            { capability: "read", value: "/srv/project/logs/a.log" },
          ],
        }),
        call("run", { decision: "deny", layer: "L2", rule: "l2.sensitive-path", reason: "names ~/.ssh" }),
      ]),
      options({ run: {} }),
      describeRecord,
    );
    expect(result.proposals.map((p) => `${p.capability} ${p.value}`).sort()).toEqual([
      "exec cut",
      "read {{cwd}}/logs/**",
    ]);
    expect(result.notProposed[0]?.why).toMatch(/L2 refused what the call carried/);
  });

  it("writes paths with the policy's variables, the most specific folder first", () => {
    expect(withVariables("/home/ann/proj/x", { cwd: "/home/ann/proj", home: "/home/ann" })).toBe("{{cwd}}/x");
    expect(withVariables("/home/ann/y", { cwd: "/home/ann/proj", home: "/home/ann" })).toBe("{{home}}/y");
    // A working folder of / stands for nothing.
    expect(withVariables("/etc/x", { cwd: "/" })).toBe("/etc/x");
  });

  it("adds proposals to a copy of the policy, once", () => {
    const policy = { tools: { add: { read: ["{{cwd}}/a"] } } };
    const p = { tool: "add", capability: "read" as const, value: "{{cwd}}/a", because: [] };
    const q = { ...p, capability: "exec" as const, value: "git" };
    const { policy: out, added } = applyProposals(policy, [p, q]);
    expect(added).toEqual([q]);
    expect(out).toEqual({ tools: { add: { read: ["{{cwd}}/a"], exec: ["git"] } } });
    expect(policy.tools.add).toEqual({ read: ["{{cwd}}/a"] });
  });
});

describe.skipIf(!l3)("wrap --learn", () => {
  it("learns for every wrapped server of a client config, and unwrap takes what it wrote", async () => {
    const b = world("wrapped");
    const config = join(scratch, "wrapped", "claude_desktop_config.json");
    writeFileSync(
      config,
      `${JSON.stringify({ mcpServers: { journal: { command: process.execPath, args: [JOURNAL], env: { JOURNAL_TOKEN: TOKEN } } } }, null, 2)}\n`,
    );
    const wrapped = spawnSync(process.execPath, [MCPGUARD, "wrap", config], { encoding: "utf8", env: b.env });
    expect(wrapped.status, wrapped.stderr).toBe(0);
    const entry = JSON.parse(readFileSync(config, "utf8")).mcpServers.journal;
    const use = async (text: string) => {
      const s = await connect(entry.args, { ...b.env, ...entry.env }, b.cwd);
      try {
        return toolText(await s.client.callTool({ name: "add_entry", arguments: { text } }));
      } finally {
        await s.client.close();
      }
    };
    expect(await use("one")).toMatch(/Error/);
    const learnt = spawnSync(process.execPath, [MCPGUARD, "wrap", "--learn", config], {
      encoding: "utf8",
      env: b.env,
    });
    expect(learnt.status, learnt.stderr).toBe(0);
    expect(learnt.stdout).toMatch(
      /^journal:\npolicy learn: journal: [\s\S]*\+ {3}write \{\{cwd\}\}\/journal\/\*\*/,
    );
    expect(await use("two")).toBe("added");
    const policy = entry.args[entry.args.indexOf("--policy") + 1] as string;
    const unwrapped = spawnSync(process.execPath, [MCPGUARD, "unwrap", config], { encoding: "utf8" });
    expect(unwrapped.stdout).toContain(`removed ${policy}.before-learn`);
  }, 120_000);
});
