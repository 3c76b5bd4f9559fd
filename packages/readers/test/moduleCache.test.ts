/**
 * mvdan-sh and acorn are required through the code caches the build writes (prime.mjs): V8 takes
 * them, the modules work the same as from `require`, and a damaged or missing cache only means
 * compiling from source.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runModule } from "../src/moduleCache.ts";

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const scratch = mkdtempSync(join(tmpdir(), "mcpguard-module-cache-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** In a fresh Node (the vitest worker's V8 flags may differ from a CLI's): what the built module reports. */
function inChild(code: string): string {
  const script = `import(${JSON.stringify(join(DIST, "moduleCache.js"))}).then((m) => { ${code} });`;
  return execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
}

describe("requireCached", () => {
  it("takes the cache the build wrote for mvdan-sh and for acorn", () => {
    const out = inChild(`
      const sh = m.requireCached("mvdan-sh").syntax;
      const tree = sh.NewParser().Parse("echo a | wc -l", "");
      const acorn = m.requireCached("acorn");
      process.stdout.write(JSON.stringify([m.cacheTaken("mvdan-sh"), m.cacheTaken("acorn"),
        tree.Stmts.length, acorn.parse("let a = 1", { ecmaVersion: "latest" }).body[0].type]));`);
    expect(JSON.parse(out)).toEqual([true, true, 1, "VariableDeclaration"]);
  });

  it("compiles from source when the cache is damaged or missing, with the same module", () => {
    const filename = createRequire(join(DIST, "moduleCache.js")).resolve("acorn");
    const bytes = readFileSync(filename);
    const damaged = join(scratch, "damaged.bin");
    writeFileSync(damaged, Buffer.alloc(4096, 0x5a));
    const fromGarbage = runModule(filename, bytes, damaged);
    expect(fromGarbage.script.cachedDataRejected).toBe(true);
    const fromNothing = runModule(filename, bytes, join(scratch, "absent.bin"));
    expect(fromNothing.script.cachedDataRejected).toBeUndefined();
    for (const { exports } of [fromGarbage, fromNothing]) {
      const acorn = exports as { parse(code: string, options: object): { body: { type: string }[] } };
      expect(acorn.parse("f(1)", { ecmaVersion: "latest" }).body[0]?.type).toBe("ExpressionStatement");
    }
  });

  it("names a cache by the module's text, which V8 does not check (only its length)", () => {
    const filename = createRequire(join(DIST, "moduleCache.js")).resolve("acorn");
    const hash = createHash("sha256").update(readFileSync(filename)).digest("hex").slice(0, 16);
    const names = readdirSync(join(DIST, "code-cache", `${process.version}-${process.arch}`));
    expect(names).toContain(`acorn-${hash}.bin`);
  });
});
