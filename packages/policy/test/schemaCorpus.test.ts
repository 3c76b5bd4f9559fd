/**
 * The policy and override schemas give, for every input of a fixed corpus, what they gave when they were
 * written with zod's classic API (`import { z } from "zod"`): the same acceptance, the same output (defaults
 * included, keys in the same order) and the same issues (code, path, message and the rest), in the same
 * order. test/fixtures/classic-zod.jsonl was recorded from the classic schemas before they moved to
 * zod/mini, and is never re-recorded from the schemas it checks. A capability added since (`sockets`,
 * whose default is empty) is taken out of each output, so the comparison covers what the corpus knew.
 *
 * The corpus's form and the comparison: ../../protocol/test/classicZod.ts.
 */
import { describe, expect, it } from "vitest";
import { corpus, differingFromClassic } from "../../protocol/test/classicZod.ts";
import { OverrideFile, Policy } from "../src/schema.ts";

const CASES = corpus(new URL("fixtures/classic-zod.jsonl", import.meta.url));

/** Capabilities added since the corpus was recorded, with their defaults. */
const ADDED: Record<string, string> = { sockets: "[]" };
const withoutAdded = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutAdded)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([k, v]) => !(k in ADDED && JSON.stringify(v) === ADDED[k]))
            .map(([k, v]) => [k, withoutAdded(v)]),
        )
      : value;
/** The schema, its output without the added capabilities' defaults. */
const asRecorded = (schema: { safeParse(input: unknown): { success: boolean; data?: unknown } }) => ({
  safeParse: (input: unknown) => {
    const result = schema.safeParse(input);
    return result.success ? { ...result, data: withoutAdded(result.data) } : result;
  },
});

describe("the policy schemas against what classic zod gave", () => {
  it.each([
    ["Policy", Policy],
    ["OverrideFile", OverrideFile],
  ] as const)("%s", (name, schema) => {
    expect(differingFromClassic(CASES, name, asRecorded(schema), 101)).toEqual([]);
  });
});
