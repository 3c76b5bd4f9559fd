import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { findCgroup2 } from "@mcpguard/proxy";
import { describe, expect, it } from "vitest";
import { incompleteBeta, quantile, studentTCdf, studentTQuantile, tInterval, wilson } from "../src/stats.ts";

describe("wilson", () => {
  it("matches published values", () => {
    // 8 of 10 at 95%: 0.4902 to 0.9433 (Newcombe 1998, method 3).
    const a = wilson(8, 10)!;
    expect(a.value).toBe(0.8);
    expect(a.lo).toBeCloseTo(0.4902, 4);
    expect(a.hi).toBeCloseTo(0.9433, 4);
    // 0 of 21: the upper bound is z^2 / (n + z^2).
    const b = wilson(0, 21)!;
    expect(b.lo).toBe(0);
    expect(b.hi).toBeCloseTo(3.841459 / (21 + 3.841459), 6);
    // 81 of 263 (Newcombe's example): 0.2553 to 0.3662.
    const c = wilson(81, 263)!;
    expect(c.lo).toBeCloseTo(0.2553, 4);
    expect(c.hi).toBeCloseTo(0.3662, 4);
    expect(wilson(0, 0)).toBeNull();
  });

  it("is symmetric around one half", () => {
    const lo = wilson(3, 20)!;
    const hi = wilson(17, 20)!;
    expect(lo.lo).toBeCloseTo(1 - hi.hi, 12);
    expect(lo.hi).toBeCloseTo(1 - hi.lo, 12);
  });
});

describe("Student's t", () => {
  it("has the tabulated 97.5% quantiles", () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.7764, 4);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.2281, 4);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0423, 4);
    expect(studentTQuantile(0.975, 1e6)).toBeCloseTo(1.96, 3);
  });

  it("has a CDF that is symmetric and one half at zero", () => {
    expect(studentTCdf(0, 7)).toBeCloseTo(0.5, 12);
    expect(studentTCdf(-1.3, 5) + studentTCdf(1.3, 5)).toBeCloseTo(1, 12);
    expect(incompleteBeta(0.5, 2, 2)).toBeCloseTo(0.5, 12);
    expect(incompleteBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12);
  });

  it("gives mean ± t-interval across runs", () => {
    const t = tInterval([1, 2, 3, 4, 5])!;
    expect(t.value).toBe(3);
    expect(t.sd).toBeCloseTo(1.581139, 6);
    expect(t.lo).toBeCloseTo(3 - (2.776445 * 1.581139) / Math.sqrt(5), 5);
    expect(t.hi).toBeCloseTo(3 + (2.776445 * 1.581139) / Math.sqrt(5), 5);
    expect(tInterval([0.5])).toBeNull();
    expect(tInterval([0.9, 0.9, 0.9])).toMatchObject({ value: 0.9, lo: 0.9, hi: 0.9 });
  });
});

describe("quantile", () => {
  it("interpolates between order statistics", () => {
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 20], 0.95)).toBeCloseTo(19.5, 12);
    expect(quantile([], 0.5)).toBeNull();
  });
});

describe("bench latency's round-by-round differences", () => {
  it("takes the median of per-round differences and ratios, with their range", async () => {
    const { roundDelta } = await import("../src/latency.ts");
    // A machine that drifts from round to round: the per-round difference stays 1 ms.
    expect(roundDelta([2, 5, 3], [1, 4, 2], "diff")).toEqual({ median: 1, lo: 1, hi: 1, rounds: 3 });
    expect(roundDelta([2, 6, 3, 9], [1, 3, 3, 3], "ratio")).toEqual({ median: 2, lo: 1, hi: 3, rounds: 4 });
    expect(roundDelta([1, 2], [1], "diff")).toBeNull();
    expect(roundDelta([1], [0], "ratio")).toBeNull();
    expect(roundDelta(undefined, [1], "diff")).toBeNull();
  });
});

describe("bench latency's CPU per call", () => {
  it("reads a process's CPU time over all its threads, and a cgroup's", async () => {
    const { processCpuMicros, cgroupCpuMicros } = await import("../src/session.ts");
    // The child spins until it has used 150 ms of CPU by its own count, says how much, and waits.
    const child = spawn(
      process.execPath,
      [
        "-e",
        "while (process.cpuUsage().user < 150000); const u = process.cpuUsage(); console.log(u.user + u.system); setInterval(() => {}, 1000);",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [line] = (await once(child.stdout, "data")) as [Buffer];
      const own = Number(line.toString());
      const measured = processCpuMicros(child.pid as number) as number;
      // The scheduler's run time of every thread: about what the process counts itself (getrusage).
      expect(own).toBeGreaterThanOrEqual(150_000);
      expect(measured).toBeGreaterThanOrEqual(own * 0.95);
    } finally {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    expect(processCpuMicros(child.pid as number)).toBeUndefined();
    expect(cgroupCpuMicros(undefined)).toBeUndefined();
    expect(cgroupCpuMicros("/nonexistent")).toBeUndefined();
    // This process's own cgroup, where there is a cgroup2 hierarchy: it has used CPU.
    const cg = findCgroup2();
    if (cg) expect(cgroupCpuMicros(join(cg.mount, cg.self))).toBeGreaterThan(0);
  });
});
