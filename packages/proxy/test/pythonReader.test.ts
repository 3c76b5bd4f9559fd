/**
 * The Python reader's helper as `mcpguard run` starts it: once (warmed with the other readers where
 * a policy lets a shell run python3), a child of the proxy and never of the server, gone with the
 * proxy; under L3 with Landlock, through the launcher (no_new_privs, seccomp, a network namespace
 * of its own where the host makes one).
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually, FIXTURE, isAlive, MCPGUARD, RawProxy, workspaceWithPolicy } from "./helpers.ts";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;

let scratch: string;
let work: string;
let policy: string;
beforeEach(() => {
  ({ scratch, work, policy } = workspaceWithPolicy("mcpguard-pyreader-", {
    echo: { args: { text: "command" }, exec: ["python3"], read: ["{{cwd}}/**"] },
  }));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** Every process whose parent is `pid` (any of its threads). */
function children(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number),
  );
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const child of children(pid)) out.push(child, ...descendants(child));
  return out;
}

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");

async function session(config: string) {
  const proxy = new RawProxy(["--config", config, "--policy", policy, "--", process.execPath, FIXTURE], {
    cwd: work,
  });
  proxy.request(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "0" },
  });
  await proxy.next(20_000);
  proxy.send(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  let id = 10;
  const call = async (text: string) => {
    proxy.request(++id, "tools/call", { name: "echo", arguments: { text } });
    const answer = (await proxy.next(20_000)) as { result?: { content: { text: string }[] } };
    return answer.result?.content[0]?.text ?? "";
  };
  return { proxy, call };
}

/** The helper: the one child of the proxy that runs pyast.py. */
function helperOf(pid: number): number {
  const found = children(pid).filter((c) => cmdline(c).some((word) => word.endsWith("pyast.py")));
  expect(found).toHaveLength(1);
  return found[0] as number;
}

describe("the Python reader's helper in mcpguard run", () => {
  it("C-app: reads with CPython's grammar from one helper, the proxy's child, gone with the proxy", async () => {
    const { proxy, call } = await session("C-app");
    expect(await call("python3 -c 'print(1)'")).toBe("python3 -c 'print(1)'");
    expect(await call(`python3 -c "\uff45\uff58\uff45\uff43('print(open(\\"/etc/shadow\\").read())')"`)).toBe(
      "Blocked by mcpguard (L1): the python3 code executes code built at run time (exec)",
    );
    expect(await call("python3 -c 'print(2)'\npython3 -c 'print(3)'")).toContain("print(3)");
    const pid = proxy.child.pid as number;
    const helper = helperOf(pid);
    expect(cmdline(helper).slice(1, 3)).toEqual(["-I", "-S"]);
    // Not the server's: no process of the server's tree is it, or its parent.
    const server = children(pid).find((c) => cmdline(c).includes(FIXTURE)) as number;
    expect(server).toBeDefined();
    expect(descendants(server)).not.toContain(helper);
    proxy.child.stdin.end();
    await proxy.exited;
    expect(await eventually(() => !isAlive(helper), 5000)).toBe(true);
  });

  it.skipIf(!l3)("C-full: the helper starts through the launcher, confined", async () => {
    const { proxy, call } = await session("C-full");
    expect(await call(`python3 -c "\uff4f\uff50\uff45\uff4e('/etc/shadow').read()"`)).toMatch(
      /^Blocked by mcpguard \(L1\): \/etc\/shadow is outside what echo may read/,
    );
    const pid = proxy.child.pid as number;
    const helper = helperOf(pid);
    const status = readFileSync(`/proc/${helper}/status`, "utf8");
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    // Every descriptor above stderr closed by the launcher.
    expect(readdirSync(`/proc/${helper}/fd`).sort()).toEqual(["0", "1", "2"]);
    const hardening = JSON.parse(doctor.stdout).hardening as Record<string, { backend: string | null }>;
    if (hardening["abstract-unix-bind"]?.backend === "net-namespace")
      expect(readlinkSync(`/proc/${helper}/ns/net`)).not.toBe(readlinkSync(`/proc/${pid}/ns/net`));
    proxy.child.stdin.end();
    await proxy.exited;
    expect(await eventually(() => !isAlive(helper), 5000)).toBe(true);
  });
});
