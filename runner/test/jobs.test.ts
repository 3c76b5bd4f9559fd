/** The default --jobs: two per CPU, at most CPUs + 4, and one per 256 MiB of free memory. */
import { describe, expect, it } from "vitest";
import { defaultJobs } from "../src/bench.ts";

const GiB = 1024 * 1024 * 1024;

describe("defaultJobs", () => {
  it("takes two jobs per CPU on small machines, CPUs + 4 on large ones", () => {
    expect(defaultJobs(1, 16 * GiB)).toBe(2);
    expect(defaultJobs(2, 16 * GiB)).toBe(4);
    expect(defaultJobs(4, 16 * GiB)).toBe(8);
    expect(defaultJobs(16, 16 * GiB)).toBe(20);
  });

  it("runs no more trials than free memory holds, and always at least one", () => {
    expect(defaultJobs(8, 1 * GiB)).toBe(4);
    expect(defaultJobs(8, 100 * 1024 * 1024)).toBe(1);
  });
});
