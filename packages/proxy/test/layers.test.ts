/** The application layers in `mcpguard run`: C-app (L1 + L2) and C-AB, as a client and an operator see them. */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, RawProxy, readNdjson, toolText } from "./helpers.ts";

const POLICY = join(import.meta.dirname, "fixtures", "policy.json");
const MANIFEST = join(import.meta.dirname, "fixtures", "manifest.json");

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-layers-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** An SDK session through mcpguard run in the scratch workspace. */
async function session(config: string, extra: string[] = [], env: Record<string, string> = {}) {
  const log = join(scratch, "audit.ndjson");
  const args = [
    MCPGUARD,
    "run",
    "--config",
    config,
    "--policy",
    POLICY,
    "--manifest",
    MANIFEST,
    "--audit-log",
    log,
    ...extra,
    "--",
    "node",
    FIXTURE,
  ];
  const s = await connect(args, { ...(process.env as Record<string, string>), ...env }, work);
  return { ...s, log };
}

describe("C-app", () => {
  it("refuses a call outside the policy with a readable tool error, and audits it", async () => {
    const s = await session("C-app");
    const inside = await s.client.callTool({ name: "read", arguments: { path: "readme.txt" } });
    expect(toolText(inside)).toBe("inside");
    const outside = await s.client.callTool({ name: "read", arguments: { path: "../outside.txt" } });
    expect(outside.isError).toBe(true);
    expect(toolText(outside)).toMatch(
      /^Blocked by mcpguard \(L1\): .*outside\.txt is outside what read may read/,
    );
    const undeclared = await s.client.callTool({ name: "big", arguments: { bytes: 1 } });
    expect(toolText(undeclared)).toMatch(
      /\(L1\): the policy of proxy-fixture does not declare the tool "big"/,
    );
    await s.client.close();
    const denies = readNdjson(s.log).filter((e) => e.decision === "deny");
    expect(denies.map((e) => [e.layer, e.rule, e.tool])).toEqual([
      ["L1", "l1.path.read", "read"],
      ["L1", "l1.undeclared-tool", "big"],
    ]);
    // Never the argument as the client gave it; the file it names, as the reason does, and as the
    // grant it lacked (needs, what policy learn proposes).
    expect(JSON.stringify(readNdjson(s.log))).not.toContain("../outside.txt");
    expect(denies[0]?.needs).toEqual([{ capability: "read", value: join(scratch, "outside.txt") }]);
  });

  it("refuses an argument attack that the policy alone would allow (L2)", async () => {
    const s = await session("C-app");
    const key = await s.client.callTool({ name: "env", arguments: { name: "AWS_SECRET_ACCESS_KEY" } });
    expect(toolText(key)).toMatch(/^Blocked by mcpguard \(L2\): /);
    const zwj = await s.client.callTool({ name: "read", arguments: { path: "read\u200dme.txt" } });
    expect(toolText(zwj)).toMatch(/^Blocked by mcpguard \(L2\): /);
    await s.client.close();
    expect(
      readNdjson(s.log)
        .filter((e) => e.decision === "deny")
        .map((e) => e.rule),
    ).toEqual(["l2.sensitive-key", "l2.unicode.invisible"]);
  });

  it("withholds secrets from the server's environment and keeps the world's", async () => {
    const secret = `${randomUUID().replace(/-/g, "")}Ab9`;
    const s = await session("C-app", [], { MY_API_TOKEN: secret, HARMLESS_SETTING: "x" });
    expect(toolText(await s.client.callTool({ name: "env", arguments: { name: "HOME" } }))).toBe(
      process.env.HOME,
    );
    expect(toolText(await s.client.callTool({ name: "env", arguments: { name: "HARMLESS_SETTING" } }))).toBe(
      "<unset>",
    );
    await s.client.close();
    const start = readNdjson(s.log).find((e) => e.event === "start");
    expect(start.withheld).toEqual(expect.arrayContaining(["HARMLESS_SETTING", "MY_API_TOKEN"]));
    expect(readFileSync(s.log, "utf8")).not.toContain(secret);
  });

  it("removes a private key from a result and records the change", async () => {
    const key = [
      "-----BEGIN OPENSSH PRIVATE KEY-----",
      "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
      "-----END OPENSSH PRIVATE KEY-----",
      "",
    ].join("\n");
    writeFileSync(join(work, "notes.txt"), `before\n${key}after\n`);
    const s = await session("C-app");
    const result = toolText(await s.client.callTool({ name: "read", arguments: { path: "notes.txt" } }));
    expect(result).toContain("before");
    expect(result).not.toContain("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ");
    expect(result).toContain("[REDACTED");
    await s.client.close();
    expect(readNdjson(s.log).find((e) => e.decision === "modify")).toMatchObject({
      layer: "sanitizer",
      rule: expect.stringContaining("l2.result.private-key"),
    });
  });
});

describe("C-app returns what the server read, but the redacted spans", () => {
  const REAL = join(import.meta.dirname, "..", "..", "validator", "test", "fixtures", "real-files");

  it("a package-lock.json, a certificate chain and an example env file, byte for byte", async () => {
    const lock = gunzipSync(readFileSync(join(REAL, "package-lock.json.gz"))).toString();
    const token = `ghp_${randomUUID().replace(/-/g, "")}Ab9`;
    const planted = lock.replace(
      '"version": "0.1.0",\n',
      `"version": "0.1.0",\n      "resolved": "git+https://${token}@github.com/o/p.git",\n`,
    );
    const files: Record<string, string> = {
      "package-lock.json": lock,
      "planted-lock.json": planted,
      "chain.pem": readFileSync(join(REAL, "pem", "chain.pem"), "utf8"),
      ".env.example": readFileSync(join(REAL, ".env.example"), "utf8"),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
    const s = await session("C-app");
    const read = async (path: string) =>
      toolText(await s.client.callTool({ name: "read", arguments: { path } }));
    for (const name of ["package-lock.json", "chain.pem", ".env.example"])
      expect(await read(name), name).toBe(files[name]);
    expect(await read("planted-lock.json")).toBe(planted.replace(token, "[REDACTED token]"));
    await s.client.close();
    expect(readNdjson(s.log).filter((e) => e.decision === "modify")).toHaveLength(1);
  });
});

describe("malformed calls", () => {
  it("are refused when layers are on, never read by guessing", async () => {
    const proxy = new RawProxy(["--config", "C-app", "--policy", POLICY, "--", "node", FIXTURE], {
      cwd: work,
    });
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "read", arguments: ["../outside.txt"] });
    expect(await proxy.next()).toMatchObject({
      id: 1,
      result: {
        isError: true,
        content: [{ text: "Blocked by mcpguard (proxy): the tools/call arguments is not an object" }],
      },
    });
    proxy.request(2, "tools/call", { name: 5 });
    expect(toolText((await proxy.next()).result)).toMatch(/name is not a string/);
    // "\udcff" (sent as that JSON escape) is U+FFFD to the layers and the byte 0xFF to a Python
    // server: another file. A key counts too; a surrogate pair (an emoji) is well-formed.
    proxy.request(3, "tools/call", { name: "read", arguments: { path: "\udcff/secret.txt" } });
    expect(toolText((await proxy.next()).result)).toMatch(/^Blocked by mcpguard \(proxy\): .*lone surrogate/);
    proxy.request(4, "tools/call", { name: "read", arguments: { path: "readme.txt", "x\ud800": 1 } });
    expect(toolText((await proxy.next()).result)).toMatch(/lone surrogate/);
    proxy.request(5, "tools/call", { name: "read", arguments: { path: "\u{1F600}.txt" } });
    expect(toolText((await proxy.next()).result)).not.toMatch(/Blocked by mcpguard/);
    // A call without an id is no call: dropped, never seen by the server.
    proxy.send(`${JSON.stringify({ jsonrpc: "2.0", method: "tools/call", params: { name: "read" } })}\n`);
    proxy.request(6, "ping");
    expect(await proxy.next()).toMatchObject({ id: 6, result: {} });
    const dropped = /dropped a tools\/call without an id/;
    for (let i = 0; i < 50 && !dropped.test(proxy.stderr); i++) await new Promise((r) => setTimeout(r, 100));
    expect(proxy.stderr).toMatch(dropped);
    proxy.child.stdin.end();
    await proxy.exited;
  });
});

describe("a server that sends requests and never reads the answers", () => {
  it("is not answered past a bound, so the answers do not pile up in the proxy", async () => {
    const flood = join(import.meta.dirname, "fixtures", "flood.mjs");
    const proxy = new RawProxy(["--config", "C-app", "--policy", POLICY, "--", "node", flood], { cwd: work });
    await proxy.initialize();
    // 60,000 refusals of about 170 bytes each: far past the 4 MiB that may wait unread.
    const said = /answers to them are dropped until it reads its input/;
    for (let i = 0; i < 600 && !said.test(proxy.stderr); i++) await new Promise((r) => setTimeout(r, 100));
    expect(proxy.stderr).toMatch(said);
    // Said once, however many answers were dropped.
    expect(proxy.stderr.match(new RegExp(said.source, "g"))).toHaveLength(1);
    proxy.child.stdin.end();
    expect(await proxy.exited).toMatchObject({ code: 0 });
  });
});

describe("C-AB", () => {
  it("checks path arguments against the manifest's scopes", async () => {
    const s = await session("C-AB");
    expect(toolText(await s.client.callTool({ name: "read", arguments: { path: "readme.txt" } }))).toBe(
      "inside",
    );
    const outside = await s.client.callTool({ name: "read", arguments: { path: "../outside.txt" } });
    expect(toolText(outside)).toMatch(
      /^Blocked by mcpguard \(AB\): .* is outside the mcp\.ac\.filesystem\.read scope/,
    );
    await s.client.close();
  });
});

describe("fail closed", () => {
  it.each([
    [["--config", "C-app"], /config C-app: L1 and L2 need a policy \(--policy FILE\)/],
    [["--config", "C-ebpf"], /config C-ebpf: L3 needs a policy \(--policy FILE\)/],
    [["--config", "C-AB"], /config C-AB: the AB layer needs an AgentBound manifest \(--manifest FILE\)/],
    [["--config", "C-app", "--policy", "/nonexistent.json"], /\/nonexistent\.json: cannot read: ENOENT/],
    [["--config", "C-app", "--policy", MANIFEST], /tools: Invalid input/],
  ])("refuses to start the server: %j", async (args, message) => {
    const proxy = new RawProxy([...args, "--", "node", FIXTURE]);
    expect((await proxy.exited).code).toBe(2);
    expect(proxy.stderr).toMatch(message);
  });
});

describe("override workflow", () => {
  it("a benign call denied by a too-strict policy is allowed once the operator adds a scoped override", async () => {
    const shared = join(scratch, "shared");
    mkdirSync(shared);
    writeFileSync(join(shared, "team.txt"), "team notes");
    const overrides = join(scratch, "overrides");
    mkdirSync(overrides);

    const before = await session("C-app", ["--overrides", overrides]);
    const denied = await before.client.callTool({
      name: "read",
      arguments: { path: join(shared, "team.txt") },
    });
    expect(denied.isError).toBe(true);
    await before.client.close();

    // The operator reads the denial from the audit log...
    const shown = spawnSync(
      process.execPath,
      [MCPGUARD, "audit", "--file", before.log, "--decision", "deny", "--server", "proxy-fixture"],
      { encoding: "utf8" },
    );
    expect(shown.stdout).toMatch(
      /deny read by L1 \(l1\.path\.read\): .*shared\/team\.txt is outside what read may read/,
    );
    // ...and adds an override scoped to that tool and that directory.
    writeFileSync(
      join(overrides, "proxy-fixture.json"),
      JSON.stringify({
        version: 1,
        server: "proxy-fixture",
        overrides: [{ tool: "read", allow: { read: [`${shared}/**`] }, reason: "team notes are shared" }],
      }),
    );
    const after = await session("C-app", ["--overrides", overrides]);
    expect(
      toolText(await after.client.callTool({ name: "read", arguments: { path: join(shared, "team.txt") } })),
    ).toBe("team notes");
    const stillDenied = await after.client.callTool({
      name: "read",
      arguments: { path: join(scratch, "outside.txt") },
    });
    expect(stillDenied.isError).toBe(true);
    await after.client.close();
  });
});

describe("SQL read with SQLite's grammar", () => {
  it("lets what the statement classes allow through, and refuses the rest with a reason", async () => {
    // The fixture's echo tool stands in for a SQL tool: what reaches it is what L1 and L2 let through.
    const policy = join(scratch, "sql.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        server: "proxy-fixture",
        tools: { echo: { args: { text: "sql" }, sql: ["read", "write", "schema"], sqlStatements: "one" } },
      }),
    );
    const log = join(scratch, "audit.ndjson");
    const s = await connect(
      [MCPGUARD, "run", "--config", "C-app", "--policy", policy, "--audit-log", log, "--", "node", FIXTURE],
      process.env as Record<string, string>,
      work,
    );
    const query = async (text: string) =>
      toolText(await s.client.callTool({ name: "echo", arguments: { text } }));
    for (const sql of [
      "-- columns\nPRAGMA table_info(users)",
      "SELECT count(*) FROM products /* WHERE price > 100; DELETE FROM products */",
      "CREATE INDEX idx_price ON products(price)",
      "SELECT 1; -- trailing note",
    ])
      expect(await query(sql)).toBe(sql);
    expect(await query("DROP TABLE users")).toMatch(
      /^Blocked by mcpguard \(L1\): echo may not run drop statements \(DROP TABLE\)/,
    );
    expect(await query("SELECT readfile('/etc/passwd')")).toMatch(
      /\(L1\): echo may not use readfile\(\), which reads a file/,
    );
    expect(await query("SELECT * FROM users WHERE name = 'x")).toMatch(
      /\(L1\): the SQL does not parse as SQLite: an unterminated string at line 1, column 34/,
    );
    await s.client.close();
    expect(
      readNdjson(log)
        .filter((e) => e.decision === "deny")
        .map((e) => e.rule),
    ).toEqual(["l1.sql", "l1.sql.dangerous", "l1.sql.unparsable"]);
  });
});

describe("override of a sanitizer rule", () => {
  it("turns off the rule the audit log names, for the tool the override names or for the server", async () => {
    // Token-shaped (mixed case and digits, 40 characters) and public: say, a build id.
    const token = "Kq7ZmW2xLp9RtV4nHc8BdJ3sYe6AuGf1Qo5IiNx0";
    writeFileSync(join(work, "build.txt"), `build ${token}\n`);
    const overrides = join(scratch, "overrides");
    mkdirSync(overrides);
    const calls = async () => {
      const s = await session("C-app", ["--overrides", overrides]);
      const echo = toolText(await s.client.callTool({ name: "echo", arguments: { text: `build ${token}` } }));
      const read = toolText(await s.client.callTool({ name: "read", arguments: { path: "build.txt" } }));
      await s.client.close();
      return { echo, read, log: s.log };
    };
    const before = await calls();
    expect(before.echo).not.toContain(token);
    expect(before.read).not.toContain(token);
    const modified = readNdjson(before.log).filter((e) => e.decision === "modify");
    expect(modified.map((e) => [e.layer, e.rule, e.tool])).toEqual([
      ["sanitizer", "l2.result.token", "echo"],
      ["sanitizer", "l2.result.token", "read"],
    ]);
    // Off for one tool: that tool's results keep the value, the other tool's do not.
    const file = join(overrides, "proxy-fixture.json");
    const override = (scope: { tool?: string }) =>
      writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          server: "proxy-fixture",
          overrides: [{ ...scope, disableRules: ["l2.result.token"], reason: "build ids are public" }],
        }),
      );
    override({ tool: "echo" });
    const scoped = await calls();
    expect(scoped.echo).toContain(token);
    expect(scoped.read).not.toContain(token);
    // Off for the server: every tool's.
    override({});
    const server = await calls();
    expect(server.echo).toContain(token);
    expect(server.read).toContain(token);
  });
});

describe("what L3 confines, L1 and L2 leave to it", () => {
  it("refuses under C-app what only the run knows, and allows it once the kernel confines files and exec", async () => {
    const { buildLayers } = await import("../src/layers.ts");
    const policy = join(scratch, "shell.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        server: "shell",
        tools: {
          run: {
            args: { command: "command" },
            read: ["{{cwd}}/**"],
            write: ["{{cwd}}/**"],
            exec: ["cat", "ls", "wc"],
          },
        },
      }),
    );
    const layers = await buildLayers({
      layers: ["L1", "L2"],
      policy,
      env: { PATH: process.env.PATH ?? "/usr/bin", HOME: scratch, SECRET_TOKEN: "s3cr3t-Value-0123456789" },
      cwd: work,
    });
    const call = (command: string) =>
      layers.interceptor?.toolCall({ id: 1, name: "run", arguments: { command } } as never);
    const dynamic = 'ls | while read -r f; do wc -c < "$f"; done';
    expect(call(dynamic)).toMatchObject({ decision: "deny", layer: "L1", rule: "l1.command.dynamic" });
    expect(call("cat /etc/hostname")).toMatchObject({ decision: "deny", rule: "l1.path.read" });
    // The environment L1 left the server holds no secret, so listing it reaches no secret either.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    expect(call("echo ${!SECRET*} $SECRET_TOKEN")).toMatchObject({ decision: "allow" });
    layers.confine?.({ file: "landlock", exec: "landlock", net: "cgroup-bpf", unix: "none" });
    expect(call(dynamic)).toMatchObject({ decision: "allow" });
    // What L1 can see outside the policy stays refused.
    expect(call("cat /etc/hostname")).toMatchObject({ decision: "deny", rule: "l1.path.read" });
    layers.confine?.({ file: "none", exec: "landlock", net: "cgroup-bpf", unix: "none" });
    expect(call(dynamic)).toMatchObject({ decision: "deny", rule: "l1.command.dynamic" });
  });
});
