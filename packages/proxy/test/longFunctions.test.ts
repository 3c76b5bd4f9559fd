import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "..", "scripts", "long-functions.mjs");

describe("function length", () => {
  it("no function of the proxy's sources is over 80 lines without a reason written above it", () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: "utf8" });
    expect(r.stdout).toMatch(/ 0 without a reason\n$/);
    expect(r.status, r.stdout).toBe(0);
  });

  it("finds a long function, and one with a reason apart", () => {
    const r = spawnSync(process.execPath, [SCRIPT, "--limit", "20"], { encoding: "utf8" });
    // At 20 lines the proxy has many, most without a reason: the script says so and fails.
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^\s+\d+ {2}wrap {2}src\/commands\/wrap\.ts:\d+$/m);
    expect(r.stdout).toMatch(/openShortSession .*\(long: /);
  });
});
