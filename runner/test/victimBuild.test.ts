/**
 * The start-up work the build takes off every trial (servers/ts/build.mjs, scripts/dev.mjs): each
 * TypeScript victim is one bundle that V8 compiles from the code cache the build wrote for this
 * Node, and the Python victims start without `site` and with their shared module's bytecode.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";
import { loadRegistry } from "../src/registry.ts";

const DIST = repoPath("servers", "ts", "dist");
const registry = [...loadRegistry().values()];
const typescript = registry.filter((s) => s.language === "typescript");

interface Loader {
  cachePath(dir: string, cacheName: string): string;
  compile(dir: string, bundleFile: string, cachedData?: Buffer): { script: { cachedDataRejected?: boolean } };
}
const loader = createRequire(import.meta.url)(join(DIST, "loader.cjs")) as Loader;

describe("TypeScript victims", () => {
  it.each(typescript.map((s) => [s.id, s.argv[1] as string]))(
    "%s starts its bundle from a code cache that V8 accepts",
    (_id, script) => {
      const entry = readFileSync(join(REPO_ROOT, script), "utf8");
      const [, name = "", hash = ""] =
        /start\(__dirname, "(\w+)\.bundle\.cjs", "\1-([0-9a-f]{16})"\)/.exec(entry) ?? [];
      expect(name, entry).not.toBe("");
      // One file: nothing but Node's own modules is required at run time (ajv's code generator
      // holds require(...) calls in strings, which never run).
      const bundle = readFileSync(join(DIST, `${name}.bundle.cjs`), "utf8");
      const required = [...bundle.matchAll(/(?<!['"`])\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
      expect(required.filter((id) => !id.startsWith("node:") && !isBuiltin(id))).toEqual([]);
      const cache = loader.cachePath(DIST, `${name}-${hash}`);
      // turbo's cache does not key on the Node.js version: after switching it, rebuild with
      // `pnpm exec turbo run build --force --filter @mcpguard/victim-servers-ts`.
      expect(existsSync(cache), `${cache} is missing: rebuild servers/ts with this Node.js`).toBe(true);
      const compiled = loader.compile(DIST, `${name}.bundle.cjs`, readFileSync(cache));
      expect(compiled.script.cachedDataRejected).toBe(false);
    },
  );
});

describe("Python victims", () => {
  it("start with -S -E, and setup compiled their shared module", () => {
    for (const server of registry.filter((s) => s.language === "python"))
      expect(server.argv.slice(0, 5), server.id).toEqual(["python3", "-u", "-B", "-S", "-E"]);
  });

  it("find the bytecode of their shared module, which setup compiled", async () => {
    const { pythonVersion } = await resolveInterpreters();
    const [major, minor] = pythonVersion.split(".");
    const pyc = repoPath("servers", "python", "__pycache__", `mcp_stdio.cpython-${major}${minor}.pyc`);
    expect(existsSync(pyc), `${pyc}: npm run setup compiles it`).toBe(true);
  });
});

function isBuiltin(id: string): boolean {
  return createRequire(import.meta.url)("node:module").builtinModules.includes(id);
}
