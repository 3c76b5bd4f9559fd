/**
 * The counts the README and docs state, checked against what the repository holds, so that a case
 * or a server added does not leave the front page saying something else.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";
import { loadRegistry } from "../src/registry.ts";
import { loadScenarios } from "../src/scenario.ts";
import { suitePaths } from "../src/select.ts";

const servers = new Set(loadRegistry().keys());
const suite = (name: string) => loadScenarios(suitePaths(name), servers).scenarios;
const readme = readFileSync(repoPath("README.md"), "utf8");
const benchmark = readFileSync(repoPath("docs", "BENCHMARK.md"), "utf8");

describe("the facts the README states", () => {
  const core = suite("core");
  const attacks = core.filter((s) => s.kind === "attack").length;
  const benign = core.filter((s) => s.kind === "benign").length;
  const victims = new Set(core.map((s) => s.server)).size;

  it("counts the core cases and their victim servers as the repository holds them", () => {
    expect(readme).toContain(`${core.length} attack and benign cases against ${victims} victim`);
    expect(readme).toContain(`${core.length} cases (${attacks} attacks, ${benign} benign)`);
    expect(benchmark).toContain(
      `${core.length} cases in 7 categories: ${attacks} attacks and ${benign} benign`,
    );
    expect(benchmark).toContain(`against ${victims} victim servers`);
  });

  it("counts the corpus and the protocol suite as the repository holds them", () => {
    expect(readme).toContain(`a benign corpus of ${suite("corpus").length}`);
    const protocol = suite("protocol").filter((s) => s.kind === "attack").length;
    expect(readme).toContain(`${protocol} protocol attacks`);
  });
});
