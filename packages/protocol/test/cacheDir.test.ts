import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import { cacheKey, readCache, writeCache } from "../src/cacheDir.ts";

const Entry = z.strictObject({ read: z.array(z.string().startsWith("/home/")) });
const KEY = cacheKey("test", "inputs");
const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-cache-")));
const isRoot = process.getuid?.() === 0;
let n = 0;
let stderr: MockInstance;

/** A fresh path for MCPGUARD_CACHE_DIR, under a private directory of its own. */
function freshDir(): string {
  const parent = join(root, `case-${n++}`);
  mkdirSync(parent, { mode: 0o700 });
  return join(parent, "cache");
}

/** A directory that holds a valid entry under KEY, in the layout writeCache uses. */
function planted(dir: string): string {
  mkdirSync(join(dir, "ns"), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(dir, "ns", `${KEY.name}.json`),
    JSON.stringify({ key: KEY.text, value: { read: ["/home/me"] } }),
    { mode: 0o600 },
  );
  return dir;
}

const warnings = () => stderr.mock.calls.map((c) => String(c[0]));

beforeEach(() => {
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(() => {
  stderr.mockRestore();
  delete process.env.MCPGUARD_CACHE_DIR;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Whether the cache at `dir` is refused: a planted entry unread, nothing written, one line said. */
function expectRefused(dir: string, reason: RegExp): void {
  process.env.MCPGUARD_CACHE_DIR = dir;
  expect(readCache("ns", KEY, Entry)).toBeUndefined();
  writeCache("ns", cacheKey("other"), { read: [] });
  expect(existsSync(join(dir, "ns", `${cacheKey("other").name}.json`))).toBe(false);
  expect(readCache("ns", KEY, Entry)).toBeUndefined();
  const lines = warnings();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mcpguard: not caching: [^\n]+\n$/);
  expect(lines[0]).toMatch(reason);
}

describe("cache entries", () => {
  it("round-trips an entry, in directories of mode 0700 and a file of mode 0600, no temp left", () => {
    const dir = freshDir();
    process.env.MCPGUARD_CACHE_DIR = dir;
    writeCache("ns", KEY, { read: ["/home/me"] });
    expect(readCache("ns", KEY, Entry)).toEqual({ read: ["/home/me"] });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "ns")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "ns", `${KEY.name}.json`)).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, "ns"))).toEqual([`${KEY.name}.json`]);
    expect(warnings()).toEqual([]);
  });

  it("parses every entry with its schema: one that fails it is a miss", () => {
    const dir = freshDir();
    process.env.MCPGUARD_CACHE_DIR = dir;
    writeCache("ns", KEY, { read: ["/"] });
    expect(readCache("ns", KEY, Entry)).toBeUndefined();
    writeFileSync(join(dir, "ns", `${KEY.name}.json`), "{not json");
    expect(readCache("ns", KEY, Entry)).toBeUndefined();
  });

  it("keys entries by all of their inputs", () => {
    expect(cacheKey("a", "b")).toEqual(cacheKey("a", "b"));
    expect(cacheKey("a", "b").name).not.toBe(cacheKey("ab").name);
    expect(cacheKey("a", "b").name).not.toBe(cacheKey("b", "a").name);
    // FNV-1a 64 of the inputs' JSON text, "[]" here.
    expect(cacheKey().name).toBe("09612b07b5ecb5a5");
    expect(() => readCache("ns", { text: "[]", name: "../../etc/passwd" }, Entry)).toThrow(/cacheKey/);
  });

  it("reads an entry only for the inputs it was written for, even where two names collide", () => {
    const dir = freshDir();
    process.env.MCPGUARD_CACHE_DIR = dir;
    // Another key's entry at this key's name: what a collision of names leaves there.
    const other = { text: cacheKey("other").text, name: KEY.name };
    writeCache("ns", other, { read: ["/home/other"] });
    expect(readCache("ns", other, Entry)).toEqual({ read: ["/home/other"] });
    expect(readCache("ns", KEY, Entry)).toBeUndefined();
    writeCache("ns", KEY, { read: ["/home/me"] });
    expect(readCache("ns", KEY, Entry)).toEqual({ read: ["/home/me"] });
    expect(readCache("ns", other, Entry)).toBeUndefined();
    // An entry without the inputs it was written for (this format's predecessor) is a miss.
    writeFileSync(join(dir, "ns", `${KEY.name}.json`), JSON.stringify({ read: ["/home/me"] }));
    expect(readCache("ns", KEY, Entry)).toBeUndefined();
  });

  it("does not follow an entry that is a symlink", () => {
    const dir = freshDir();
    process.env.MCPGUARD_CACHE_DIR = dir;
    writeCache("ns", cacheKey("real"), { read: ["/home/me"] });
    symlinkSync(join(dir, "ns", `${cacheKey("real").name}.json`), join(dir, "ns", `${KEY.name}.json`));
    expect(readCache("ns", KEY, Entry)).toBeUndefined();
  });
});

describe("cache directories", () => {
  it("refuses a world-writable cache directory", () => {
    const dir = planted(freshDir());
    chmodSync(dir, 0o777);
    expectRefused(dir, /writable by group or others \(mode 777\)/);
  });

  it("refuses a group-writable namespace directory", () => {
    const dir = planted(freshDir());
    chmodSync(join(dir, "ns"), 0o770);
    expectRefused(dir, /\/ns is writable by group or others/);
  });

  it("refuses a cache directory that another user owns", (ctx) => {
    if (!isRoot) {
      console.warn("skipped: making a directory another user owns needs root");
      ctx.skip();
    }
    const dir = planted(freshDir());
    chownSync(dir, 65534, 65534);
    expectRefused(dir, /is owned by uid 65534, not 0/);
  });

  it("refuses a cache directory, or a namespace in it, that is a symlink", () => {
    const real = planted(freshDir());
    const link = join(root, `link-${n++}`);
    symlinkSync(real, link);
    expectRefused(link, /is a symlink/);

    stderr.mockClear();
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    symlinkSync(join(real, "ns"), join(dir, "ns"));
    expectRefused(dir, /\/ns is a symlink/);
  });

  it("refuses a cache under a directory others may write that is not sticky", () => {
    const open = join(root, `open-${n++}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    expectRefused(planted(join(open, "cache")), /above the cache, is writable by group or others/);
  });

  it("refuses a relative MCPGUARD_CACHE_DIR, or /", () => {
    expectRefused("relative/cache", /not an absolute path/);
    stderr.mockClear();
    expectRefused("/", /not an absolute path below \//);
  });
});
