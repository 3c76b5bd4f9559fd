/**
 * The launcher's ruleset and the loader's policy (records of NUL-terminated fields, bpf/input.h):
 * what compile() writes is read back exactly, and anything else is refused whole, in one line,
 * before a server could run with less than it was asked for.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { binaries } from "../src/binaries.ts";
import { encodeRecords, LOADER_POLICY_HEADER, RULESET_HEADER } from "../src/compile.ts";

const { launcher, loader } = binaries();
const built = existsSync(launcher) && existsSync(loader);
if (!built) console.warn(`input tests skipped: ${launcher} or ${loader} is not built (make -C bpf)`);
const root = process.getuid?.() === 0;
const CGROUP2 = readFileSync("/proc/self/mountinfo", "utf8")
  .split("\n")
  .find((l) => l.includes(" - cgroup2 "))
  ?.split(" ")[4];
if (!root || !CGROUP2) console.warn("loader policy tests skipped: they need root and a cgroup2 mount");

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-input-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run the launcher on a ruleset (from a file): its status and stderr. */
function launchWith(ruleset: string | Buffer, argv = ["/bin/true"]) {
  const file = join(scratch, `ruleset-${Math.random().toString(16).slice(2)}`);
  writeFileSync(file, ruleset);
  const r = spawnSync(launcher, ["--ruleset", file, "--", ...argv], { encoding: "utf8" });
  return { status: r.status, stderr: r.stderr };
}

const basics = [
  ["abi", "6"],
  ["fs", "execute,read_file", "/usr"],
  ["fs", "execute,read_file", "/bin"],
  ["fs", "execute,read_file", "/lib"],
  ["fs", "execute,read_file", "/lib64"],
];

describe.skipIf(!built)("the launcher's ruleset", () => {
  it("runs a command under a well-formed ruleset", () => {
    expect(launchWith(encodeRecords(RULESET_HEADER, basics))).toEqual({ status: 0, stderr: "" });
  });

  it("grants a path with '#' and a newline as it is, not the prefix before '#'", () => {
    const odd = join(scratch, "C#proj\nnext line");
    mkdirSync(join(scratch, "C"), { recursive: true });
    mkdirSync(odd, { recursive: true });
    writeFileSync(join(scratch, "C", "secret"), "secret");
    writeFileSync(join(odd, "ok"), "ok");
    const ruleset = encodeRecords(RULESET_HEADER, [...basics, ["fs", "read_file,read_dir", odd]]);
    expect(launchWith(ruleset, ["/bin/cat", join(odd, "ok")]).status).toBe(0);
    const refused = launchWith(ruleset, ["/bin/cat", join(scratch, "C", "secret")]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/Permission denied/);
  });

  it.each([
    ["the old line format", "abi 6\nfs read_file /usr\n", "not a known format"],
    ["an empty input", "", "the input is empty"],
    [
      "a record cut short",
      `${encodeRecords(RULESET_HEADER, [])}fs\0read_file\0/usr`,
      "record 2: the input ends inside a record",
    ],
    [
      "an unknown record",
      encodeRecords(RULESET_HEADER, [["bogus", "1"]]),
      'record 2: cannot read a "bogus" record of 2 fields',
    ],
    [
      "a relative path",
      encodeRecords(RULESET_HEADER, [["fs", "read_file", "usr"]]),
      "record 2: the path must be absolute",
    ],
    [
      "an unknown right",
      encodeRecords(RULESET_HEADER, [["fs", "read_all", "/usr"]]),
      'record 2: unknown access right "read_all"',
    ],
    [
      "a port out of range",
      encodeRecords(RULESET_HEADER, [["net", "connect", "70000"]]),
      'record 2: bad port "70000"',
    ],
    ["an empty record", `${encodeRecords(RULESET_HEADER, [])}\0`, "record 2: an empty record"],
    [
      "a record whose kind holds a newline (still one line)",
      encodeRecords(RULESET_HEADER, [["bo\ngus", "1"]]),
      'record 2: cannot read a "bo?gus" record of 2 fields',
    ],
  ])("refuses %s in one line, exit 126, before the command runs", (_, ruleset, why) => {
    const { status, stderr } = launchWith(ruleset, ["/bin/sh", "-c", "echo ran"]);
    expect(status).toBe(126);
    expect(stderr.split("\n")).toHaveLength(2);
    expect(stderr).toContain(why);
    expect(stderr).toMatch(/^mcpguard-exec: ruleset /);
  });
});

describe.skipIf(!built || !root || !CGROUP2)("the loader's policy", () => {
  const cgroup = join(CGROUP2 ?? "/", `mcpguard-input-${process.pid}`);
  afterAll(async () => {
    // A killed process leaves its cgroup a moment after the kill.
    for (let i = 0; existsSync(cgroup) && i < 100; i++) {
      try {
        rmdirSync(cgroup);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });

  it.each([
    ["the old line format", "net allow4 127.0.0.1 80\n", "not a known format"],
    [
      "a bad address",
      encodeRecords(LOADER_POLICY_HEADER, [["net", "allow4", "1.2.3", "80"]]),
      'record 2: bad IPv4 address "1.2.3"',
    ],
    [
      "a record of the wrong size",
      encodeRecords(LOADER_POLICY_HEADER, [["net", "allow4", "127.0.0.1"]]),
      'record 2: cannot read a "net" record of 3 fields',
    ],
    [
      "bad access letters",
      encodeRecords(LOADER_POLICY_HEADER, [["fs", "rq", "/usr"]]),
      'record 2: bad access "rq"',
    ],
  ])("refuses %s in one line, exit 1", (_, policy, why) => {
    if (!existsSync(cgroup)) mkdirSync(cgroup);
    const file = join(scratch, `policy-${Math.random().toString(16).slice(2)}`);
    writeFileSync(file, policy);
    const r = spawnSync(loader, ["--cgroup", cgroup, "--policy", file], { encoding: "utf8", input: "" });
    expect(r.status).toBe(1);
    expect(r.stderr.split("\n")).toHaveLength(2);
    expect(r.stderr).toMatch(/^mcpguard-loader: policy /);
    expect(r.stderr).toContain(why);
    // It had no policy, so the cgroup was nobody's but the proxy's that made it ahead: removed,
    // being empty.
    expect(existsSync(cgroup)).toBe(false);
  });

  it("ended without a policy (the proxy gone), it leaves a cgroup that holds a process to the reaper", () => {
    if (!existsSync(cgroup)) mkdirSync(cgroup);
    const held = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      writeFileSync(join(cgroup, "cgroup.procs"), String(held.pid));
      const r = spawnSync(loader, ["--cgroup", cgroup, "--policy", "/dev/null"], {
        encoding: "utf8",
        input: "",
      });
      expect(r.status).toBe(1);
      expect(existsSync(cgroup)).toBe(true);
    } finally {
      held.kill("SIGKILL");
    }
  });
});
