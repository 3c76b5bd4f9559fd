/**
 * What an L1 refusal lacked, for `mcpguard policy learn`: the grant its reason names (`need`), and
 * every grant the call lacks (missingGrants: L1 stops at its first refusal, so the call is judged
 * again with each found grant added).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide, missingGrants } from "../src/decide.ts";
import { type ResolvedPolicy, resolvePolicy } from "../src/load.ts";
import { Policy } from "../src/schema.ts";

let root: string;
let work: string;
let policy: ResolvedPolicy;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-needs-")));
  work = join(root, "work");
  mkdirSync(join(work, "logs"), { recursive: true });
  writeFileSync(join(work, "logs", "a.log"), "x\n");
  const parsed = Policy.parse({
    version: 1,
    server: "s",
    tools: {
      run: { args: { command: "command" } },
      read_file: { args: { path: "path.read" }, read: [`${work}/docs/**`] },
      fetch: { args: { url: "url" } },
      query: { args: { sql: "sql" } },
    },
  });
  policy = resolvePolicy(parsed, undefined, { cwd: work });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the grants a refused call lacks", () => {
  it("names the one its reason names on the decision", () => {
    expect(decide(policy, "read_file", { path: "logs/a.log" })).toMatchObject({
      allow: false,
      rule: "l1.path.read",
      need: { capability: "read", value: join(work, "logs", "a.log") },
    });
    expect(decide(policy, "fetch", { url: "https://api.example.com/v1" })).toMatchObject({
      need: { capability: "network", value: "api.example.com:443" },
    });
    expect(decide(policy, "query", { sql: "DELETE FROM t" })).toMatchObject({
      need: { capability: "sql", value: "write" },
    });
  });

  it("finds every program and file of a command, not only the first", () => {
    expect(missingGrants(policy, "run", { command: "cat logs/a.log | grep x | sort -r" })).toEqual([
      { capability: "exec", value: "cat" },
      { capability: "read", value: join(work, "logs", "a.log") },
      { capability: "exec", value: "grep" },
      { capability: "exec", value: "sort" },
    ]);
  });

  it("has none for a refusal no grant answers, and none for an allowed call", () => {
    // A program only the shell knows at run time: no grant makes L1 able to judge it.
    expect(missingGrants(policy, "run", { command: '$(echo cat) "$X"' })).toEqual([]);
    expect(missingGrants(policy, "read_file", { path: "docs/x.md" })).toEqual([]);
    expect(missingGrants(policy, "nope", {})).toEqual([]);
  });
});
