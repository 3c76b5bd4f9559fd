import { availableParallelism } from "node:os";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const ROOT = dirname(fileURLToPath(import.meta.url));

/**
 * The files that take longest (about, on 2 cores), started first: a long file that starts last
 * keeps one worker busy while the others have nothing left to do. Vitest orders files by the
 * durations of the previous run when it has them, but a clean clone (CI) has none, and would
 * start the 100-170 s benchmark after everything else.
 */
const SLOW_FIRST = [
  "runner/test/benchmark.test.ts", // every case under every config through the CLI: 100-170 s
  "runner/test/pythonServers.test.ts", // the Python victims' unittest suite: 30 s
  "runner/test/cli.test.ts", // 18 s
  "packages/kernel/test/bpfLsmVm.test.ts", // boots a VM: 18 s
  "runner/test/shard.test.ts", // 14 s
  "runner/test/inspector.test.ts", // 10 s
  "runner/test/hidden.test.ts", // 9 s
  "packages/proxy/test/relay.test.ts", // 9 s
  "packages/proxy/test/hardening.test.ts", // 9 s
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = SLOW_FIRST.indexOf(relative(ROOT, spec.moduleId));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    // A stable sort: the files not listed keep the order vitest gave them.
    return sorted
      .map((spec, at) => ({ spec, at }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.at - b.at)
      .map(({ spec }) => spec);
  }
}

// One run over every workspace package, so CI gets a single JSON report. Sibling packages resolve
// to their TypeScript sources through the "@mcpguard/source" export condition.
export default defineConfig({
  test: {
    projects: ["packages/*", "runner"],
    // Most test files wait on the processes they start, so two files at a time use 2 cores well;
    // vitest's default (CPUs - 1) runs them one by one there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: SlowFirst },
  },
});
