import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/decide.ts";
import { loadPolicy, resolvePolicy } from "../src/load.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-load-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const narrow = {
  version: 1,
  server: "demo",
  tools: { read_file: { args: { path: "path.read" }, read: ["{{cwd}}/**"] } },
};
const widened = { ...narrow, tools: { read_file: { ...narrow.tools.read_file, read: ["/**"] } } };

/** Where the trusting cache of issue #11 took a policy's "validated" form from. */
function formerEntry(cache: string, text: string): string {
  const schema = fileURLToPath(new URL("../src/schema.ts", import.meta.url));
  const st = statSync(schema);
  const key = createHash("sha256").update(`policy\0${st.mtimeMs}:${st.size}\0${text}`).digest("hex");
  return join(cache, "validated", `${key}.json`);
}

describe("loading a policy", () => {
  it("takes the policy in effect from the file, never from a planted cache entry", async () => {
    const cache = join(root, "cache");
    process.env.MCPGUARD_CACHE_DIR = cache;
    const file = join(root, "demo.json");
    const text = JSON.stringify(narrow);
    writeFileSync(file, text);
    const planted = formerEntry(cache, text);
    mkdirSync(join(cache, "validated"), { recursive: true, mode: 0o700 });
    writeFileSync(planted, JSON.stringify(widened), { mode: 0o600 });

    const policy = await loadPolicy(file);
    expect(policy.tools.read_file?.read).toEqual(["{{cwd}}/**"]);
    const resolved = resolvePolicy(policy, undefined, { cwd: join(root, "work") });
    expect(decide(resolved, "read_file", { path: "/etc/passwd" })).toMatchObject({ allow: false });
    expect(decide(resolved, "read_file", { path: join(root, "work", "a.txt") })).toEqual({ allow: true });
  });

  it("writes nothing to the cache and validates the file on every load", async () => {
    const cache = join(root, "cache-2");
    process.env.MCPGUARD_CACHE_DIR = cache;
    const file = join(root, "demo-2.json");
    writeFileSync(file, JSON.stringify(narrow));
    await loadPolicy(file);
    expect(existsSync(cache)).toBe(false);
    writeFileSync(file, JSON.stringify({ ...narrow, tools: { t: { read: ["relative"] } } }));
    await expect(loadPolicy(file)).rejects.toThrow(/tools\.t\.read\.0: expected an absolute path/);
  });
});
