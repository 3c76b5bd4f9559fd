/**
 * The real suite: third-party servers pinned in servers/real and started from node_modules, their
 * policies (the allowed folder only, bound to each trial's), and its cases. Under C0 the vulnerable
 * server-filesystem is exploitable and the fixed one is not; under C-full no probe fires and a
 * benign operation works from the allowed folder and from `/`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Interpreters, resolveInterpreters } from "../src/interpreters.ts";
import { repoPath } from "../src/paths.ts";
import { bindPolicies, rebindPath, resolveRealServers } from "../src/real.ts";
import { renderRealServers, summarizeRealServers } from "../src/realReport.ts";
import { loadAllServers, loadRealRegistry } from "../src/registry.ts";
import { cwdVariants, loadScenarios, type Scenario, variantId } from "../src/scenario.ts";
import { runTrial, type TrialRecord } from "../src/trial.ts";
import { WorldFactory } from "../src/world/world.ts";
import { record } from "./records.ts";

const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");
const real = loadRealRegistry();
const servers = loadAllServers();
const { scenarios, issues } = loadScenarios([repoPath("test_cases", "real")], new Set(servers.keys()));
const byId = new Map(scenarios.map((s) => [s.id, s]));
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(
    `real suite: the C-full trials are skipped, the kernel layer cannot run here:\n${doctor.stdout}`,
  );

describe("real servers", () => {
  it("start from node_modules at the pinned versions", () => {
    const resolved = Object.fromEntries(resolveRealServers(real.values()).map((r) => [r.id, r]));
    expect(resolved.filesystem_2025_3_28).toMatchObject({
      name: "@modelcontextprotocol/server-filesystem",
      version: "2025.3.28",
    });
    expect(resolved.filesystem_2026_8_31).toMatchObject({
      name: "@modelcontextprotocol/server-filesystem",
      version: "2026.8.31",
    });
    expect(resolved.memory?.name).toBe("@modelcontextprotocol/server-memory");
    expect(resolved.everything?.name).toBe("@modelcontextprotocol/server-everything");
    for (const r of Object.values(resolved)) {
      if (r.launcher) continue;
      expect(r.script).toMatch(/\/node_modules\/\.pnpm\/.*\/dist\/index\.js$/);
    }
    // Started with npx, offline from the runner's npm cache.
    expect(resolved.filesystem_2025_3_28_npx).toMatchObject({
      launcher: "npx @modelcontextprotocol/server-filesystem@2025.3.28",
      version: "2025.3.28",
      script: null,
    });
  });

  it("have policies and manifests that grant the allowed folder only, with no {{cwd}}", () => {
    for (const server of real.values()) {
      const files = [
        repoPath("policies", "servers", `${server.id}.json`),
        repoPath("policies", "agentbound", `${server.id}.json`),
      ];
      const check = spawnSync(process.execPath, [MCPGUARD, "policy", "check", ...files], {
        encoding: "utf8",
      });
      expect(check.status, check.stderr).toBe(0);
      const [policy, manifest] = files.map((f) => JSON.parse(readFileSync(f, "utf8")));
      const grants = JSON.stringify([policy.tools, manifest.scopes]);
      expect(grants).not.toContain("{{");
      const paths = [...grants.matchAll(/"(\/[^"]*)"/g)].map((m) => m[1] as string);
      const roots = Object.keys(server.policyRoots ?? {});
      for (const path of paths)
        expect(
          roots.some((root) => path === root || path.startsWith(`${root}/`)),
          path,
        ).toBe(true);
    }
  });

  it("bind the policy's folder to the trial's", () => {
    const roots = new Map([["/srv/mcp/workspace", "/w/t-1/workspace"]]);
    expect(rebindPath("/srv/mcp/workspace/**", roots)).toBe("/w/t-1/workspace/**");
    expect(rebindPath("/srv/mcp/workspace", roots)).toBe("/w/t-1/workspace");
    expect(rebindPath("/srv/mcp/workspace_evil/x", roots)).toBe("/srv/mcp/workspace_evil/x");
    const scratch = mkdtempSync(join(tmpdir(), "mcpguard-real-"));
    try {
      const world = {
        expand: <T>(v: T) =>
          JSON.parse(JSON.stringify(v).replaceAll("{{workspace}}", "/w/t-1/workspace")) as T,
      };
      const bound = bindPolicies(real.get("filesystem_2026_8_31") as never, world, join(scratch, "x"));
      const policy = readFileSync(bound.policy, "utf8");
      expect(policy).toContain('"/w/t-1/workspace/**"');
      expect(JSON.stringify(JSON.parse(policy).tools)).not.toContain("/srv/mcp");
      expect(readFileSync(bound.manifest, "utf8")).toContain('"/w/t-1/workspace/**"');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("real cases", () => {
  it("are valid scenario files", () => {
    expect(issues).toEqual([]);
    expect(scenarios.every((s) => s.category === "real")).toBe(true);
  });

  it("probe both CVEs on both releases with the same calls, and hold at least 40 benign operations", () => {
    const probes = scenarios.filter((s) => s.kind === "attack");
    for (const probe of probes.filter((s) => s.server === "filesystem_2025_3_28")) {
      const fixed = byId.get(probe.id.replace("-V-", "-F-")) as Scenario;
      expect(fixed, probe.id).toBeDefined();
      expect([fixed.server, fixed.tool, fixed.arguments, fixed.oracle]).toEqual([
        "filesystem_2026_8_31",
        probe.tool,
        probe.arguments,
        probe.oracle,
      ]);
    }
    const tools = (cve: string) => new Set(probes.filter((s) => s.id.startsWith(cve)).map((s) => s.tool));
    for (const tool of [
      "read_file",
      "read_multiple_files",
      "write_file",
      "edit_file",
      "list_directory",
      "get_file_info",
    ]) {
      expect(tools("CVE53110").has(tool), tool).toBe(true);
      expect(tools("CVE53109").has(tool), tool).toBe(true);
    }
    expect(tools("CVE53110").has("search_files")).toBe(true);
    expect(scenarios.filter((s) => s.kind === "benign").length).toBeGreaterThanOrEqual(40);
  });

  it("run from the allowed folder and from /, as variants reported apart", () => {
    const probe = byId.get("CVE53110-V-01") as Scenario;
    expect(cwdVariants(probe)).toEqual(["workspace", "/"]);
    expect(cwdVariants(probe).map((cwd) => variantId(probe, cwd))).toEqual([
      "CVE53110-V-01@ws",
      "CVE53110-V-01@root",
    ]);
    expect(variantId({ id: "FR-01", category: "file_read" }, "workspace")).toBe("FR-01");
  });
});

describe("the real servers block", () => {
  const rec = (
    config: string,
    id: string,
    cwd: "workspace" | "/",
    fired: boolean,
    server = "filesystem_2025_3_28",
  ) =>
    record({
      config,
      id: `${id}@${cwd === "/" ? "root" : "ws"}`,
      trial: 1,
      category: "real",
      visibility: "argument",
      server,
      cwd,
      fired,
      ended: fired ? null : "refused",
    });
  const records = [
    rec("C0", "CVE53110-V-01", "workspace", true),
    rec("C0", "CVE53110-V-01", "/", true),
    rec("C0", "CVE53110-F-01", "workspace", false, "filesystem_2026_8_31"),
    rec("C-x", "CVE53110-V-01", "workspace", false),
    rec("C-x", "CVE53110-V-01", "/", true),
    rec("C-x", "CVE53110-F-01", "workspace", false, "filesystem_2026_8_31"),
    record({
      config: "C-x",
      id: "RB-FSF-16@root",
      trial: 1,
      kind: "benign",
      category: "real",
      cwd: "/",
      passed: false,
    }),
  ];
  const block = summarizeRealServers(records);

  it("reports each working directory apart, the viable probes beside all of them", () => {
    expect(block?.cwds).toEqual(["workspace", "/"]);
    expect(block?.configs["C-x"]?.workspace).toMatchObject({
      probes: 2,
      stopped: 2,
      viable: 1,
      viableStopped: 1,
    });
    expect(block?.configs["C-x"]?.["/"]).toMatchObject({
      probes: 1,
      stopped: 0,
      viable: 1,
      viableStopped: 0,
      benign: 1,
      broken: 1,
    });
    expect(block?.servers.filesystem_2026_8_31?.C0?.workspace).toMatchObject({
      probes: 1,
      stopped: 1,
      viable: 0,
    });
    const md = renderRealServers(block, (n) => n.sort()).join("\n");
    expect(md).toContain("| C-x | 1/1 | 2/2 | – | 0/2/0 | 0/1 | 0/1 | 1/1 | – |");
  });
});

describe("real trials (real processes)", () => {
  let factory: WorldFactory;
  let interpreters: Interpreters;
  let auditDir: string;

  beforeAll(async () => {
    [factory, interpreters] = await Promise.all([WorldFactory.create(), resolveInterpreters()]);
    auditDir = mkdtempSync(join(tmpdir(), "mcpguard-real-audit-"));
  });
  afterAll(() => {
    factory?.dispose();
    rmSync(auditDir, { recursive: true, force: true });
  });

  const trial = (id: string, config: string, cwd: "workspace" | "/" = "workspace"): Promise<TrialRecord> =>
    runTrial(
      { runId: "t", scenario: byId.get(id) as Scenario, config, trial: 1, cwd },
      { factory, servers, interpreters, auditDir },
    );

  it.each([
    ["CVE53110-V-01", "reads the prefix sibling"],
    ["CVE53109-V-04", "creates a file outside through a dangling link"],
  ])("C0: the vulnerable release is exploitable: %s %s; the fixed one is not", async (id) => {
    const [vulnerable, fixed] = await Promise.all([trial(id, "C0"), trial(id.replace("-V-", "-F-"), "C0")]);
    expect(vulnerable).toMatchObject({ fired: true, error: null });
    expect(fixed).toMatchObject({ fired: false, error: null, ended: "failed" });
  });

  it.skipIf(!l3)("C-full: the probe does not fire on the vulnerable release, and is no error", async () => {
    const r = await trial("CVE53110-V-01", "C-full");
    expect(r).toMatchObject({ fired: false, error: null });
    expect(r.ended).not.toBeNull();
  });

  it.skipIf(!l3)("C-full: a benign operation works from the allowed folder and from /", async () => {
    const [ws, root] = await Promise.all([trial("RB-FSF-04", "C-full"), trial("RB-FSF-04", "C-full", "/")]);
    expect(ws, ws.error ?? "").toMatchObject({ passed: true, error: null, id: "RB-FSF-04@ws" });
    expect(root, root.error ?? "").toMatchObject({ passed: true, error: null, id: "RB-FSF-04@root" });
  });
});
