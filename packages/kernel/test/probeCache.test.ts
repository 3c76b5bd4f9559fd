/**
 * The probe's cache, with stand-in launcher and loader scripts (their `--probe` answers are fixed,
 * and each run is counted): entries per checkout and build, read back only through the schema.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { binaries } from "../src/binaries.ts";
import { probeBackends } from "../src/probe.ts";
import { probeCacheKey } from "../src/probeCache.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-probe-cache-")));
const cache = join(root, "cache");
const hasBootId = existsSync("/proc/sys/kernel/random/boot_id");
if (!hasBootId) console.warn("probe cache tests skipped: no /proc/sys/kernel/random/boot_id, so no cache");

afterEach(() => {
  delete process.env.MCPGUARD_BPF_DIR;
  delete process.env.MCPGUARD_CACHE_DIR;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A checkout's bpf/.output with a launcher that answers `landlockAbi` and counts its runs. */
function checkout(name: string, landlockAbi: number): { dir: string; runs: () => number } {
  const dir = join(root, name, "bpf", ".output");
  mkdirSync(dir, { recursive: true });
  const count = join(root, name, "runs");
  const script = (answer: string) => `#!/bin/sh\necho run >> '${count}'\necho '${answer}'\n`;
  writeFileSync(join(dir, "mcpguard-exec"), script(JSON.stringify({ landlockAbi })));
  writeFileSync(join(dir, "mcpguard-loader"), script('{"cgroupBpf":true,"tpBtf":false,"lsm":false}'));
  chmodSync(join(dir, "mcpguard-exec"), 0o755);
  chmodSync(join(dir, "mcpguard-loader"), 0o755);
  const runs = () => (existsSync(count) ? readFileSync(count, "utf8").split("\n").length - 1 : 0);
  return { dir, runs };
}

function probeIn(dir: string) {
  process.env.MCPGUARD_BPF_DIR = dir;
  process.env.MCPGUARD_CACHE_DIR = cache;
  return probeBackends();
}

describe.skipIf(!hasBootId)("probe cache", () => {
  it("gives two checkouts, and two builds of one, different keys", () => {
    const a = checkout("key-a", 6);
    const b = checkout("key-b", 6);
    const key = (dir: string) => {
      process.env.MCPGUARD_BPF_DIR = dir;
      return probeCacheKey(binaries())?.text;
    };
    const first = key(a.dir);
    expect(first).toContain(join(a.dir, "mcpguard-loader"));
    expect(key(a.dir)).toBe(first);
    expect(key(b.dir)).not.toBe(first);
    writeFileSync(join(a.dir, "mcpguard-loader"), "#!/bin/sh\necho '{}'\n# rebuilt\n");
    expect(key(a.dir)).not.toBe(first);
  });

  it("keeps one entry per checkout: neither overwrites the other", async () => {
    const a = checkout("entry-a", 6);
    const b = checkout("entry-b", 4);
    expect((await probeIn(a.dir)).landlockAbi).toBe(6);
    expect((await probeIn(b.dir)).landlockAbi).toBe(4);
    expect(a.runs()).toBe(2);
    expect((await probeIn(a.dir)).landlockAbi).toBe(6);
    expect((await probeIn(b.dir)).landlockAbi).toBe(4);
    expect([a.runs(), b.runs()]).toEqual([2, 2]);
    expect((await probeBackends({ fresh: true })).landlockAbi).toBe(4);
    expect(b.runs()).toBe(4);
  });

  it("probes again when the entry does not parse as a probe result", async () => {
    const a = checkout("invalid", 6);
    await probeIn(a.dir);
    const entries = readdirSync(join(cache, "probe")).map((f) => join(cache, "probe", f));
    for (const entry of entries) {
      const value = JSON.parse(readFileSync(entry, "utf8"));
      writeFileSync(entry, JSON.stringify({ ...value, lsm: "yes", landlockAbi: 99 }));
    }
    expect((await probeIn(a.dir)).landlockAbi).toBe(6);
    expect(a.runs()).toBe(4);
  });
});
