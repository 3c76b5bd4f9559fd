/**
 * Issue #11, through the real CLI: answers a client accepts but no layer inspected, frames that
 * crashed a recursive walk, request smuggling with line breaks other readers see, argument names
 * Object.prototype declares, and a client that never reads its replies.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, FIXTURE, isAlive, MCPGUARD, makeWorkspace, RawProxy, toolText } from "./helpers.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const HOSTILE = join(FIXTURES, "hostile.mjs");
const HOSTILE_POLICY = join(FIXTURES, "hostile-policy.json");
const POLICY = join(FIXTURES, "policy.json");
const UNIVERSAL = join(FIXTURES, "universal.py");
const KEY = "AKIAQ3EGZT5NXBRW7YLM";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(`C-full hardening tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);
/** The configs whose sanitizer must see every answer: C-full where the kernel layer can run. */
const SANITIZING = l3 ? ["C-app", "C-full"] : ["C-app"];

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-hardening-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const hostile = (config: string) => [
  MCPGUARD,
  "run",
  "--config",
  config,
  "--policy",
  HOSTILE_POLICY,
  "--",
  process.execPath,
  HOSTILE,
];

async function rawHostile(config: string): Promise<RawProxy> {
  const proxy = new RawProxy(hostile(config).slice(2), { cwd: work });
  await proxy.initialize();
  return proxy;
}

async function close(proxy: RawProxy): Promise<void> {
  proxy.child.stdin.end();
  await proxy.exited;
}

describe("every answer a client accepts is inspected", () => {
  for (const config of SANITIZING) {
    it(`${config}: an answer whose id only matches after coercion never reaches the SDK client`, async () => {
      const s = await connect(hostile(config), undefined, work);
      for (const how of ["string", "space", "decimal", "hex", "exp"]) {
        const result = await s.client.callTool({ name: "leak", arguments: { how } });
        expect(toolText(result)).toBe("clean");
      }
      const exact = await s.client.callTool({ name: "leak", arguments: { how: "exact" } });
      expect(toolText(exact)).toBe("leaked [REDACTED aws-key]");
      await s.client.close();
      expect(s.stderr().match(/is not exactly the id of a request in flight/g)).toHaveLength(5);
    });
  }

  it("C-app: a batched response is sanitized item by item", async () => {
    const proxy = await rawHostile("C-app");
    proxy.request(1, "tools/call", { name: "leak", arguments: { how: "batch" } });
    const batch = (await proxy.next()) as unknown as Record<string, unknown>[];
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "leaked [REDACTED aws-key]" }] } },
    ]);
    await close(proxy);
  });

  it("C-app: a result through the tasks API (tasks/result) is sanitized", async () => {
    const proxy = await rawHostile("C-app");
    proxy.request(1, "tools/call", { name: "leak", arguments: { how: "task" }, task: { ttl: 60000 } });
    expect(await proxy.next()).toMatchObject({ id: 1, result: { task: { taskId: "task-1" } } });
    proxy.request(2, "tasks/result", { taskId: "task-1" });
    expect(toolText((await proxy.next()).result)).toBe("the task found [REDACTED aws-key]");
    await close(proxy);
  });

  it("C-app: resources/read with a key is sanitized", async () => {
    const s = await connect(hostile("C-app"), undefined, work);
    const read = await s.client.readResource({ uri: "file:///credentials" });
    expect(read.contents).toEqual([
      { uri: "file:///credentials", mimeType: "text/plain", text: "aws_access_key_id = [REDACTED aws-key]" },
    ]);
    await s.client.close();
  });

  it("C-app: prompts, error answers, log and progress notifications are sanitized", async () => {
    const proxy = await rawHostile("C-app");
    proxy.request(1, "prompts/get", { name: "p" });
    proxy.request(2, "tools/call", { name: "leak", arguments: { how: "error" } });
    proxy.request(3, "tools/call", { name: "leak", arguments: { how: "log" }, _meta: { progressToken: 7 } });
    const lines = [];
    for (let i = 0; i < 5; i++) lines.push(await proxy.next());
    expect(JSON.stringify(lines)).not.toContain(KEY);
    expect(lines).toEqual([
      expect.objectContaining({
        id: 1,
        result: { messages: [{ role: "user", content: { type: "text", text: "use [REDACTED aws-key]" } }] },
      }),
      expect.objectContaining({
        id: 2,
        error: {
          code: -32000,
          message: "failed reading [REDACTED aws-key]",
          data: { key: "[REDACTED aws-key]" },
        },
      }),
      expect.objectContaining({
        method: "notifications/message",
        params: { level: "info", data: "env: [REDACTED aws-key]" },
      }),
      expect.objectContaining({
        method: "notifications/progress",
        params: { progressToken: 7, progress: 1, message: "at [REDACTED aws-key]" },
      }),
      expect.objectContaining({ id: 3, result: { content: [{ type: "text", text: "done" }] } }),
    ]);
    await close(proxy);
  });
});

const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("nesting no walk survives", () => {
  for (const config of SANITIZING) {
    it(`${config}: a tool result whose text is JSON nested 100,000 deep is sanitized as text, and the proxy goes on`, async () => {
      const s = await connect(hostile(config), undefined, work);
      const text = toolText(await s.client.callTool({ name: "deep", arguments: {} }));
      expect(text).toBe(`${"[".repeat(100_000)}"[REDACTED aws-key]"${"]".repeat(100_000)}`);
      expect(toolText(await s.client.callTool({ name: "leak", arguments: { how: "exact" } }))).toBe(
        "leaked [REDACTED aws-key]",
      );
      await s.client.close();
    });
  }

  for (const config of ["C0", "C-app"]) {
    it(`${config}: 40 deeply nested client frames are refused with -32600, and the proxy goes on`, async () => {
      const policy = config === "C0" ? [] : ["--policy", POLICY];
      const proxy = new RawProxy(["--config", config, ...policy, "--", "node", FIXTURE], { cwd: work });
      await proxy.initialize();
      const d = deep(100_000);
      for (let i = 1; i <= 40; i++) {
        const frames = [
          // The audit log digests the arguments of every call, in every config.
          `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":${d}}}}`,
          // L2 walks every argument.
          `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"x","more":${d}}},"id":${i}}`,
          // A batch with an invalid item is re-encoded without it.
          `[{"jsonrpc":"2.0","id":${i},"method":"ping","params":{"x":${d}}},1]`,
        ];
        proxy.send(`${frames[i % 3]}\n`);
      }
      proxy.request("after", "ping");
      const replies = [];
      for (let i = 0; i < 41; i++) replies.push(await proxy.next());
      expect(replies.at(-1)).toEqual({ jsonrpc: "2.0", id: "after", result: {} });
      for (const [i, reply] of replies.slice(0, 40).entries()) {
        expect(reply).toMatchObject({
          id: (i + 1) % 3 === 2 ? null : i + 1,
          error: { code: -32600, message: expect.stringMatching(/deeper than 128 levels/) },
        });
      }
      await close(proxy);
    });
  }
});

describe("no request smuggling", () => {
  const smuggled = JSON.stringify({
    jsonrpc: "2.0",
    id: 99,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "smuggled" } },
  });
  for (const config of ["C0", "C-app"]) {
    it(`${config}: a ping hiding a tools/call behind bare CRs is refused, and the call never runs`, async () => {
      const record = join(scratch, "methods");
      const policy = config === "C0" ? [] : ["--policy", POLICY];
      const proxy = new RawProxy(
        ["--config", config, ...policy, "--", "python3", UNIVERSAL, "--record", record],
        {
          cwd: work,
        },
      );
      await proxy.initialize();
      proxy.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":\r${smuggled}\r}}\n`);
      expect(await proxy.next()).toMatchObject({
        id: 1,
        error: { code: -32600, message: expect.stringMatching(/carriage return/) },
      });
      proxy.request(2, "ping");
      expect(await proxy.next()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
      await close(proxy);
      expect(readFileSync(record, "utf8").split("\n")).toEqual([
        "initialize",
        "notifications/initialized",
        "ping",
        "",
      ]);
    });
  }

  it("C0: a message holding U+2028, U+2029 and U+0085 reaches a splitlines reader as one message", async () => {
    const record = join(scratch, "methods");
    const proxy = new RawProxy(["--", "python3", UNIVERSAL, "--record", record], { cwd: work });
    await proxy.initialize();
    const text = "a\u2028b\u2029c\u0085d";
    proxy.send(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}}}\n`,
    );
    expect(toolText((await proxy.next()).result)).toBe(text);
    await close(proxy);
  });
});

describe("argument names Object.prototype declares", () => {
  it("C-app: constructor, __proto__, toString, valueOf and hasOwnProperty are undeclared arguments", async () => {
    const proxy = new RawProxy(["--config", "C-app", "--policy", POLICY, "--", "node", FIXTURE], {
      cwd: work,
    });
    await proxy.initialize();
    const names = ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"];
    for (const [i, name] of names.entries()) {
      proxy.send(
        `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","${name}":"x"}}}\n`,
      );
      expect(toolText((await proxy.next()).result)).toBe(
        `Blocked by mcpguard (L1): the policy of echo does not declare the argument "${name}"`,
      );
    }
    await close(proxy);
  });
});

/** Peak resident memory of a process, in MiB. */
const peakMiB = (pid: number) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

describe("a client that never reads", () => {
  it("C0: the proxy stops reading while its replies are backed up, and its memory stays bounded", async () => {
    const proxy = new RawProxy(["--", "node", FIXTURE], { cwd: work });
    await proxy.initialize();
    proxy.child.stdout.pause();
    proxy.child.stdin.on("error", () => {});
    // Each 3-byte line earns a 100-byte refusal: the proxy's own replies are what pile up.
    const chunk = Buffer.from("{}\n".repeat(1 << 18));
    let written = 0;
    while (written < 256 * 1024 * 1024) {
      written += chunk.length;
      if (proxy.child.stdin.write(chunk)) continue;
      const drained = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 2000);
        proxy.child.stdin.once("drain", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!drained) break;
    }
    const pid = proxy.child.pid as number;
    expect(isAlive(pid)).toBe(true);
    expect(peakMiB(pid)).toBeLessThan(300);
    // Once the client reads again, the proxy catches up and ends normally.
    proxy.child.stdout.resume();
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
  });
});
