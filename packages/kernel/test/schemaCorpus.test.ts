/**
 * The kernel package's schemas, through the functions that use them, give for every input of a
 * fixed corpus what they gave when they were written with zod's classic API (`import { z } from
 * "zod"`): a probe cache entry read back (or not), the probe's answer from what the launcher and
 * the loader print (the parse error's message included, which is zod's JSON of the issues), and
 * what npx runs for a package.json's bin (or why not). test/fixtures/classic-zod.jsonl was recorded
 * from the classic schemas, before they moved to zod/mini; it is not re-recorded from the schemas
 * it checks. A field the probe's answer gained since (`unixBpf`) is added to each cache entry read
 * and taken out of each answer, so the comparison covers the fields the corpus knew.
 *
 * The corpus's form and the comparison: ../../protocol/test/classicZod.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cacheKey } from "@mcpguard/protocol";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { corpus } from "../../protocol/test/classicZod.ts";
import { resolveLaunch } from "../src/launchers.ts";
import { probeBackends } from "../src/probe.ts";
import { readProbeCache, writeProbeCache } from "../src/probeCache.ts";

const CASES = corpus(new URL("fixtures/classic-zod.jsonl", import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-kernel-corpus-")));
let n = 0;
afterEach(() => {
  delete process.env.MCPGUARD_BPF_DIR;
  delete process.env.MCPGUARD_CACHE_DIR;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Fields of the probe's answer added since the corpus was recorded, as a cache entry would hold them. */
const ADDED = { unixBpf: false };
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
/** An answer without the added fields: the corpus recorded none. */
const withoutAdded = (v: unknown): unknown =>
  isObject(v) ? Object.fromEntries(Object.entries(v).filter(([k]) => !(k in ADDED))) : v;

/** `value` as JSON with every occurrence of `dir` written as `name`. */
const scrubbed = (value: unknown, dir: string, name: string): unknown =>
  JSON.parse(JSON.stringify(value).replaceAll(dir, name));

/** Cases whose result differs from the one recorded, at most three. */
async function differing(name: string, run: (input: unknown) => Promise<unknown>) {
  const cases = CASES.filter((c) => c.schema === name);
  expect(cases.length).toBeGreaterThan(10);
  const out = [];
  for (const { input, result } of cases) {
    const now = await run(input);
    if (JSON.stringify(now) !== JSON.stringify(result)) out.push({ input, recorded: result, now });
  }
  return out.slice(0, 3);
}

/** The probe's answer when the launcher prints `launcher` and the loader `loader` (as JSON). */
async function probeWith(launcher: unknown, loader: unknown): Promise<unknown> {
  const dir = join(root, `bpf${n++}`);
  mkdirSync(dir, { recursive: true });
  const script = (answer: unknown) =>
    `#!/bin/sh\nprintf '%s\\n' '${JSON.stringify(answer).replaceAll("'", "'\\''")}'\n`;
  writeFileSync(join(dir, "mcpguard-exec"), script(launcher));
  writeFileSync(join(dir, "mcpguard-loader"), script(loader));
  chmodSync(join(dir, "mcpguard-exec"), 0o755);
  chmodSync(join(dir, "mcpguard-loader"), 0o755);
  process.env.MCPGUARD_BPF_DIR = dir;
  process.env.MCPGUARD_CACHE_DIR = join(root, "cache");
  const { root: _caller, ...answer } = await probeBackends({ fresh: true });
  return scrubbed(withoutAdded(answer), dir, "<bpf>");
}

const LAUNCHER = CASES.find((c) => c.schema === "LauncherProbe")?.input;
const LOADER = CASES.find((c) => c.schema === "LoaderProbe")?.input;

describe("the kernel package's schemas against what classic zod gave", () => {
  it("reads a probe cache entry back only where the probe result's schema took it", async () => {
    process.env.MCPGUARD_CACHE_DIR = join(root, "cache");
    const readBack = async (input: unknown) => {
      const key = cacheKey("corpus", String(n++));
      writeProbeCache(key, (isObject(input) ? { ...input, ...ADDED } : input) as never);
      const read = withoutAdded(readProbeCache(key));
      // A key whose value is undefined kept visible, as recorded.
      return read === undefined
        ? null
        : JSON.parse(JSON.stringify(read, (_k, v) => (v === undefined ? { $undefined: true } : v)));
    };
    expect(await differing("ProbeResult", readBack)).toEqual([]);
  });

  it("reads what the launcher's probe prints", async () => {
    expect(await differing("LauncherProbe", (input) => probeWith(input, LOADER))).toEqual([]);
  });

  it("reads what the loader's probe prints", async () => {
    expect(await differing("LoaderProbe", (input) => probeWith(LAUNCHER, input))).toEqual([]);
  });

  it("reads the bin of the package npx installs", async () => {
    const launch = async (manifest: unknown) => {
      const dir = join(root, `npx${n++}`);
      const bin = join(dir, "fakebin");
      const modules = join(dir, "node_modules");
      mkdirSync(join(modules, ".bin"), { recursive: true });
      mkdirSync(join(modules, "pkg"), { recursive: true });
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, "npx"), `#!/bin/sh\necho '${join(modules, ".bin")}'\n`, { mode: 0o755 });
      for (const b of ["pkg", "other", "a", "b"])
        writeFileSync(join(modules, ".bin", b), "", { mode: 0o755 });
      writeFileSync(join(modules, "pkg", "package.json"), JSON.stringify(manifest));
      try {
        const { argv, via } = await resolveLaunch(["npx", "pkg", "--flag"], {
          env: { PATH: `${bin}:/usr/bin:/bin` },
          cwd: dir,
        });
        return scrubbed({ argv, via }, dir, "<dir>");
      } catch (error) {
        return scrubbed({ error: `${(error as Error).name}: ${(error as Error).message}` }, dir, "<dir>");
      }
    };
    expect(await differing("BinManifest", launch)).toEqual([]);
  });
});
