import { describe, expect, it } from "vitest";
import { availableConfigs, CONFIG_NAMES, ConfigError, resolveConfig } from "../src/configs.ts";

describe("configs", () => {
  it("has the six configs of the design, every one built here", () => {
    expect(CONFIG_NAMES).toEqual(["C0", "C-AB", "C-app", "C-ebpf", "C-full", "C-AB+ebpf"]);
    expect(availableConfigs()).toEqual(CONFIG_NAMES);
    expect(resolveConfig("C-full")).toEqual({ name: "C-full", layers: ["L1", "L2", "L3"] });
  });

  it("refuses an unknown name, and a config whose layers a build lacks, saying which", () => {
    expect(() => resolveConfig("C-nope")).toThrow(ConfigError);
    const withoutKernel = new Set(["L1", "L2", "AB"] as const);
    expect(() => resolveConfig("C-full", withoutKernel)).toThrow(
      'config "C-full" needs L3 (kernel), which is not built in this version of mcpguard; configs available here: C0, C-AB, C-app',
    );
    expect(() => resolveConfig("C-app", new Set())).toThrow(
      /needs L1 \(policy\) and L2 \(validator\), which are not built/,
    );
  });
});
