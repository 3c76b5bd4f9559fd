import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { readRecords } from "../src/cli.ts";
import { scriptJson, writeReports } from "../src/render.ts";
import { summarize } from "../src/summarize.ts";
import { record } from "./records.ts";

const dir = mkdtempSync(join(tmpdir(), "mcpguard-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = "C-full</script><script>alert(1)</script>";
const CASE = "FR-01<img src=x onerror=alert(2)>";
const EVIDENCE = "<img src=x onerror=alert(3)>";
const CATEGORY = "file_read<img src=x onerror=alert(4)>";
const RUN = "run</title><script>alert(5)</script>";

interface Tag {
  name: string;
  /** The raw text of a <script> or <style>, or of a <title>. */
  text?: string;
}

const RAW_TEXT = new Set(["script", "style", "title", "textarea"]);

/** The start tags of a document, as an HTML tokenizer finds them (raw text elements skipped whole). */
function startTags(html: string): Tag[] {
  const tags: Tag[] = [];
  let i = 0;
  for (;;) {
    i = html.indexOf("<", i);
    if (i === -1) return tags;
    if (html.startsWith("<!--", i)) {
      i = html.indexOf("-->", i + 4) + 3;
      continue;
    }
    const start = /^<([A-Za-z][^\s/>]*)/.exec(html.slice(i));
    if (!start) {
      i += 1;
      continue;
    }
    const name = (start[1] as string).toLowerCase();
    const end = /^(?:[^>"']|"[^"]*"|'[^']*')*>/.exec(html.slice(i));
    if (!end) throw new Error(`unterminated <${name}>`);
    i += end[0].length;
    if (!RAW_TEXT.has(name)) {
      tags.push({ name });
      continue;
    }
    const close = new RegExp(`</${name}[\\s/>]`, "i").exec(html.slice(i));
    if (!close) throw new Error(`unterminated <${name}> element`);
    tags.push({ name, text: html.slice(i, i + close.index) });
    i += close.index;
  }
}

describe("HTML report", () => {
  it("shows markup from trials.ndjson as text: no injected tag, data intact", () => {
    const trials = [1, 2].flatMap((trial) => [
      record({ runId: RUN, config: "C0", id: CASE, trial, fired: true, category: CATEGORY }),
      record({ runId: RUN, config: CONFIG, id: CASE, trial, evidence: [EVIDENCE], category: CATEGORY }),
      record({ runId: RUN, config: CONFIG, id: "BN-01", trial, kind: "benign", latencyMs: trial }),
      record({ runId: RUN, config: CONFIG, id: "PE-02", trial: 0, notRun: `not run ${EVIDENCE}` }),
    ]);
    writeFileSync(join(dir, "trials.ndjson"), `${trials.map((t) => JSON.stringify(t)).join("\n")}\n`);
    const records = readRecords(dir);
    writeReports(dir, summarize(RUN, records), records);
    const html = readFileSync(join(dir, "index.html"), "utf8");

    const tags = startTags(html);
    expect(tags.filter((t) => t.name === "script")).toHaveLength(2);
    expect(tags.filter((t) => t.name === "img")).toEqual([]);
    expect(tags.find((t) => t.name === "title")?.text).toBe(
      "MCPGuard benchmark — run&#60;/title&#62;&#60;script&#62;alert(5)&#60;/script&#62;",
    );
    for (const script of tags.filter((t) => t.name === "script")) {
      expect(script.text).not.toMatch(/<!--|<\/?script/i);
    }
    expect(html).toContain("<th>C-full&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;</th>");
    // Not one of the paper's categories, so it is reported as a suite of its own, escaped like the rest.
    expect(html).toContain("file_read&#60;img src=x onerror=alert(4)&#62;");

    const code = tags.filter((t) => t.name === "script")[1]?.text ?? "";
    const literal = /^const data = (.*);$/m.exec(code)?.[1] ?? "";
    expect(() => new Script(code)).not.toThrow();
    const data = JSON.parse(literal);
    expect(data.configs).toEqual(["C0", CONFIG]);
    expect(Object.keys(data.latency)).toEqual([CONFIG]);
    // Every trial is embedded for the drill-down, its markup escaped in the script and intact in the data.
    expect(data.cases.map((c: string[]) => c[0])).toContain(CASE);
    expect(data.trials.some((t: unknown[]) => (t[4] as string[]).includes(EVIDENCE))).toBe(true);
    expect(code).not.toContain(EVIDENCE);
  });

  it("escapes JSON for a script: <, >, &, U+2028 and U+2029, and it still evaluates to the value", () => {
    const value = { s: "</script><!--<script>&\u2028\u2029" };
    const json = scriptJson(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(new Script(`(${json})`).runInNewContext()).toEqual(value);
    expect(JSON.parse(json)).toEqual(value);
  });
});
