/**
 * Trials that prove nothing, and how prevented attacks ended. A session that never started, or a
 * server that exited before answering, is an error: the attack is not judged and leaves the APR
 * and V-APR denominators, and the run lists it with its reason. A prevented attack is split by how
 * it ended (see ending.ts), so that a config that stops attacks by breaking servers shows it.
 */

import { suiteOf } from "./coreSet.js";
import { ENDINGS, type Ending } from "./ending.js";
import type { TrialRecord } from "./trial.js";

/** An attack trial with an error whose effect was not seen: not judged, out of every rate. */
export function isUnjudged(r: TrialRecord): boolean {
  return r.kind === "attack" && r.error !== null && r.fired === null && !r.notRun;
}

export interface TrialError {
  id: string;
  config: string;
  trial: number;
  kind: "attack" | "benign";
  /** What the error did to the metrics. */
  counted: "not judged" | "benign failure" | "fired";
  reason: string;
}

/** Every trial that ended in an error, in a stable order. */
export function trialErrors(records: TrialRecord[]): TrialError[] {
  return records
    .filter((r) => r.error !== null && !r.notRun)
    .map((r) => ({
      id: r.id,
      config: r.config,
      trial: r.trial,
      kind: r.kind,
      counted:
        r.kind === "benign"
          ? ("benign failure" as const)
          : r.fired
            ? ("fired" as const)
            : ("not judged" as const),
      reason: r.error as string,
    }))
    .sort((a, b) => a.config.localeCompare(b.config) || a.id.localeCompare(b.id) || a.trial - b.trial);
}

export type EndingCounts = Record<Ending, number> & { unknown: number };

export function emptyEndings(): EndingCounts {
  return { answered: 0, refused: 0, failed: 0, unknown: 0 };
}

/** Add the ending of each prevented attack trial (`unknown`: records written before endings). */
export function countEndings(records: TrialRecord[], into = emptyEndings()): EndingCounts {
  for (const r of records) {
    if (r.kind !== "attack" || r.fired !== false) continue;
    const ended = r.ended && (ENDINGS as readonly string[]).includes(r.ended) ? r.ended : "unknown";
    into[ended]++;
  }
  return into;
}

/** Per config, how the core suite's prevented attack trials ended. */
export function preventionEndings(records: TrialRecord[]): Record<string, EndingCounts> {
  const out: Record<string, EndingCounts> = {};
  for (const r of records) {
    if (suiteOf(r) !== "core") continue;
    out[r.config] ??= emptyEndings();
  }
  for (const [config, counts] of Object.entries(out)) {
    countEndings(
      records.filter((r) => r.config === config && suiteOf(r) === "core"),
      counts,
    );
  }
  return out;
}

const endingCell = (e: EndingCounts | undefined) =>
  e
    ? `${e.answered} | ${e.refused} | ${e.failed}${e.unknown ? ` (+${e.unknown} unknown)` : ""}`
    : "– | – | –";

/** summary.md: the prevented attack trials of each config, split by how they ended. */
export function renderEndings(
  endings: Record<string, EndingCounts> | undefined,
  configs: string[],
): string[] {
  if (!endings || configs.every((c) => !endings[c])) return [];
  return [
    "",
    "## How prevented attacks ended",
    "",
    "Attack trials whose oracle did not fire, by how the call ended: **answered** (the tool answered normally, without the effect; a sanitized answer counts here), **refused** (a layer refused the call: a deny in the audit log, or mcpguard's refusal), **failed** (the server or the call failed: an error result, a kernel EACCES/EPERM in the response, a timeout).",
    "",
    "| config | answered | refused | failed |",
    "|---|---:|---:|---:|",
    ...configs.map((c) => `| ${c} | ${endingCell(endings[c])} |`),
  ];
}

/** summary.md: the trials that ended in an error, with their reasons. */
export function renderErrors(errors: TrialError[] | undefined): string[] {
  if (!errors?.length) return [];
  const unjudged = errors.filter((e) => e.counted === "not judged").length;
  const lines = [
    "",
    `## Trial errors (${errors.length})`,
    "",
    `A session that never started, a server that exited before answering, or a trial out of time proves nothing about a defense. ${unjudged} attack trial(s) were not judged and are left out of APR and V-APR; a benign trial with an error counts as failed; an attack whose effect was seen anyway counts as fired.`,
    "",
    "| config | case | trial | counted | reason |",
    "|---|---|---:|---|---|",
  ];
  const cell = (s: string) => s.replace(/\s+/g, " ").replace(/\|/g, "\\|").slice(0, 300);
  for (const e of errors)
    lines.push(`| ${e.config} | ${e.id} | ${e.trial} | ${e.counted} | ${cell(e.reason)} |`);
  return lines;
}
