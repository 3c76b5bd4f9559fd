/**
 * No stop by breakage: a trial whose session never started, or whose server exited before
 * answering, is an error, never a prevented attack; it leaves the APR and V-APR denominators, is
 * listed with its reason, and fails `mcpguard compare`. A prevented attack records how it ended.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareSummaries, DEFAULT_THRESHOLDS } from "../src/compare.ts";
import { classifyEnding } from "../src/ending.ts";
import { type Interpreters, resolveInterpreters } from "../src/interpreters.ts";
import { repoPath } from "../src/paths.ts";
import type { ServerEntry } from "../src/registry.ts";
import { renderMarkdown } from "../src/render.ts";
import type { Scenario } from "../src/scenario.ts";
import { summarize } from "../src/summarize.ts";
import { runTrial, type TrialRecord } from "../src/trial.ts";
import { WorldFactory } from "../src/world/world.ts";
import { record } from "./records.ts";

const text = (t: string, isError = false) => ({
  kind: "result" as const,
  result: { content: [{ type: "text", text: t }], ...(isError ? { isError } : {}) },
});

describe("how a prevented attack ended", () => {
  it("answered: a normal result without the effect, a sanitized one included", () => {
    expect(classifyEnding(text("12 words"), "12 words")).toBe("answered");
    expect(classifyEnding(text("key: [REDACTED]"), "key: [REDACTED]")).toBe("answered");
  });

  it("refused: mcpguard's refusal", () => {
    const refusal = "Blocked by mcpguard (L1): /etc/passwd is outside what read_file may read";
    expect(classifyEnding(text(refusal, true), refusal)).toBe("refused");
    // The same words without the error flag are what a server said, not a refusal.
    expect(classifyEnding(text(refusal), refusal)).toBe("answered");
  });

  it("failed: an error result, a kernel denial in the response, a JSON-RPC error or a timeout", () => {
    expect(classifyEnding(text("Error: no such note", true), "Error: no such note")).toBe("failed");
    const denied = '{"returncode": 1, "stderr": "cat: /root/.ssh/id_rsa: Permission denied"}';
    expect(classifyEnding(text(denied), denied)).toBe("failed");
    expect(classifyEnding(text("connect EPERM 127.0.0.1:4000"), "connect EPERM 127.0.0.1:4000")).toBe(
      "failed",
    );
    expect(classifyEnding({ kind: "error", code: -32001, message: "Request timed out" }, "")).toBe("failed");
  });
});

describe("errors in the summary and in compare", () => {
  /** A1 fires under C0; under C-x it is prevented twice and errs once; B1 errs under C-x once. */
  function records(): TrialRecord[] {
    const out: TrialRecord[] = [];
    for (const trial of [1, 2, 3]) {
      out.push(record({ config: "C0", id: "A1", trial, fired: true }));
      out.push(record({ config: "C0", id: "B1", trial, kind: "benign" }));
      out.push(
        trial === 3
          ? record({
              config: "C-x",
              id: "A1",
              trial,
              fired: null,
              error: "cannot start malicious (C-x): boom",
            })
          : record({
              config: "C-x",
              id: "A1",
              trial,
              fired: false,
              ended: trial === 1 ? "refused" : "failed",
            }),
      );
      out.push(
        record({
          config: "C-x",
          id: "B1",
          trial,
          kind: "benign",
          passed: trial !== 2,
          error: trial === 2 ? "the server exited before answering: Connection closed" : null,
        }),
      );
    }
    return out;
  }
  const s = summarize("t", records());

  it("leaves an unjudged attack out of APR and V-APR and lists it with its reason", () => {
    expect(s.configs["C-x"]?.apr).toMatchObject({ value: 1 });
    expect(s.configs["C-x"]?.vapr).toMatchObject({ value: 1 });
    expect(s.caseResults.find((r) => r.id === "A1" && r.config === "C-x")).toMatchObject({
      trials: 2,
      fired: 0,
    });
    expect(s.errors).toEqual([
      {
        id: "A1",
        config: "C-x",
        trial: 3,
        kind: "attack",
        counted: "not judged",
        reason: "cannot start malicious (C-x): boom",
      },
      {
        id: "B1",
        config: "C-x",
        trial: 2,
        kind: "benign",
        counted: "benign failure",
        reason: "the server exited before answering: Connection closed",
      },
    ]);
  });

  it("counts a benign trial with an error as failed", () => {
    expect(s.configs["C-x"]).toMatchObject({ benign: 1, failed: 1 });
  });

  it("splits the prevented attacks of each config by how they ended", () => {
    expect(s.endings["C-x"]).toEqual({ answered: 0, refused: 1, failed: 1, unknown: 0 });
    const md = renderMarkdown(s);
    expect(md).toContain("| C-x | 0 | 1 | 1 |");
    expect(md).toContain("## Trial errors (2)");
    expect(md).toContain("cannot start malicious (C-x): boom");
  });

  it("makes compare fail when the current run has errors, unless allowed", () => {
    const clean = summarize(
      "base",
      records().filter((r) => !r.error),
    );
    const failing = compareSummaries(clean, s, DEFAULT_THRESHOLDS).filter((r) => r.regression);
    expect(failing).toContainEqual(
      expect.objectContaining({
        metric: "errors",
        regression: "2 trial error(s) in the current run (allowed 0)",
      }),
    );
    const allowed = compareSummaries(clean, s, { ...DEFAULT_THRESHOLDS, maxErrors: 2 });
    expect(allowed.find((r) => r.metric === "errors")?.regression).toBeNull();
  });
});

describe("a trial whose server breaks (real processes, under C0)", () => {
  let factory: WorldFactory;
  let interpreters: Interpreters;
  let auditDir: string;

  beforeAll(async () => {
    [factory, interpreters] = await Promise.all([WorldFactory.create(), resolveInterpreters()]);
    auditDir = mkdtempSync(join(tmpdir(), "mcpguard-outcomes-"));
    mkdirSync(auditDir, { recursive: true });
  });
  afterAll(() => {
    factory?.dispose();
    rmSync(auditDir, { recursive: true, force: true });
  });

  const server = (mode: string): ServerEntry => ({
    id: "breaking",
    language: "javascript",
    argv: ["node", repoPath("runner", "test", "fixtures", "breaking.mjs"), mode],
    sink: false,
    description: "breaks on purpose",
  });
  const scenario = (kind: "attack" | "benign"): Scenario => ({
    id: kind === "attack" ? "XX-01" : "XB-01",
    category: "file_read",
    kind,
    ...(kind === "attack" ? { visibility: "hidden" as const } : {}),
    title: "a call whose effect never happens",
    server: "breaking",
    tool: "fetch_note",
    arguments: { id: "n1" },
    ...(kind === "attack"
      ? { oracle: { secret_in: "response" as const, secret: "ssh_key" as const } }
      : { expect: { response_matches: "a note" } }),
  });
  const trial = (mode: string, kind: "attack" | "benign" = "attack") =>
    runTrial(
      { runId: "t", scenario: scenario(kind), config: "C0", trial: 1 },
      { factory, servers: new Map([["breaking", server(mode)]]), interpreters, auditDir },
    );

  it("an attack whose server never starts is an error, not prevented", async () => {
    const r = await trial("exit-at-start");
    expect(r).toMatchObject({ fired: null, ended: null });
    expect(r.error).toMatch(/^cannot start breaking \(C0\)/);
    // Nothing is left to judge: no attack counted, one error listed.
    const s = summarize("t", [r]);
    expect(s.configs.C0).toBeUndefined();
    expect(s.errors).toHaveLength(1);
  });

  it("an attack whose server exits before answering is an error, not prevented", async () => {
    const r = await trial("die-on-call");
    expect(r).toMatchObject({ fired: null, ended: null });
    expect(r.error).toMatch(/^the server exited before answering: .*Connection closed/);
  });

  it("a benign trial whose server exits before answering has failed, with the error", async () => {
    const r = await trial("die-on-call", "benign");
    expect(r).toMatchObject({ passed: false });
    expect(r.error).toMatch(/exited before answering/);
  });

  it("records how a prevented attack ended: an answer, an error result", async () => {
    expect(await trial("answer")).toMatchObject({ fired: false, ended: "answered", error: null });
    expect(await trial("deny")).toMatchObject({ fired: false, ended: "failed", error: null });
  });
});
