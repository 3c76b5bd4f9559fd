/**
 * The packed package (`npm --prefix packages/proxy run pack:bin`) as a user gets it: the tarball
 * installed with `npm i -g --prefix`, offline and with an empty npm cache (so it must carry or
 * bundle all it needs), and run from `/`, with no MCPGUARD_BPF_DIR and nothing of the checkout on
 * its way: `doctor` names the package's own kernel layer, and `run --config C-full` confines a
 * server with it. A copy of the installed package that says it was packed for another machine
 * refuses L3 in one line.
 * MCPGUARD_PACKED_TARBALL=<file.tgz> tests that tarball instead of packing one.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { machine } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, readNdjson, toolText } from "./helpers.ts";

const PROXY = join(import.meta.dirname, "..");
const l3 = spawnSync(process.execPath, [MCPGUARD, "doctor"], { encoding: "utf8" }).status === 0;
if (!l3)
  console.warn("the installed package's C-full test is skipped: mcpguard doctor says L3 cannot run here");

const { scratch, work } = makeWorkspace("mcpguard-packed-");
const prefix = join(scratch, "prefix");
const installed = join(prefix, "lib", "node_modules", "mcpguard");
const bin = join(prefix, "bin", "mcpguard");
// The environment of a user's shell: no override of where the kernel layer is.
const env = { ...process.env } as Record<string, string>;
delete env.MCPGUARD_BPF_DIR;
let installSeconds = 0;

beforeAll(() => {
  let tarball = process.env.MCPGUARD_PACKED_TARBALL;
  if (!tarball) {
    const pack = join(scratch, "package");
    execFileSync(process.execPath, [join(PROXY, "bundle.mjs"), "--pack", pack], { stdio: "pipe" });
    execFileSync("npm", ["pack", pack, "--pack-destination", scratch], { stdio: "pipe", cwd: scratch });
    tarball = join(scratch, "mcpguard-0.1.0.tgz");
  }
  const started = Date.now();
  execFileSync(
    "npm",
    [
      "i",
      "-g",
      "--prefix",
      prefix,
      "--offline",
      "--cache",
      join(scratch, "npm-cache"),
      "--no-audit",
      "--no-fund",
    ].concat(tarball),
    { stdio: "pipe", cwd: "/" },
  );
  installSeconds = (Date.now() - started) / 1000;
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the installed package", () => {
  it("carries its kernel layer for this machine, statically linked, and depends on nothing", () => {
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(pkg.dependencies).toBeUndefined();
    const manifest = JSON.parse(readFileSync(join(installed, "bpf", "kernel-layer.json"), "utf8"));
    const build = manifest.builds[machine()];
    expect(build).toMatchObject({ dir: machine(), machine: machine() });
    expect(Object.keys(build.files).sort()).toEqual(["mcpguard-exec", "mcpguard-loader", "mcpguard-reaper"]);
    for (const [name, file] of Object.entries(build.files as Record<string, { linked: string }>)) {
      expect(existsSync(join(installed, "bpf", machine(), name))).toBe(true);
      expect(file.linked).toBe("static");
    }
    console.log(`npm i -g of the tarball took ${installSeconds.toFixed(1)} s`);
  });

  it.skipIf(!l3)("doctor, run from /, uses the package's own launcher, loader and reaper", () => {
    const r = spawnSync(process.execPath, [bin, "doctor", "--json"], { encoding: "utf8", cwd: "/", env });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const dir = join(installed, "bpf", machine());
    expect(report.kernelLayer).toMatchObject({ source: "package", dir });
    expect(report.kernelLayer.files).toEqual(
      ["launcher", "loader", "reaper"].map((role, i) => ({
        role,
        path: join(dir, ["mcpguard-exec", "mcpguard-loader", "mcpguard-reaper"][i] as string),
        state: "as packed, sha256 checked",
      })),
    );
    expect(report.containment.reaper).toBe(join(dir, "mcpguard-reaper"));
    expect(report.l3Ready).toBe(true);
    const text = spawnSync(process.execPath, [bin, "doctor"], { encoding: "utf8", cwd: "/", env });
    expect(text.stdout).toContain(
      `kernel layer     this package's build, ${dir} (packed for ${machine()} on Linux`,
    );
    expect(text.stdout).toContain("L3 configs (C-ebpf, C-full, C-AB+ebpf) can run here.");
  });

  it.skipIf(!l3)(
    "runs a server under C-full from /: a read inside the grant works, one outside fails in the kernel",
    async () => {
      // The fixture server on its own, outside the checkout.
      const server = join(scratch, "server", "server.mjs");
      mkdirSync(join(scratch, "server"));
      copyFileSync(FIXTURE, server);
      const policy = join(scratch, "policy.json");
      writeFileSync(
        policy,
        JSON.stringify({
          version: 1,
          server: "packed-fixture",
          tools: {
            read: { args: { path: "path.read" }, read: [`${work}/**`] },
            // A program the server runs, whose words L1 does not read: only the kernel stands in its way.
            run: { args: { argv: "scalar" }, exec: [process.execPath] },
          },
        }),
      );
      const log = join(scratch, "audit.ndjson");
      const args = [bin, "run", "--config", "C-full", "--policy", policy, "--audit-log", log, "--"];
      const s = await connect([...args, process.execPath, server], env, "/");
      const inside = join(work, "readme.txt");
      const outside = join(scratch, "outside.txt");
      expect(toolText(await s.client.callTool({ name: "read", arguments: { path: inside } }))).toBe("inside");
      const nodeRead = async (path: string) => {
        const script =
          'try { require("fs").readFileSync(process.argv[1]); console.log("ok") } catch (e) { console.log(e.code) }';
        const result = await s.client.callTool({
          name: "run",
          arguments: { argv: [process.execPath, "-e", script, path] },
        });
        return JSON.parse(toolText(result)).stdout.trim();
      };
      expect(await nodeRead(inside)).toBe("ok");
      expect(await nodeRead(outside)).toBe("EACCES");
      // The server's own read outside does not even reach it: L1.
      expect(toolText(await s.client.callTool({ name: "read", arguments: { path: outside } }))).toMatch(
        /^Blocked by mcpguard \(L1\)/,
      );
      await s.client.close();
      const events = readNdjson(log);
      expect(events.find((e) => e.event === "start")).toMatchObject({
        config: "C-full",
        l3: { file: "landlock", exec: "landlock", net: "cgroup-bpf", unix: "landlock+cgroup-bpf" },
      });
      expect(events).toContainEqual(
        expect.objectContaining({ type: "kernel", event: "denied", backend: "landlock", path: outside }),
      );
    },
  );

  it("copied and said to be packed for another machine, refuses L3 in one line and runs nothing of it", () => {
    const other = machine() === "aarch64" ? "x86_64" : "aarch64";
    const copy = join(scratch, "other", "mcpguard");
    cpSync(installed, copy, { recursive: true });
    const manifestFile = join(copy, "bpf", "kernel-layer.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    const build = { ...manifest.builds[machine()], dir: other, machine: other };
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, builds: { [other]: build } }));
    renameSync(join(copy, "bpf", machine()), join(copy, "bpf", other));
    const copyBin = join(copy, "bin", "mcpguard.js");
    const why =
      `this mcpguard package carries its kernel layer for ${other} only, and this machine is ${machine()}: ` +
      `pack it on ${machine()} (npm --prefix packages/proxy run pack:bin), or build bpf/ here (make -C bpf) ` +
      "and set MCPGUARD_BPF_DIR to its .output folder";

    const doctor = spawnSync(process.execPath, [copyBin, "doctor"], { encoding: "utf8", cwd: "/", env });
    expect(doctor.status).toBe(1);
    expect(doctor.stdout.trimEnd().split("\n").at(-1)).toBe(`L3 configs are refused here: ${why}.`);
    expect(doctor.stdout.split(why)).toHaveLength(2);
    expect(doctor.stdout).toContain(`kernel layer     none for this machine in ${join(copy, "bpf")}\n`);

    const run = spawnSync(
      process.execPath,
      [
        copyBin,
        "run",
        "--config",
        "C-full",
        "--policy",
        join(PROXY, "test", "fixtures", "policy.json"),
        "--",
      ].concat(process.execPath, FIXTURE),
      { encoding: "utf8", cwd: "/", env, input: "" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`mcpguard run: config C-full: needs L3, but ${why}\n`);
  });
});
