/** The peers block: each peer beside C-full, rebuilt from the records alone. */
import { describe, expect, it } from "vitest";
import { renderPeers } from "../src/peersReport.ts";
import { renderMarkdown } from "../src/render.ts";
import { summarize } from "../src/summarize.ts";
import { record } from "./records.ts";

/** A01 fires under C0 (viable) and under P-bwrap; A02 fires under C0 only; B01 breaks under P-bwrap. */
const records = [
  record({ config: "C0", id: "A01", trial: 1, fired: true }),
  record({ config: "C0", id: "A02", trial: 1, fired: true, visibility: "argument" }),
  record({ config: "C0", id: "B01", trial: 1, kind: "benign" }),
  record({ config: "C-full", id: "A01", trial: 1 }),
  record({ config: "C-full", id: "A02", trial: 1, visibility: "argument" }),
  record({ config: "C-full", id: "B01", trial: 1, kind: "benign", startMs: 300 }),
  record({ config: "P-bwrap", id: "A01", trial: 1, fired: true }),
  record({ config: "P-bwrap", id: "A02", trial: 1, visibility: "argument" }),
  record({ config: "P-bwrap", id: "B01", trial: 1, kind: "benign", passed: false, startMs: 250 }),
  record({ config: "P-bwrap", id: "C01", trial: 1, kind: "benign", category: "benign_corpus" }),
  record({ config: "P-srt", id: "A01", trial: 0, fired: null, notRun: "not run: srt is not installed" }),
];

describe("peers block", () => {
  const summary = summarize("t", records);

  it("puts C-full first, then each peer, with rates, corpus FPR and cold start", () => {
    const block = summary.peers;
    expect(block?.reference).toBe("C-full");
    expect(block?.rows.map((r) => [r.config, r.role])).toEqual([
      ["C-full", "reference"],
      ["P-bwrap", "peer"],
      ["P-srt", "peer"],
    ]);
    const bwrap = block?.rows[1];
    expect(bwrap?.vapr?.value).toBe(0.5);
    expect(bwrap?.fpr?.value).toBe(1);
    expect(bwrap?.corpus).toMatchObject({ benign: 1, failed: 0 });
    expect(bwrap?.startMs).toMatchObject({ n: 3, p50: 10 });
    expect(bwrap?.byVisibility.hidden).toMatchObject({ viable: 1, blockedViable: 0 });
    expect(bwrap?.byVisibility.argument).toMatchObject({ viable: 1, blockedViable: 1 });
    expect(bwrap?.firedHereOnly).toEqual(["A01"]);
    expect(bwrap?.benignFailed).toEqual(["B01"]);
    expect(block?.rows[2]).toMatchObject({ notRun: "not run: srt is not installed", vapr: null });
  });

  it("renders the section in summary.md, a peer that did not run with its reason", () => {
    const markdown = renderMarkdown(summary);
    expect(markdown).toContain("## Peers, side by side");
    expect(markdown).toMatch(/\| P-srt \| not run: srt is not installed \|/);
    expect(markdown).toMatch(
      /- \*\*P-bwrap\*\*: fired only under P-bwrap: A01; fired only under C-full: none; benign failed: B01/,
    );
  });

  it("is absent from a run without peers", () => {
    const plain = summarize(
      "t",
      records.filter((r) => !r.config.startsWith("P-")),
    );
    expect(plain.peers).toBeNull();
    expect(renderPeers(plain.peers)).toEqual([]);
  });
});
