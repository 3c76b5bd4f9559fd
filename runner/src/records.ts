/**
 * Reading `trials.ndjson` back (report, merge): every line is checked against the fields the
 * summaries and reports use, so a truncated, hand-edited or foreign file is refused with the line
 * and the field, never summed into "NaN trial runs". Fields added over time are optional, as older
 * runs do not have them; unknown fields pass through (DESIGN.md "Results contract": extend, never break).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "@mcpguard/proxy/args";
import { z } from "zod";
import { ENDINGS } from "./ending.js";
import type { TrialRecord } from "./trial.js";

const ms = z.number().finite().nonnegative();

export const TrialRecordSchema = z.looseObject({
  runId: z.string(),
  config: z.string().min(1),
  id: z.string().min(1),
  category: z.string(),
  kind: z.enum(["attack", "benign"]),
  visibility: z.enum(["argument", "hidden"]).nullable(),
  server: z.string(),
  tool: z.string(),
  tags: z.array(z.string()).optional(),
  title: z.string().optional(),
  note: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  steps: z.array(z.unknown()).optional(),
  trial: z.number().int().nonnegative(),
  fired: z.boolean().nullable(),
  passed: z.boolean().nullable(),
  evidence: z.array(z.string()),
  stoppedBy: z.string().nullable(),
  stoppedRule: z.string().nullable().optional(),
  isError: z.boolean(),
  latencyMs: ms.nullable(),
  startMs: ms.nullable(),
  durationMs: ms,
  responseBytes: z.number().int().nonnegative(),
  responseSha256: z.string(),
  sinkContacts: z.number().int().nonnegative(),
  sinkBytes: z.number().int().nonnegative(),
  sinkSha256: z.string(),
  containment: z.string().nullable(),
  error: z.string().nullable(),
  ended: z
    .enum(ENDINGS as [string, ...string[]])
    .nullable()
    .optional(),
  cwd: z.string().optional(),
  notRun: z.string().nullable(),
  l3: z.record(z.string(), z.string()).nullable(),
  /** The sha256 of the case's scenario file; absent in runs written before it was kept. */
  caseSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

/** A trial record with the sha256 of its case's file, as runs write it now. */
export type HashedRecord = TrialRecord & { caseSha256?: string };

/** Each case's sha256 by case id (the first record's that carries one); empty for runs written before. */
export function caseHashes(records: readonly TrialRecord[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of records as readonly HashedRecord[])
    if (r.caseSha256 && !Object.hasOwn(out, r.id)) out[r.id] = r.caseSha256;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The records of a run directory's trials.ndjson, each checked; a bad line is one UsageError. */
export function readRecords(dir: string): TrialRecord[] {
  const file = join(dir, "trials.ndjson");
  if (!existsSync(file)) throw new UsageError(`${file} does not exist`);
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line, i) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new UsageError(`${file}:${i + 1}: not a JSON record (${(error as Error).message})`);
      }
      const parsed = TrialRecordSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
        throw new UsageError(`${file}:${i + 1}: not a trial record (${where}${issue?.message ?? "invalid"})`);
      }
      return parsed.data as unknown as TrialRecord;
    });
}
