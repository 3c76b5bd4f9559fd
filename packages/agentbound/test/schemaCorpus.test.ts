/**
 * The manifest schema gives, for every input of a fixed corpus, what it gave when it was written with zod's
 * classic API (`import { z } from "zod"`): the same acceptance, the same output (defaults included, keys in
 * the same order) and the same issues (code, path, message and the rest), in the same order.
 * test/fixtures/classic-zod.jsonl was recorded from the classic schemas before they moved to zod/mini, and
 * is never re-recorded from the schemas it checks.
 *
 * The corpus's form and the comparison: ../../protocol/test/classicZod.ts.
 */
import { describe, expect, it } from "vitest";
import { corpus, differingFromClassic } from "../../protocol/test/classicZod.ts";
import { Manifest } from "../src/manifest.ts";

const CASES = corpus(new URL("fixtures/classic-zod.jsonl", import.meta.url));

describe("the manifest schema against what classic zod gave", () => {
  it.each([["Manifest", Manifest]] as const)("%s", (name, schema) => {
    expect(differingFromClassic(CASES, name, schema, 101)).toEqual([]);
  });
});
