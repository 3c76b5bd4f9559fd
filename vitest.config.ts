import { defineConfig } from "vitest/config";

// One run over every workspace package, so CI gets a single JSON report. Sibling packages resolve
// to their TypeScript sources through the "@mcpguard/source" export condition.
export default defineConfig({
  test: {
    projects: ["packages/*", "runner"],
  },
});
