/**
 * A JSON object, as a check rather than a cast: for the few readers of files and child output that
 * stay off zod because they run before a start loads it (the proxy's `run` path, the BPF loader's
 * events, package entry points that keep their schemas in a module of their own).
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
