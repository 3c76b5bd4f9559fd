/** The start clock: milliseconds since the process began, as performance.now() counts them. */
import { expect, it } from "vitest";
import { sinceStartMs } from "../src/clock.ts";

it("counts milliseconds from the process's start, as performance.now() does, and never goes back", () => {
  const a = sinceStartMs();
  const p = performance.now();
  const b = sinceStartMs();
  // The two origins are Node.js's start and its performance time origin, about 1 ms apart.
  expect(Math.abs(a - p)).toBeLessThan(50);
  expect(b).toBeGreaterThanOrEqual(a);
});
