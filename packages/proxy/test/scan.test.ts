/** wrap's review of a launch: which launchers the kernel layer resolves before confinement. */
import { describe, expect, it } from "vitest";
import { scanLaunch } from "../src/wrap/scan.ts";

const rules = (command: string, args: string[]) =>
  scanLaunch({ command, args, cwd: "/", path: process.env.PATH, kernel: true }).map((f) => f.rule);

describe("the l3-launcher finding", () => {
  it("is not given for npx, npm exec, uvx and uv tool run, which L3 resolves; it is for bunx, pipx run and pnpm dlx", () => {
    expect(rules("npx", ["-y", "@modelcontextprotocol/server-memory@2026.8.31"])).not.toContain(
      "l3-launcher",
    );
    expect(rules("uvx", ["mcp-server-time@2025.1.1"])).not.toContain("l3-launcher");
    expect(rules("uv", ["tool", "run", "mcp-server-git@2025.1.1"])).not.toContain("l3-launcher");
    expect(rules("bunx", ["some-server@1.0.0"])).toContain("l3-launcher");
    expect(rules("pipx", ["run", "mcp-server-git==1.0.0"])).toContain("l3-launcher");
  });
});
