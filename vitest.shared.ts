import { defineProject } from "vitest/config";

/**
 * Per-package vitest settings: tests run on TypeScript sources of sibling packages. The timeouts
 * are for a machine that is busy with other work (two test files at a time, a benchmark beside
 * them): a test that hangs still fails, one that is only slow does not.
 */
export function packageProject(name: string, overrides: { testTimeout?: number } = {}) {
  return defineProject({
    resolve: { conditions: ["@mcpguard/source"] },
    ssr: { resolve: { conditions: ["@mcpguard/source"] } },
    test: {
      name,
      include: ["test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 120_000,
      hookTimeout: 180_000,
    },
  });
}
