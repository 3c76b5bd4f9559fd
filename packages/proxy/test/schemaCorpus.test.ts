/**
 * The pin file, audit record and client config schemas give, for every input of a fixed corpus, what they
 * gave when they were written with zod's classic API (`import { z } from "zod"`): the same acceptance, the
 * same output (defaults included, keys in the same order) and the same issues (code, path, message and the
 * rest), in the same order. For client configs, what parseClientConfig makes of the file: its entries, or
 * its one line. test/fixtures/classic-zod.jsonl was recorded from the classic schemas before they moved to
 * zod/mini, and is never re-recorded from the schemas it checks.
 *
 * The corpus's form and the comparison: ../../protocol/test/classicZod.ts.
 */
import { describe, expect, it } from "vitest";
import { corpus, differingFromClassic, encode } from "../../protocol/test/classicZod.ts";
import { AuditRecord, ChainFields } from "../src/auditRecords.ts";
import { PinFile } from "../src/pins.ts";
import { parseClientConfig, StdioEntry } from "../src/wrap/clients.ts";

const CASES = corpus(new URL("fixtures/classic-zod.jsonl", import.meta.url));

describe("the pin, audit and client config schemas against what classic zod gave", () => {
  it.each([
    ["PinFile", PinFile],
    ["ChainFields", ChainFields],
    ["AuditRecord", AuditRecord],
    ["StdioEntry", StdioEntry],
  ] as const)("%s", (name, schema) => {
    expect(differingFromClassic(CASES, name, schema, 101)).toEqual([]);
  });

  it("ClientConfig: what parseClientConfig makes of a file (its entries, or its one line)", () => {
    const cases = CASES.filter((c) => c.schema === "ClientConfig");
    expect(cases.length).toBeGreaterThan(100);
    const differing = cases.flatMap(({ input, result }) => {
      let now: unknown;
      try {
        const { shapes, entries } = parseClientConfig("/w/mcp.json", Buffer.from(JSON.stringify(input)));
        now = encode({ shapes, entries });
      } catch (error) {
        now = { error: `${(error as Error).name}: ${(error as Error).message}` };
      }
      return JSON.stringify(now) === JSON.stringify(result) ? [] : [{ input, recorded: result, now }];
    });
    expect(differing.slice(0, 3)).toEqual([]);
  });
});
