import { defineProject } from "vitest/config";

/** Per-package vitest settings: tests run on TypeScript sources of sibling packages. */
export function packageProject(name: string, overrides: { testTimeout?: number } = {}) {
  return defineProject({
    resolve: { conditions: ["@mcpguard/source"] },
    ssr: { resolve: { conditions: ["@mcpguard/source"] } },
    test: {
      name,
      include: ["test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 20_000,
      hookTimeout: 30_000,
    },
  });
}
