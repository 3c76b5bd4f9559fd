/**
 * The core set (coreSet.ts): the committed manifest is what test_cases/ holds (a core case changed
 * or added without regenerating it fails here), each case of a run finds its suite by the
 * manifest, and a run with cases beyond the core set says so beside Table 1.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { coverageCaveats, fullBenchmark } from "../src/caveats.ts";
import { buildCoreManifest, coreManifest, suiteOfScenario } from "../src/coreSet.ts";
import { repoPath } from "../src/paths.ts";
import { selectScenarios } from "../src/select.ts";
import { summarize } from "../src/summarize.ts";
import { record } from "./records.ts";

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-core-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the core manifest", () => {
  it("is the core categories of test_cases/ as they are (else: node scripts/core-manifest.mjs, if the paper's set changed)", () => {
    const committed = coreManifest();
    const now = buildCoreManifest();
    const was = new Map(committed.entries.map((e) => [e.id, e.sha256]));
    const differs = now.entries
      .filter((e) => was.get(e.id) !== e.sha256)
      .map((e) => `${was.has(e.id) ? "changed" : "added"}: ${e.id}`);
    const removed = committed.entries.filter((e) => !now.entries.some((n) => n.id === e.id)).map((e) => e.id);
    expect({ differs, removed }).toEqual({ differs: [], removed: [] });
    expect(now).toEqual(committed);
  });

  it("holds the paper's 82 cases: 61 attacks, 21 benign", () => {
    expect(fullBenchmark()).toEqual({ cases: 82, attacks: 61, benign: 21 });
    expect(coreManifest().entries).toHaveLength(82);
  });
});

describe("the suite of a case", () => {
  const [fr05, bn08, corpus] = selectScenarios("FR-05,BN-08,BC-EN-001").scenarios;

  it("a core case with its manifest bytes is core; a corpus case is its category", () => {
    expect(suiteOfScenario(fr05 as never)).toBe("core");
    expect(suiteOfScenario(bn08 as never)).toBe("core");
    expect(suiteOfScenario(corpus as never)).toBe("benign_corpus");
  });

  it("a case of a core category not in the manifest, or whose file differs from it, is the extension", () => {
    const manifest = coreManifest();
    const without = { ...manifest, entries: manifest.entries.filter((e) => e.id !== "FR-05") };
    expect(suiteOfScenario(fr05 as never, without)).toBe("extension");
    const changed = {
      ...manifest,
      entries: manifest.entries.map((e) => (e.id === "FR-05" ? { ...e, sha256: "0".repeat(64) } : e)),
    };
    expect(suiteOfScenario(fr05 as never, changed)).toBe("extension");
  });

  it("a scenario file from outside test_cases/ is the external suite, even a copy of a core case", () => {
    const copy = join(scratch, "FR-05.json");
    copyFileSync(repoPath("test_cases", "file_read", "FR-05.json"), copy);
    const [external] = selectScenarios(copy).scenarios;
    expect(suiteOfScenario(external as never)).toBe("external");
  });
});

describe("a run beyond the core set", () => {
  const core = ["FR-1", "BN-1"].map((id) =>
    record({ config: "C0", id, trial: 1, kind: id.startsWith("BN") ? "benign" : "attack", suite: "core" }),
  );
  const extra = [
    record({ config: "C0", id: "FR-16", trial: 1, suite: "extension", fired: true }),
    record({ config: "C0", id: "FR-05", trial: 1, suite: "extension", fired: true }),
    record({ config: "C0", id: "XX-01", trial: 1, suite: "external", fired: true }),
  ];

  it("counts only the core set beside Table 1, the rest as suites of their own", () => {
    const s = summarize("r", [...core, ...extra]);
    expect({ cases: s.cases, attacks: s.attacks, benign: s.benign }).toEqual({
      cases: 2,
      attacks: 1,
      benign: 1,
    });
    expect(Object.keys(s.suites)).toEqual(["extension", "external"]);
    expect(s.suites.extension).toMatchObject({ cases: 2, attacks: 2 });
    expect(s.caseResults.find((r) => r.id === "FR-16")?.suite).toBe("extension");
  });

  it("says how the run differs next to Table 1: the core cases it covers, the extension, the external cases", () => {
    expect(coverageCaveats(summarize("r", [...core, ...extra]))).toEqual([
      "This run covers 2 of 82 core cases (1 of 61 attacks, 1 of 21 benign); the paper's numbers are for the full benchmark.",
      "2 cases of the core categories beyond the paper's 82 ran: 1 not in the core manifest (FR-16); 1 whose file differs from the core manifest's (FR-05). They are the extension suite, with a table of their own, and are left out of the comparison with Table 1.",
      "1 case from outside test_cases/ ran as a suite of their own (external), left out of the comparison with Table 1.",
    ]);
  });
});
