/**
 * The listing scan against whole listings (listingCorpus.ts): every poisoned tool and `instructions`
 * refused (flagged or withheld), every honest one, the real servers' listings among them, untouched.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ItemFinding, type ListingKind, scanInstructions, scanItem } from "../src/index.ts";
import { calculator, HONEST, POISONED, POISONED_LATER } from "./listingCorpus.ts";

/** What the scan finds in a case: the tool's findings, or the instructions'. */
function findings(c: { tool?: Record<string, unknown>; instructions?: string }): string[] {
  if (c.instructions !== undefined)
    return scanInstructions({ instructions: c.instructions }).findings.map((f) => `${f.rule} ${f.at}`);
  const tool = c.tool as Record<string, unknown>;
  return scanItem("tools", tool, { ownNames: new Set([String(tool.name)]) }).map(
    (f: ItemFinding) => `${f.rule} ${f.where}`,
  );
}

describe("poisoned listings, in ten languages and the forms that hide an order", () => {
  it.each(POISONED.map((c) => [c.id, c.lang, c.form, c] as const))(
    "refuses %s (%s, %s)",
    (_id, _lang, _form, c) => {
      expect(findings(c)).not.toEqual([]);
    },
  );
});

describe("poisoned descriptions written after the first rules", () => {
  it.each(POISONED_LATER.map((c) => [c.id, c.lang, c.description] as const))(
    "refuses %s (%s): %s",
    (_id, _lang, description) => {
      expect(findings({ tool: calculator({ description: `Adds two numbers. ${description}` }) })).not.toEqual(
        [],
      );
    },
  );
});

describe("honest listings stay as they are", () => {
  it.each(HONEST)("%j", (description) => {
    expect(findings({ tool: calculator({ description }) })).toEqual([]);
  });

  /**
   * The listings of the real suite's servers (servers/real: server-filesystem 2025.3.28 and
   * 2026.8.31, server-memory, server-everything), as their tools/list, prompts/list,
   * resources/list, resources/templates/list and initialize answered (fixtures/real-listings.json).
   */
  const real = JSON.parse(
    readFileSync(join(import.meta.dirname, "fixtures", "real-listings.json"), "utf8"),
  ) as Record<string, { instructions?: string } & Record<ListingKind, Record<string, unknown>[]>>;
  const items = Object.entries(real).flatMap(([server, listing]) =>
    (["tools", "prompts", "resources", "resourceTemplates"] as const).flatMap((kind) =>
      (listing[kind] ?? []).map((item) => [server, kind, String(item.name ?? item.uri), item] as const),
    ),
  );

  it.each(items)("%s %s %s", (_server, kind, _name, item) => {
    const own = new Set(items.filter(([, k]) => k === "tools").map(([, , name]) => name));
    expect(scanItem(kind, item, { ownNames: own })).toEqual([]);
  });

  it.each(Object.entries(real).filter(([, l]) => l.instructions))("%s instructions", (_server, listing) => {
    expect(scanInstructions({ instructions: listing.instructions }).findings).toEqual([]);
  });

  /** The tool and property descriptions of the reference MCP servers (fixtures/mcp-server-descriptions.json). */
  const reference = JSON.parse(
    readFileSync(join(import.meta.dirname, "fixtures", "mcp-server-descriptions.json"), "utf8"),
  ) as { descriptions: { server: string; description: string }[] };

  it(`${reference.descriptions.length} descriptions of the reference MCP servers`, () => {
    const flagged = reference.descriptions
      .filter(({ description }) => findings({ tool: calculator({ description }) }).length > 0)
      .map(({ server, description }) => `${server}: ${description.slice(0, 80)}`);
    expect(flagged).toEqual([]);
  });
});
