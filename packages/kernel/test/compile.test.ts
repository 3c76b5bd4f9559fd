import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile, interpreterOf, type KernelNeeds, which } from "../src/compile.ts";
import { capabilityBackends, type ProbeResult } from "../src/probe.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-compile-")));
const ws = join(root, "workspace");
mkdirSync(join(ws, "data"), { recursive: true });
writeFileSync(join(ws, "app.db"), "");
const script = join(root, "server.mjs");
writeFileSync(script, "");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const node = realpathSync(process.execPath);
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const none: KernelNeeds = { read: [], write: [], exec: [], network: [], shell: false };
const rules = (ruleset: string) => ruleset.split("\n").filter((l) => l.startsWith("fs "));
const ruleFor = (ruleset: string, path: string) => rules(ruleset).find((l) => l.endsWith(` ${path}`));

describe("compile", () => {
  it("grants the interpreter, its ELF loader and its script, and nothing of /proc, /etc or HOME", async () => {
    const { ruleset } = await compile(none, [process.execPath, script], env);
    expect(ruleFor(ruleset, node)).toBe(`fs execute,read_file ${node}`);
    const ld = interpreterOf(node);
    expect(ld).toMatch(/ld-linux/);
    expect(ruleFor(ruleset, realpathSync(ld as string))).toMatch(/^fs execute,read_file /);
    expect(ruleFor(ruleset, root)).toBe(`fs read_dir,read_file ${root}`);
    expect(ruleset).toMatch(/^abi 6\nscope signal\nscope abstract-unix\n/);
    for (const line of rules(ruleset)) {
      const path = line.split(" ").slice(2).join(" ");
      expect(path, line).not.toMatch(/^\/(proc|sys|root|home)(\/|$)|^\/etc$|^\/etc\/(passwd|shadow)/);
    }
  });

  it("grants reads, writes (a missing file through its directory) and programs from the needs", async () => {
    const needs: KernelNeeds = {
      read: [join(ws, "data")],
      write: [join(ws, "app.db"), join(ws, "app.db-journal")],
      exec: ["git log", "sh"],
      network: [],
      shell: true,
    };
    const { ruleset, notes } = await compile(needs, [process.execPath, script], env);
    expect(ruleFor(ruleset, join(ws, "data"))).toBe(`fs read_dir,read_file ${join(ws, "data")}`);
    expect(ruleFor(ruleset, join(ws, "app.db"))).toBe(
      `fs read_file,truncate,write_file ${join(ws, "app.db")}`,
    );
    expect(ruleFor(ruleset, ws)).toMatch(/make_reg/);
    expect(ruleFor(ruleset, ws)).not.toMatch(/execute/);
    expect(notes).toContainEqual(expect.stringMatching(/app\.db-journal does not exist yet/));
    const git = which("git", env.PATH);
    expect(git).toBeDefined();
    expect(ruleFor(ruleset, git as string)).toBe(`fs execute,read_file ${git}`);
    expect(ruleFor(ruleset, which("sh", env.PATH) as string)).toMatch(/^fs execute,read_file /);
  });

  it("limits TCP ports with Landlock and addresses with the loader", async () => {
    const needs = { ...none, network: ["127.0.0.1:8443", "[::1]:9000", "nowhere.invalid:443"] };
    const { ruleset, loaderPolicy, notes } = await compile(needs, [process.execPath, script], env);
    expect(ruleset).toContain("handle net\nnet connect 8443\nnet connect 9000\nnet connect 443\n");
    expect(loaderPolicy).toContain("net allow4 127.0.0.1 8443\n");
    expect(loaderPolicy).toContain("net allow6 ::1 9000\n");
    expect(notes).toContainEqual(expect.stringMatching(/nowhere\.invalid did not resolve/));
    const open = await compile({ ...none, network: ["127.0.0.1"] }, [process.execPath, script], env);
    expect(open.ruleset).not.toContain("handle net");
    expect(open.notes).toContainEqual(expect.stringMatching(/without a port/));
  });

  it("refuses a server program it cannot find", async () => {
    await expect(compile(none, ["no-such-program-anywhere"], env)).rejects.toThrow(
      /cannot find the server's program/,
    );
  });
});

describe("capability backends", () => {
  const probe = (p: Partial<ProbeResult>): ProbeResult => ({
    root: true,
    landlockAbi: 7,
    cgroupBpf: true,
    tpBtf: true,
    lsm: false,
    errors: {},
    ...p,
  });

  it("pick Landlock and cgroup BPF where BPF LSM is refused, BPF LSM where it loads", () => {
    expect(Object.values(capabilityBackends(probe({}))).map((b) => b.backend)).toEqual([
      "landlock",
      "landlock",
      "cgroup-bpf",
      "landlock",
    ]);
    expect(Object.values(capabilityBackends(probe({ lsm: true }))).map((b) => b.backend)).toEqual([
      "bpf-lsm",
      "bpf-lsm",
      "bpf-lsm",
      "landlock",
    ]);
  });

  it("leave a capability without backend when nothing enforces it", () => {
    const b = capabilityBackends(
      probe({ cgroupBpf: false, landlockAbi: 3, errors: { cgroupBpf: "Operation not permitted" } }),
    );
    expect(b.net).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/cgroup BPF did not load: Operation not permitted/),
    });
    expect(b.file).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/Landlock ABI 3 \(ABI 6 needed\)/),
    });
  });
});
