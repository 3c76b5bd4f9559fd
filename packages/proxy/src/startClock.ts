/**
 * When each step of `mcpguard run`'s start was reached, in ms since the proxy's process began
 * (performance.now(), whose origin is the process's start, so the first figure includes Node.js's
 * own boot and the bundle's load; not process.uptime(), which spares perf_hooks' load, about 1 ms,
 * but counts from a point 1 to 19 ms into the process's life, a different one in each). The start
 * record carries them as `startMs`: a slow start says which step it spent its time in, without a
 * profiler (docs/PERFORMANCE.md, "Where a start goes").
 * A step reached twice keeps its first time.
 */
const steps: Record<string, number> = {};

/** `at`: when it was reached, if not now (a helper's own account of its start). */
export function markStep(step: string, at = performance.now()): void {
  steps[step] ??= Math.round(at * 10) / 10;
}

/** The steps reached so far, in the order of their times. */
export function startSteps(): Record<string, number> {
  return Object.fromEntries(Object.entries(steps).sort((a, b) => a[1] - b[1]));
}
