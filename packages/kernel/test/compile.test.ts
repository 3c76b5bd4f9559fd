import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile, encodeRecords, interpreterOf, type KernelNeeds, which } from "../src/compile.ts";
import { capabilityBackends, hardeningBackends, type ProbeResult } from "../src/probe.ts";

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
/** The records of the kernel-side format (bpf/input.h), each as its fields joined by spaces. */
const records = (encoded: string) =>
  encoded
    .split("\0\0")
    .filter(Boolean)
    .map((r) => r.split("\0").join(" "));
const rules = (ruleset: string) => records(ruleset).filter((l) => l.startsWith("fs "));
const ruleFor = (ruleset: string, path: string) => rules(ruleset).find((l) => l.endsWith(` ${path}`));

describe("compile", () => {
  it("grants the interpreter, its ELF loader and its script, and nothing of /proc, /etc or HOME", async () => {
    const { ruleset } = await compile(none, [process.execPath, script], env);
    expect(ruleFor(ruleset, node)).toBe(`fs execute,read_file ${node}`);
    const ld = interpreterOf(node);
    expect(ld).toMatch(/ld-linux/);
    expect(ruleFor(ruleset, realpathSync(ld as string))).toMatch(/^fs execute,read_file /);
    expect(ruleFor(ruleset, root)).toBe(`fs read_dir,read_file ${root}`);
    expect(records(ruleset).slice(0, 4)).toEqual([
      "mcpguard-ruleset 1",
      "abi 6",
      "scope signal",
      "scope abstract-unix",
    ]);
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
    expect(records(ruleset).join("\n")).toContain(
      "handle net\nnet connect 8443\nnet connect 9000\nnet connect 443\n",
    );
    expect(records(loaderPolicy)).toContain("net allow4 127.0.0.1 8443");
    expect(records(loaderPolicy)).toContain("net allow6 ::1 9000");
    expect(notes).toContainEqual(expect.stringMatching(/nowhere\.invalid did not resolve/));
    const open = await compile({ ...none, network: ["127.0.0.1"] }, [process.execPath, script], env);
    expect(records(open.ruleset)).not.toContain("handle net");
    expect(open.notes).toContainEqual(expect.stringMatching(/without a port/));
  });

  it("passes a path with '#', a newline, spaces and non-ASCII letters whole, in one field", async () => {
    const odd = join(root, "C#proj\nwith  spaces é", "ws");
    mkdirSync(odd, { recursive: true });
    const { ruleset, loaderPolicy } = await compile(
      { ...none, read: [odd] },
      [process.execPath, script],
      env,
    );
    expect(ruleset).toContain(`\0fs\0read_dir,read_file\0${odd}\0\0`);
    expect(loaderPolicy).toContain(`\0fs\0r\0${odd}\0\0`);
    expect(ruleset.startsWith("mcpguard-ruleset\x001\0\0")).toBe(true);
    expect(loaderPolicy.startsWith("mcpguard-policy\x001\0\0")).toBe(true);
  });

  it("refuses to encode a field that is empty or holds NUL", () => {
    expect(() => encodeRecords(["h", "1"], [["fs", "read_file", "/a\0b"]])).toThrow(/holding NUL/);
    expect(() => encodeRecords(["h", "1"], [["fs", "", "/a"]])).toThrow(/empty/);
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
    seccomp: true,
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

  it("name seccomp for memfd exec and socket families, or nothing when the filter does not work", () => {
    expect(Object.values(hardeningBackends(probe({}))).map((b) => b.backend)).toEqual(["seccomp", "seccomp"]);
    const none = hardeningBackends(
      probe({ seccomp: false, errors: { seccomp: "the filter cannot be installed" } }),
    );
    expect(none["memfd-exec"]).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/cannot be installed/),
    });
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
