/** The frame soak, small: the real CLI under C0 and C-full, hostile frames both ways. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";
import { runFrameSoak } from "../src/soak/frames.ts";

const doctor = spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), "doctor"], {
  encoding: "utf8",
});
const l3 = doctor.status === 0;
if (!l3)
  console.warn(`frame soak: C-full skipped, mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

describe("runFrameSoak", () => {
  it("reports no crash, no malformed frame forwarded and, with the sanitizer, no planted key", async () => {
    const configs = l3 ? (["C0", "C-full"] as const) : (["C0"] as const);
    const report = await runFrameSoak({ frames: 4000, segments: 2, seed: 3, configs: [...configs] });
    expect(report.configs.map((c) => c.config)).toEqual(configs);
    for (const c of report.configs) {
      expect(c.framesFromClient + c.framesFromServer).toBe(4000);
      expect(c.byKind.deep).toBeGreaterThan(0);
      expect(c.byKind["bare-cr"]).toBeGreaterThan(0);
      expect({ crashes: c.crashes, toClient: c.malformedToClient, toServer: c.malformedToServer }).toEqual({
        crashes: 0,
        toClient: 0,
        toServer: 0,
      });
      expect(c.problems).toEqual([]);
    }
    // The soak's server plants the key: C0 lets it through, the sanitizer never does.
    expect(report.configs[0]?.plantedKeyToClient).toBeGreaterThan(0);
    if (l3) expect(report.configs[1]?.plantedKeyToClient).toBe(0);
  }, 60_000);
});
