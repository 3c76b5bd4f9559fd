/** The L3 configs in `mcpguard run`: kernel enforcement below the server's code, and failing closed. */
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { containmentName, createContainment, findCgroup2, plannedCgroupPath } from "../src/containment.ts";
import { prepareKernelLayer, startKernelLayer } from "../src/kernelLayer.ts";
import {
  auditedSession,
  eventually,
  FIXTURE,
  hostPid,
  isAlive,
  MCPGUARD,
  makeWorkspace,
  RawProxy,
  readNdjson,
  toolText,
} from "./helpers.ts";

const BPF = join(import.meta.dirname, "..", "..", "..", "bpf", ".output");
const POLICY = join(import.meta.dirname, "fixtures", "policy.json");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const ready = doctor.status === 0;
if (!ready)
  console.warn(
    `L3 proxy tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}${doctor.stderr}`,
  );

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-l3-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

async function session(config: string, extra: string[] = [], env: Record<string, string> = {}) {
  const log = join(scratch, `audit-${config}-${extra.length}.ndjson`);
  return auditedSession({ config, policy: POLICY, log, extra, env, cwd: work });
}

describe.skipIf(!ready)("L3 configs", () => {
  it("C-ebpf: a read outside the policy fails in the kernel, not in a layer, and the audit log says so", async () => {
    const s = await session("C-ebpf");
    expect(toolText(await s.client.callTool({ name: "read", arguments: { path: "readme.txt" } }))).toBe(
      "inside",
    );
    const outside = await s.client.callTool({ name: "read", arguments: { path: "../outside.txt" } });
    expect(outside.isError).toBe(true);
    expect(toolText(outside)).toMatch(/EACCES|permission denied/i);
    await s.client.close();
    const log = readNdjson(s.log);
    expect(log.find((e) => e.event === "start")).toMatchObject({
      l3: { file: "landlock", exec: "landlock", net: "cgroup-bpf", unix: "landlock+cgroup-bpf" },
    });
    expect(log.filter((e) => e.type === "decision").map((e) => e.decision)).toEqual(["allow", "allow"]);
    // The path as the server passed it to openat.
    expect(log).toContainEqual(
      expect.objectContaining({
        type: "kernel",
        event: "denied",
        decision: "deny",
        backend: "landlock",
        path: "../outside.txt",
      }),
    );
  });

  it("C-ebpf keeps the environment as it is (a pure ablation); C-full withholds secrets", async () => {
    const secret = { MY_API_TOKEN: "aB3dE5gH7jK9mN1pQ3sT5vX7" };
    const ebpf = await session("C-ebpf", [], secret);
    expect(toolText(await ebpf.client.callTool({ name: "env", arguments: { name: "HOME" } }))).toBe(
      process.env.HOME,
    );
    await ebpf.client.close();
    const full = await session("C-full", [], secret);
    const denied = await full.client.callTool({ name: "read", arguments: { path: "../outside.txt" } });
    expect(toolText(denied)).toMatch(/^Blocked by mcpguard \(L1\)/);
    await full.client.close();
    expect(readNdjson(full.log).find((e) => e.event === "start").withheld).toContain("MY_API_TOKEN");
  });

  it("stops the server at once when the BPF loader dies under it, and not one refused datagram gets out", async () => {
    const log = join(scratch, "lost.ndjson");
    const udp = createSocket("udp4");
    let datagrams = 0;
    udp.on("message", () => datagrams++);
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
    const proxy = new RawProxy(
      ["--config", "C-ebpf", "--policy", POLICY, "--audit-log", log, "--", process.execPath, FIXTURE],
      { cwd: work },
    );
    await proxy.initialize();
    // A daemon of the server's that sends to a destination the policy refuses, every millisecond.
    proxy.request(1, "tools/call", { name: "daemon", arguments: { port: udp.address().port } });
    const daemon = hostPid(
      Number(((await proxy.next()).result as { content: { text: string }[] }).content[0]?.text),
      proxy.child.pid as number,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const children = readFileSync(`/proc/${proxy.child.pid}/task/${proxy.child.pid}/children`, "utf8")
      .trim()
      .split(/\s+/);
    const loader = children.find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("mcpguard-loader"),
    );
    expect(loader).toBeDefined();
    process.kill(Number(loader), "SIGKILL");
    const { code } = await proxy.exited;
    expect(code).toBe(137);
    expect(await eventually(() => !isAlive(daemon))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    udp.close();
    // The cgroup programs are attached to the cgroup, not to the loader: they held to the end.
    expect(datagrams).toBe(0);
    expect(proxy.stderr).toMatch(
      /stopping the server: the BPF loader was killed by SIGKILL, so its programs no longer hold/,
    );
    expect(readNdjson(log)).toContainEqual(
      expect.objectContaining({ type: "kernel", event: "loader-lost", decision: "deny" }),
    );
  });

  it("a start refused for its policy ends the BPF loader it had started first, and makes no cgroup", async () => {
    const bad = join(scratch, "bad-policy.json");
    writeFileSync(bad, "{ not json");
    const refused = new RawProxy(["--config", "C-full", "--policy", bad, "--", process.execPath, FIXTURE], {
      cwd: work,
    });
    const name = `mcpguard-${refused.child.pid}-`;
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toMatch(/^mcpguard run: config C-full: .*bad-policy\.json: not valid JSON/);
    // The loader was started for the cgroup the server would have had, which was never made.
    const loaders = () =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            const argv = readFileSync(`/proc/${p}/cmdline`, "utf8");
            return argv.includes("mcpguard-loader") && argv.includes(name);
          } catch {
            return false;
          }
        });
    expect(await eventually(() => loaders().length === 0)).toBe(true);
    const cg = findCgroup2() as { mount: string; self: string };
    expect(readdirSync(join(cg.mount, cg.self)).filter((d) => d.startsWith(name))).toEqual([]);
  });

  it("replaces the loader it started first when the probe says BPF LSM: it takes --lsm (which this host refuses at load)", async () => {
    // A probe cache of this host's answer, but with BPF LSM loadable: the loader spawned before the
    // probe (without LSM) must give way to one that loads the LSM programs too.
    const cache = join(scratch, "cache");
    const env = { ...process.env, MCPGUARD_CACHE_DIR: cache };
    expect(spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { env }).status).toBe(0);
    const dir = join(cache, "probe");
    const [entry] = readdirSync(dir).filter((f) => f.endsWith(".json"));
    // The entry holds the inputs it was written for and the probe's result (cacheDir.ts).
    const { key, value: probe } = JSON.parse(readFileSync(join(dir, entry as string), "utf8"));
    expect(probe.lsm).toBe(false);
    writeFileSync(
      join(dir, entry as string),
      JSON.stringify({ key, value: { ...probe, lsm: true, errors: {} } }),
    );
    const refused = new RawProxy(
      ["--config", "C-full", "--policy", POLICY, "--", process.execPath, FIXTURE],
      {
        cwd: work,
        env,
      },
    );
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toMatch(
      /^mcpguard run: config C-full: mcpguard-loader: loading the BPF LSM programs: /m,
    );
  });

  it("refuses a loader attached to another cgroup than the one the proxy made (the same path, remade)", async () => {
    const name = containmentName();
    const prepared = await prepareKernelLayer({ allowPartial: false, cgroup: plannedCgroupPath(name) });
    const made = createContainment({ name });
    try {
      // As if the directory had been removed and made again between the proxy's mkdir and the loader's open.
      const swapped = Object.assign(Object.create(Object.getPrototypeOf(made)), made, {
        cgroupId: (made.cgroupId as number) + 1,
      });
      await expect(
        startKernelLayer({
          config: "C-full",
          prepared,
          needs: { read: [work], write: [work], exec: [], network: [], shell: false },
          argv: [process.execPath, FIXTURE],
          env: { PATH: "/usr/bin:/bin" },
          launcherEnv: { PATH: "/usr/bin:/bin" },
          cwd: work,
          writable: () => undefined,
          containment: swapped,
          onEvent: () => {},
          onLoaderLost: () => {},
        }),
      ).rejects.toThrow(/the BPF loader attached to cgroup \d+, not to the server's/);
      await prepared.loader?.exited;
    } finally {
      prepared.abort();
      made.dispose();
    }
  });

  it("refuses to start when a capability has no backend, naming it; runs with --l3-allow-partial and records it", async () => {
    const partial = join(scratch, "bpf");
    mkdirSync(partial);
    for (const bin of ["mcpguard-exec", "mcpguard-reaper"]) {
      copyFileSync(join(BPF, bin), join(partial, bin));
      spawnSync("chmod", ["+x", join(partial, bin)]);
    }
    const env = { ...process.env, MCPGUARD_BPF_DIR: partial };
    const refused = new RawProxy(
      ["--config", "C-ebpf", "--policy", POLICY, "--", process.execPath, FIXTURE],
      { env },
    );
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toMatch(
      /config C-ebpf: needs L3 enforcement of net, which no backend provides here \(net: .*mcpguard-loader is not built/,
    );

    const s = await session("C-ebpf", ["--l3-allow-partial"], { MCPGUARD_BPF_DIR: partial });
    expect(toolText(await s.client.callTool({ name: "read", arguments: { path: "readme.txt" } }))).toBe(
      "inside",
    );
    await s.client.close();
    expect(readNdjson(s.log).find((e) => e.event === "start").l3).toEqual({
      file: "landlock",
      exec: "landlock",
      net: "none",
      unix: "landlock",
    });
  });
});
