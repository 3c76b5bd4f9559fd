/**
 * The built CLI: bin/mcpguard.js runs dist/mcpguard.bundle.cjs from the V8 code cache the build
 * wrote (bundle.mjs, prime.cjs). V8 takes the cache; a damaged one is rejected and the CLI still
 * works, compiling from source; the lookups relative to a module still find their files.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, proxied } from "./helpers.ts";

const require = createRequire(import.meta.url);
const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const hash = () =>
  /"mcpguard-([0-9a-f]{16})"/.exec(readFileSync(join(DIST, "mcpguard.cjs"), "utf8"))?.[1] as string;

/** In a child started as the bin starts it: whether V8 rejected the cache of the bundle in `dist`. */
function rejected(dist: string): boolean {
  return rejectedIn(dist, hash());
}

function rejectedIn(
  dist: string,
  bundleHash = /"mcpguard-([0-9a-f]{16})"/.exec(
    readFileSync(join(dist, "mcpguard.cjs"), "utf8"),
  )?.[1] as string,
  cache = `mcpguard-${bundleHash}`,
): boolean {
  const script = `
    const loader = require(${JSON.stringify(join(dist, "loader.cjs"))});
    const { readFileSync } = require("node:fs");
    const compiled = loader.compile(${JSON.stringify(dist)}, ${JSON.stringify(`mcpguard-${bundleHash}.bundle.cjs`)}, readFileSync(loader.cachePath(${JSON.stringify(dist)}, ${JSON.stringify(cache)})));
    process.stdout.write(String(compiled.script.cachedDataRejected));`;
  return execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }) === "true";
}

const { scratch, work } = makeWorkspace("mcpguard-bundle-");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the bundled CLI", () => {
  it("has code caches for this Node that V8 accepts, C0's a part of the full one", () => {
    const loader = require(join(DIST, "loader.cjs")) as { cachePath(dir: string, name: string): string };
    const full = loader.cachePath(DIST, `mcpguard-${hash()}`);
    const c0 = loader.cachePath(DIST, `mcpguard-${hash()}-c0`);
    expect(existsSync(full)).toBe(true);
    expect(rejected(DIST)).toBe(false);
    expect(rejectedIn(DIST, hash(), `mcpguard-${hash()}-c0`)).toBe(false);
    // C0 runs none of the layers' code: its cache holds less (about half, measured).
    expect(statSync(c0).size).toBeLessThan(statSync(full).size * 0.75);
  });

  it("leaves the exports of a module it loads lazily to the module's initializer", () => {
    // zod/mini's iso namespace among them (z.iso.datetime, for audit records): defined when an
    // audit command loads, not at every start.
    const bundle = readFileSync(join(DIST, `mcpguard-${hash()}.bundle.cjs`), "utf8");
    const zodIso = bundle.indexOf("__export(iso_exports");
    expect(zodIso).toBeGreaterThan(-1);
    expect(bundle.lastIndexOf("= __esm({", zodIso)).toBeGreaterThan(bundle.lastIndexOf("\n// ", zodIso));
  });

  it("answers --version through the bin, from the package's package.json", () => {
    const out = execFileSync(process.execPath, [MCPGUARD, "--version"], { encoding: "utf8", cwd: scratch });
    const pkg = JSON.parse(readFileSync(join(DIST, "..", "package.json"), "utf8")) as { version: string };
    expect(out).toContain(`mcpguard ${pkg.version}`);
  });

  it("runs a server through the bin, C0 and C-app", async () => {
    const policy = join(DIST, "..", "test", "fixtures", "policy.json");
    for (const config of [
      ["--config", "C0"],
      ["--config", "C-app", "--policy", policy],
    ]) {
      const session = await connect(proxied(["node", FIXTURE], config), undefined, work);
      const tools = await session.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("echo");
      const read = await session.client.callTool({
        name: "read",
        arguments: { path: join(work, "readme.txt") },
      });
      expect(JSON.stringify(read)).toContain("inside");
      await session.client.close();
    }
  });

  it("bundles zod's English messages only, and says them", () => {
    // scripts/zod-english.mjs: the other languages are not in the bundle that every start reads.
    const bundled = readFileSync(join(DIST, `mcpguard-${hash()}.bundle.cjs`), "latin1");
    expect(bundled).toContain("zod/v4/locales/en.js");
    expect(bundled).not.toMatch(/zod\/v4\/locales\/(?!en\.js|english-only\.js)[\w-]+\.js/);
    const policy = join(scratch, "bad-policy.json");
    writeFileSync(policy, JSON.stringify({ version: 1, server: "x", tools: { t: { read: 5 } } }));
    let out = "";
    try {
      execFileSync(process.execPath, [MCPGUARD, "policy", "check", policy], {
        encoding: "utf8",
        stdio: "pipe",
      });
    } catch (error) {
      out = `${(error as { stdout: string }).stdout}${(error as { stderr: string }).stderr}`;
    }
    expect(out).toContain("tools.t.read: Invalid input: expected array, received number");
  });

  it("falls back to compiling from source when its cache is damaged", () => {
    // A copy of the built files, with the cache overwritten by garbage of the same length.
    const copy = join(scratch, "pkg");
    const dist = join(copy, "dist");
    cpSync(join(DIST, "code-cache"), join(dist, "code-cache"), { recursive: true });
    for (const name of ["loader.cjs", "mcpguard.cjs", `mcpguard-${hash()}.bundle.cjs`])
      copyFileSync(join(DIST, name), join(dist, name));
    copyFileSync(join(DIST, "..", "package.json"), join(copy, "package.json"));
    const loader = require(join(dist, "loader.cjs")) as { cachePath(dir: string, name: string): string };
    const cache = loader.cachePath(dist, `mcpguard-${hash()}`);
    expect(rejected(dist)).toBe(false);
    writeFileSync(cache, Buffer.alloc(readFileSync(cache).length, 0x5a));
    expect(rejected(dist)).toBe(true);
    const out = execFileSync(process.execPath, [join(dist, "mcpguard.cjs"), "--version"], {
      encoding: "utf8",
    });
    expect(out).toMatch(/^mcpguard \d/);
    // And with no cache at all.
    rmSync(join(dist, "code-cache"), { recursive: true, force: true });
    const help = execFileSync(process.execPath, [join(dist, "mcpguard.cjs"), "run", "--help"], {
      encoding: "utf8",
    });
    expect(help).toContain("usage: mcpguard run");
  });

  it("builds a package folder (bundle.mjs --pack) that runs from elsewhere, without the checkout", () => {
    const pack = join(scratch, "package");
    execFileSync(process.execPath, [join(DIST, "..", "bundle.mjs"), "--pack", pack], { stdio: "pipe" });
    const pkg = JSON.parse(readFileSync(join(pack, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    expect(pkg.bin.mcpguard).toBe("./bin/mcpguard.js");
    const bin = join(pack, "bin", "mcpguard.js");
    expect(execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8", cwd: work })).toMatch(
      /^mcpguard \d/,
    );
    // Its own cache, accepted; a shell command checked by L1 (mvdan-sh, bundled in the package).
    expect(rejectedIn(join(pack, "dist"))).toBe(false);
    const policy = join(scratch, "command-policy.json");
    writeFileSync(
      policy,
      JSON.stringify({ version: 1, server: "s", tools: { echo: { args: { text: "command" } } } }),
    );
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "cat /etc/shadow | wc" } },
      },
    ];
    const out = execFileSync(
      process.execPath,
      [bin, "run", "--config", "C-app", "--policy", policy, "--", "node", FIXTURE],
      {
        encoding: "utf8",
        cwd: work,
        input: lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    expect(out).toContain("cat is not a program echo may run");
  });
});
