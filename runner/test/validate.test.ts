/** `bench validate` against the servers' real `tools/list`: each case's server started in a scratch world. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { editDistance, listedTool, nearest } from "../src/listing.ts";
import { REPO_ROOT, repoPath } from "../src/paths.ts";

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-validate-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const mcpguard = (...args: string[]) =>
  spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });

/** BN-01 (read_file on the filesystem victim) under another id, with its call changed. */
function writeCase(id: string, change: Record<string, unknown> = {}): string {
  const base = JSON.parse(readFileSync(repoPath("test_cases", "benign", "BN-01.json"), "utf8"));
  const file = join(scratch, `${id}.json`);
  writeFileSync(file, JSON.stringify({ ...base, id, ...change }, null, 2));
  return file;
}

describe("bench validate", () => {
  it("names the nearest real tool and argument, and counts the files it read", () => {
    for (let i = 1; i <= 7; i++) writeCase(`XV-0${i}`);
    const missingTool = writeCase("XV-08", { tool: "read_text_file" });
    const misspelt = writeCase("XV-09", { arguments: { pathh: "readme.txt" } });
    // A case that calls a missing tool on purpose says so, and validates.
    writeCase("XV-10", { tool: "read_text_file", unlisted: true });
    const r = mcpguard("bench", "validate", scratch);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("10 scenario files read, 2 invalid\n");
    expect(r.stderr.trim().split("\n")).toEqual([
      `${missingTool}: tool: XV-08: server "filesystem" has no tool "read_text_file"; nearest: "read_file" (it lists read_file, write_file, list_dir)`,
      `${misspelt}: arguments.pathh: XV-09: tool "read_file" of filesystem has no argument "pathh"; nearest: "path" (it takes path)`,
      `${misspelt}: arguments: XV-09: tool "read_file" of filesystem requires argument "path", which the case does not give`,
    ]);
    // --schema-only starts no server: the same files are schema-valid.
    const schema = mcpguard("bench", "validate", "--schema-only", scratch);
    expect(schema.status).toBe(0);
    expect(schema.stdout).toBe("10 scenario files read, 0 invalid (schema only: no server started)\n");
  });

  it("counts a file that is not a case among those read", () => {
    const dir = mkdtempSync(join(scratch, "bad-"));
    writeFileSync(join(dir, "XB-01.json"), "{ not json");
    writeFileSync(
      join(dir, "XB-02.json"),
      readFileSync(repoPath("test_cases", "benign", "BN-01.json"), "utf8").replace("BN-01", "XB-02"),
    );
    const r = mcpguard("bench", "validate", dir);
    expect(r.stdout).toBe("2 scenario files read, 1 invalid\n");
    expect(r.stderr).toMatch(/XB-01\.json: not valid JSON/);
  });

  it("accepts every case of every suite against its server's listing", () => {
    const r = mcpguard("bench", "validate", "--suite", "all");
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^\d+ scenario files read, 0 invalid\n$/);
    expect(Number(r.stdout.split(" ")[0])).toBeGreaterThan(900);
    expect(r.status).toBe(0);
  });

  it("reads schemas as JSON Schema does: no properties, or additionalProperties, takes any argument", () => {
    expect(
      listedTool({ name: "t", inputSchema: { $schema: "http://json-schema.org/draft-07/schema#" } }).open,
    ).toBe(true);
    expect(
      listedTool({
        name: "t",
        inputSchema: { type: "object", properties: { a: {} }, additionalProperties: {} },
      }).open,
    ).toBe(true);
    expect(
      listedTool({ name: "t", inputSchema: { type: "object", properties: { a: {} }, required: ["a", 3] } }),
    ).toEqual({ name: "t", properties: ["a"], required: ["a"], open: false });
    expect(editDistance("pathh", "path")).toBe(1);
    expect(nearest("read_text_file", ["write_file", "read_file", "list_dir"])).toBe("read_file");
    expect(nearest("x", [])).toBeUndefined();
  });
});
