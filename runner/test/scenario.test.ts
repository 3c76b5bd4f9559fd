import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";
import { loadRegistry } from "../src/registry.ts";
import { CORE_CATEGORIES, loadScenarios } from "../src/scenario.ts";
import { suitePaths } from "../src/select.ts";

const servers = new Set(loadRegistry().keys());

describe("the 82 cases", () => {
  const { scenarios, issues } = loadScenarios(suitePaths("core"), servers);

  it("are all valid", () => {
    expect(issues).toEqual([]);
    expect(scenarios).toHaveLength(82);
  });

  it("have the counts of CASES.md §1", () => {
    const count = (f: (s: (typeof scenarios)[number]) => boolean) => scenarios.filter(f).length;
    expect(count((s) => s.kind === "attack")).toBe(61);
    expect(count((s) => s.kind === "benign")).toBe(21);
    expect(count((s) => s.visibility === "argument")).toBe(18);
    expect(count((s) => s.visibility === "hidden")).toBe(43);
    const perCategory = Object.fromEntries(CORE_CATEGORIES.map((c) => [c, count((s) => s.category === c)]));
    expect(perCategory).toEqual({
      file_read: 15,
      exfiltration: 11,
      env_leak: 9,
      sandbox_escape: 10,
      priv_escalation: 10,
      cross_language: 8,
      benign: 19,
    });
    expect(count((s) => s.note === "expected intrinsic failure under C0")).toBe(4);
  });
});

describe("suites", () => {
  it("select the core by default and keep the other suites apart", () => {
    expect(suitePaths()).toEqual(CORE_CATEGORIES.map((c) => repoPath("test_cases", c)));
    expect(suitePaths("corpus")).toEqual([repoPath("test_cases", "benign_corpus")]);
    expect(suitePaths("all")).toEqual([repoPath("test_cases")]);
    expect(() => suitePaths("nope")).toThrow(/unknown suite "nope"/);
  });

  it("the benign corpus is valid, tagged, benign and covers every server", () => {
    const { scenarios, issues } = loadScenarios(suitePaths("corpus"), servers);
    expect(issues).toEqual([]);
    expect(scenarios.length).toBeGreaterThanOrEqual(400);
    expect(scenarios.every((s) => s.category === "benign_corpus" && s.kind === "benign")).toBe(true);
    expect(scenarios.every((s) => (s.tags?.length ?? 0) > 0)).toBe(true);
    // Every victim server; the protocol suite's servers (SERVERS.md §6) have their own benign cases.
    const protocol = new Set(loadScenarios(suitePaths("protocol"), servers).scenarios.map((s) => s.server));
    expect(new Set(scenarios.map((s) => s.server))).toEqual(
      new Set([...servers].filter((id) => !protocol.has(id))),
    );
    const core = loadScenarios(suitePaths("core"), servers).scenarios.map((s) => s.id);
    expect(scenarios.filter((s) => core.includes(s.id))).toEqual([]);
  });
});

describe("validation errors", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mcpguard-cases-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const good = {
    id: "XX-01",
    category: "file_read",
    kind: "attack",
    visibility: "argument",
    title: "t",
    server: "filesystem",
    tool: "read_file",
    arguments: { path: "{{workspace}}/x" },
    oracle: { response_matches: "x" },
  };

  function issuesFor(name: string, value: unknown, folder = "file_read") {
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, folder, name), typeof value === "string" ? value : JSON.stringify(value));
    return loadScenarios([dir], servers).issues.map((i) => `${i.field}: ${i.message}`);
  }

  it("accepts a well-formed case", () => {
    expect(issuesFor("XX-01.json", good)).toEqual([]);
  });

  it("names the field and what was expected", () => {
    expect(issuesFor("XX-01.json", { ...good, oracle: undefined })).toEqual([
      "oracle: an attack needs an oracle",
    ]);
    expect(issuesFor("XX-01.json", { ...good, kind: "benign" })).toEqual(
      expect.arrayContaining([
        "expect: a benign case needs expect",
        "oracle: a benign case has expect, not an oracle",
      ]),
    );
    expect(issuesFor("XX-01.json", { ...good, category: "nope" })[0]).toMatch(/^category: /);
    expect(issuesFor("XX-01.json", { ...good, arguments: { path: "{{secret.nope}}" } })).toEqual([
      "arguments.path: unknown placeholder {{secret.nope}}",
    ]);
    expect(issuesFor("XX-01.json", { ...good, oracle: { file_exists: "x" } })[0]).toMatch(
      /^oracle: expected one of any, all, secret_in, .*; got keys file_exists$/,
    );
    expect(issuesFor("XX-01.json", { ...good, oracle: { any: [{ response_matches: "(" }] } })[0]).toMatch(
      /^oracle\.any\.0\.response_matches: invalid regular expression/,
    );
    expect(
      issuesFor("XX-01.json", { ...good, oracle: { secret_in: "files", secret: "password" } })[0],
    ).toMatch(/^oracle\.secret: /);
    expect(issuesFor("XX-01.json", { ...good, setup: [{ write: "/etc/evil", content: "x" }] })[0]).toMatch(
      /^setup\.0(\.write)?: .*(expected a path starting with one of|Invalid)/,
    );
    expect(issuesFor("XX-01.json", { ...good, setup: [{ mkdir: "{{tmp}}/../../x" }] })[0]).toMatch(
      /^setup\.0/,
    );
    expect(issuesFor("XX-01.json", { ...good, server: "nowhere" })[0]).toMatch(
      /^server: unknown server "nowhere"/,
    );
    expect(issuesFor("XX-01.json", { ...good, extra: 1 })[0]).toMatch(/extra|Unrecognized key/);
    expect(issuesFor("XX-01.json", { ...good, tags: ["shell.pipeline", "sql.cte"] })).toEqual([]);
    expect(issuesFor("XX-01.json", { ...good, tags: ["Shell Pipeline"] })[0]).toMatch(/^tags\.0: /);
  });

  it("checks the file against its folder and name, and rejects bad JSON and duplicates", () => {
    expect(issuesFor("XX-01.json", good, "benign")).toEqual([
      'category: "file_read" does not match its folder "benign"',
    ]);
    rmSync(join(dir, "benign"), { recursive: true });
    expect(issuesFor("XX-02.json", good)).toEqual(['id: "XX-01" does not match the file name']);
    rmSync(join(dir, "file_read"), { recursive: true });
    expect(issuesFor("XX-01.json", "{ not json")[0]).toMatch(/^: not valid JSON/);
  });
});
