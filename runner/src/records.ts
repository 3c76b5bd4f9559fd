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
});

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
