import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { readRecords } from "../src/cli.ts";
import { renderCsv, renderMarkdown, scriptJson, writeReports } from "../src/render.ts";
import { summarize } from "../src/summarize.ts";
import { record } from "./records.ts";

const dir = mkdtempSync(join(tmpdir(), "mcpguard-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = "C-full</script><script>alert(1)</script>";
const CASE = "FR-01<img src=x onerror=alert(2)>";
const EVIDENCE = "<img src=x onerror=alert(3)>";
const CATEGORY = "file_read<img src=x onerror=alert(4)>";
const RUN = "run</title><script>alert(5)</script>";
const TITLE = "reads `~/.ssh` | <b>*all*</b>";

/** RFC 4180 CSV (quoted fields, doubled quotes, commas and line breaks in quotes) into rows of fields. */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (!quoted && (ch === "," || ch === "\n")) {
      row.push(field);
      field = "";
      if (ch === "\n") {
        rows.push(row);
        row = [];
      }
    } else {
      field += ch;
    }
  }
  return rows;
}

/** CSV rows as objects by the header's names. */
const csvObjects = (text: string) => {
  const [header = [], ...rows] = csvRows(text);
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ""])));
};

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
      record({
        runId: RUN,
        config: "C0",
        id: CASE,
        trial,
        fired: true,
        category: CATEGORY,
        title: TITLE,
        arguments: { path: EVIDENCE },
      }),
      record({ runId: RUN, config: CONFIG, id: CASE, trial, evidence: [EVIDENCE], category: CATEGORY }),
      record({ runId: RUN, config: CONFIG, id: "BN-01", trial, kind: "benign", latencyMs: trial }),
      record({ runId: RUN, config: CONFIG, id: "PE-02", trial: 0, notRun: `not run ${EVIDENCE}` }),
    ]);
    writeFileSync(join(dir, "trials.ndjson"), `${trials.map((t) => JSON.stringify(t)).join("\n")}\n`);
    const records = readRecords(dir);
    writeReports(dir, summarize(RUN, records), records);
    const html = readFileSync(join(dir, "index.html"), "utf8");

    const tags = startTags(html);
    expect(tags.filter((t) => t.name === "script")).toHaveLength(1);
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

    const code = tags.filter((t) => t.name === "script")[0]?.text ?? "";
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

  it("adds the case's title, note and arguments after the old columns of results.csv, and lists them in summary.md", () => {
    const records = [1, 2].flatMap((trial) => [
      record({
        config: "C0",
        id: "FR-01",
        trial,
        fired: true,
        title: TITLE,
        note: "a note, with a comma",
        arguments: { path: "{{home}}/.ssh/id_rsa", lines: 2 },
      }),
      record({ config: "C0", id: "BN-01", trial, kind: "benign" }),
      record({
        config: "C0",
        id: "PB-01",
        trial,
        kind: "benign",
        category: "protocol",
        title: "a protocol case",
        steps: [{ call: "lookup", arguments: { q: "x" } }],
        arguments: {},
      }),
    ]);
    const summary = summarize("r", records);
    const csv = renderCsv(summary, records);
    const rows = csvObjects(csv);
    const header = csv.split("\n")[0] ?? "";
    expect(header).toBe(
      "run_id,config,id,category,kind,visibility,trials,fired,failed,viable,stopped_by,stopped_rule,title,note,arguments,suite,not_run",
    );
    const fr = rows.find((r) => r.id === "FR-01");
    expect(fr?.title).toBe(TITLE);
    expect(fr?.note).toBe("a note, with a comma");
    expect(JSON.parse(fr?.arguments ?? "")).toEqual({ path: "{{home}}/.ssh/id_rsa", lines: 2 });
    // A record from before titles were kept: the new columns are empty, the old ones as they were.
    expect(rows.find((r) => r.id === "BN-01")).toMatchObject({
      title: "",
      note: "",
      arguments: "",
      failed: "0",
    });
    // The earlier columns are the same whether the new ones are filled or not.
    const without = csvRows(renderCsv(summary));
    expect(csvRows(csv).map((r) => r.slice(0, 12))).toEqual(without.map((r) => r.slice(0, 12)));

    const markdown = renderMarkdown(summary, records);
    expect(markdown).toContain("### What each case is");
    const line = markdown.split("\n").find((l) => l.startsWith("- **FR-01**")) ?? "";
    // The title's markup is escaped; the arguments are one code span that no backtick in them ends.
    expect(line).toContain("reads \\`~/.ssh\\` \\| \\<b\\>\\*all\\*\\</b\\>");
    expect(line).toContain('Arguments: `{"path":"{{home}}/.ssh/id_rsa","lines":2}`.');
    expect(line).toContain("a note, with a comma");
    expect(markdown).not.toContain("- **BN-01**");
    // A protocol case has steps, not one call: its arguments column is empty, summary.md shows the steps.
    expect(rows.find((r) => r.id === "PB-01")).toMatchObject({ title: "a protocol case", arguments: "" });
    expect(markdown).toContain('Protocol steps: `[{"call":"lookup","arguments":{"q":"x"}}]`.');
  });

  it("gives a config that did not run a row per case in results.csv, and one line in summary.md's Not run", () => {
    const why = "the kernel layer cannot run here: assumed absent (MCPGUARD_ASSUME_NO_L3=1)";
    const records = [
      record({ config: "C0", id: "FR-01", trial: 1, fired: true, title: TITLE }),
      record({ config: "C0", id: "BN-01", trial: 1, kind: "benign" }),
      record({ config: "C0", id: "PE-02", trial: 0, fired: null, notRun: "host sudo usable" }),
      ...["FR-01", "BN-01", "PE-02"].flatMap((id) =>
        ["C-ebpf", "C-full"].map((config) =>
          record({
            config,
            id,
            trial: 0,
            kind: id === "BN-01" ? "benign" : "attack",
            fired: null,
            passed: null,
            notRun: why,
            suite: "core",
            ...(id === "FR-01" ? { title: TITLE } : {}),
          }),
        ),
      ),
    ];
    const summary = summarize("r", records);
    expect(summary.configsNotRun).toEqual({ "C-ebpf": why, "C-full": why });
    const csv = renderCsv(summary, records);
    expect(csv.split("\n")[0]).toMatch(/,stopped_rule,title,note,arguments,suite,not_run$/);
    const rows = csvObjects(csv);
    // Every config × case has a row; the ones that ran have an empty not_run.
    expect(rows.map((r) => `${r.config} ${r.id} ${r.trials} ${r.not_run}`)).toEqual([
      `C-ebpf BN-01 0 ${why}`,
      `C-ebpf FR-01 0 ${why}`,
      `C-ebpf PE-02 0 ${why}`,
      `C-full BN-01 0 ${why}`,
      `C-full FR-01 0 ${why}`,
      `C-full PE-02 0 ${why}`,
      "C0 BN-01 1 ",
      "C0 FR-01 1 ",
      "C0 PE-02 0 host sudo usable",
    ]);
    // A row not run has the case's facts and no verdict.
    expect(rows.find((r) => r.config === "C-full" && r.id === "FR-01")).toMatchObject({
      category: "file_read",
      kind: "attack",
      visibility: "hidden",
      fired: "",
      failed: "",
      viable: "",
      stopped_by: "",
      title: TITLE,
      suite: "core",
    });
    expect(rows.find((r) => r.config === "C0" && r.id === "BN-01")).toMatchObject({
      failed: "0",
      suite: "core",
    });

    const markdown = renderMarkdown(summary, records);
    const notRun = markdown.slice(markdown.indexOf("## Not run"));
    expect(notRun.trim().split("\n")).toEqual([
      "## Not run",
      "",
      `- config C-ebpf (3 cases): not run: ${why}`,
      `- config C-full (3 cases): not run: ${why}`,
      "- PE-02 under C0: host sudo usable",
    ]);
    // Labelled as configs not run, not as a partial run of them; the case subset is a partial run.
    expect(markdown).toContain(`> **Configs not run.** C-ebpf and C-full were not run (${why})`);
    expect(markdown).toContain("> **Partial run.** This run covers 2 of 82 core cases");
  });

  it("lists the kernel's denials per config beside the layers in summary.md, and only core cases beside Table 1", () => {
    const denial = (survived: "runtime probe" | null) => ({
      backend: "landlock",
      syscall: "openat",
      target: survived ? "/usr/share/locale/locale.alias" : "{{trial}}/home/.ssh/id_rsa",
      access: "r",
      count: 1,
      when: "call" as const,
      survived,
    });
    const records = [
      record({
        config: "C-full",
        id: "FR-01",
        trial: 1,
        stoppedBy: "L3:landlock",
        kernelDenials: [denial(null)],
      }),
      record({
        config: "C-full",
        id: "BN-01",
        trial: 1,
        kind: "benign",
        kernelDenials: [denial("runtime probe")],
      }),
      record({ config: "C-full", id: "FR-99", trial: 1, suite: "extension" }),
      record({ config: "C-full", id: "XX-01", trial: 1, suite: "external" }),
    ];
    const summary = summarize("r", records);
    expect(summary.configs["C-full"]?.kernel).toEqual({
      trials: 2,
      decided: 1,
      besideDecision: 0,
      survived: 1,
    });
    const markdown = renderMarkdown(summary, records);
    expect(markdown).toContain(
      "| config | trials with a denial | decided by the kernel | beside a decision | all survived |",
    );
    expect(markdown).toContain("| C-full | 2 | 1 | 0 | 1 |");
    // Extension and external cases have tables of their own, never a row in the core cases table.
    const cases = markdown.slice(markdown.indexOf("## Cases"), markdown.indexOf("## Suite"));
    expect(cases).toContain("| FR-01 |");
    expect(cases).not.toContain("FR-99");
    expect(cases).not.toContain("XX-01");
    expect(markdown).toContain("> **Extended run.** 1 case of the core categories beyond the paper's 82 ran");
    expect(markdown).toContain("> **External cases.** 1 case from outside test_cases/ ran");
    expect(renderCsv(summary, records)).toMatch(/,C-full,FR-99,file_read,attack,hidden,1,0,.*,extension,\n/);
  });

  it("escapes JSON for a script: <, >, &, U+2028 and U+2029, and it still evaluates to the value", () => {
    const value = { s: "</script><!--<script>&\u2028\u2029" };
    const json = scriptJson(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(new Script(`(${json})`).runInNewContext()).toEqual(value);
    expect(JSON.parse(json)).toEqual(value);
  });
});
