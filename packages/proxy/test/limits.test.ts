/** Which limits the server's cgroup gets: the flags over the policy or manifest, over the defaults. */
import { totalmem } from "node:os";
import { Limits as PolicyLimits } from "@mcpguard/policy/schema";
import { describe, expect, it } from "vitest";
import { defaultLimits, describeLimits, LimitsError, resolveLimits } from "../src/limits.ts";

const GiB = 1024 ** 3;

describe("server limits", () => {
  it("default to 1024 tasks and 4 GiB, or half the RAM where that is less", () => {
    const MiB = 1024 ** 2;
    expect(defaultLimits()).toEqual({
      pids: 1024,
      memoryBytes: Math.min(4 * GiB, Math.floor(totalmem() / 2 / MiB) * MiB),
    });
  });

  it("take the policy's over the defaults, and the flags over both", () => {
    expect(resolveLimits({}, { pids: 64 })).toEqual({ pids: 64, memoryBytes: defaultLimits().memoryBytes });
    expect(resolveLimits({ pidsMax: "32", memoryMax: "512M" }, { pids: 64, memoryBytes: GiB })).toEqual({
      pids: 32,
      memoryBytes: 512 * 1024 ** 2,
    });
    expect(resolveLimits({ memoryMax: "2GiB" }).memoryBytes).toBe(2 * GiB);
    expect(resolveLimits({ memoryMax: "1048576" }).memoryBytes).toBe(1024 ** 2);
    // A file size only where one is asked for: the policy's, or the flag over it.
    expect(resolveLimits({}).fileBytes).toBeUndefined();
    expect(resolveLimits({}, { fileBytes: GiB }).fileBytes).toBe(GiB);
    expect(resolveLimits({ fileSizeMax: "256M" }, { fileBytes: GiB }).fileBytes).toBe(256 * 1024 ** 2);
  });

  it.each([
    [{ pidsMax: "0" }, /--pids-max: /],
    [{ pidsMax: "many" }, /--pids-max: /],
    [{ memoryMax: "12X" }, /--memory-max: expected bytes, or a number with K, M or G/],
    [{ memoryMax: "1K" }, /--memory-max: at least 1 MiB/],
    [{ fileSizeMax: "big" }, /--file-size-max: expected bytes/],
  ])("refuse %o in one line", (flags, message) => {
    expect(() => resolveLimits(flags)).toThrow(LimitsError);
    expect(() => resolveLimits(flags)).toThrow(message);
  });

  it("are checked in a policy or manifest: positive whole numbers, nothing else", () => {
    expect(PolicyLimits.safeParse({ pids: 100, memoryBytes: GiB }).success).toBe(true);
    expect(PolicyLimits.safeParse({ pids: 0 }).success).toBe(false);
    expect(PolicyLimits.safeParse({ memoryBytes: 1.5 }).success).toBe(false);
    expect(PolicyLimits.safeParse({ cpu: 1 }).success).toBe(false);
    expect(PolicyLimits.safeParse({ fileBytes: GiB }).success).toBe(true);
    expect(PolicyLimits.safeParse({ fileBytes: 100 }).success).toBe(false);
  });

  it("say what enforces each", () => {
    const info = { pidsMax: 1024, memoryMaxBytes: 4 * GiB, pids: "cgroup-v1", memory: "cgroup-v2" };
    expect(describeLimits(info)).toBe("pids 1024 (cgroup-v1), memory 4 GiB (cgroup-v2)");
    expect(describeLimits({ ...info, fileMaxBytes: 256 * 1024 ** 2 })).toBe(
      "pids 1024 (cgroup-v1), memory 4 GiB (cgroup-v2), each file 256 MiB (rlimit)",
    );
  });
});
