/**
 * What an audit line may hold, as zod schemas: the log is a boundary (anyone with write access to
 * the file can put anything in it), so the reader and the verifier parse every line with these.
 */
import { z } from "zod";

const mac = z.string().regex(/^[0-9a-f]{64}$/, "64 hex digits");

/** The fields the chain adds to every record (audit.ts). */
export const ChainFields = z.looseObject({
  session: z.string().min(1).max(64),
  seq: z.number().int().nonnegative(),
  prev: mac.optional(),
  kid: z.string().max(64).optional(),
  anchor: mac.optional(),
  anchorHead: mac.optional(),
  /** On a session's first record: the last record of each session of the log that was over (auditHeads.ts). */
  prior: z
    .array(z.object({ session: z.string().min(1).max(64), seq: z.number().int().nonnegative(), mac }))
    .max(64)
    .optional(),
  from: mac.optional(),
});
export type ChainFields = z.infer<typeof ChainFields>;

const common = { time: z.iso.datetime(), server: z.string(), config: z.string() };

const DecisionRecord = z.looseObject({
  type: z.literal("decision"),
  ...common,
  tool: z.string(),
  layer: z.string(),
  rule: z.string().nullable(),
  decision: z.enum(["allow", "deny", "modify"]),
  reason: z.string(),
  latencyMs: z.number(),
  argsDigest: z.string(),
  needs: z
    .array(
      z.strictObject({
        capability: z.enum(["read", "write", "exec", "network", "sql"]),
        value: z.string().min(1).max(4096),
      }),
    )
    .max(32)
    .optional(),
});

const LifecycleRecord = z.looseObject({
  type: z.literal("lifecycle"),
  ...common,
  event: z.enum(["start", "exit"]),
  pid: z.number().int().optional(),
  status: z.number().int().optional(),
  withheld: z.array(z.string()).optional(),
  claimedName: z.string().optional(),
  /** When each step of the start was reached, ms since the proxy's process began (startClock.ts). */
  startMs: z.record(z.string(), z.number().nonnegative()).optional(),
  world: z
    .strictObject({ cwd: z.string().min(1), home: z.string().optional(), tmp: z.string().optional() })
    .optional(),
});

const KernelRecord = z.looseObject({
  type: z.literal("kernel"),
  ...common,
  event: z.string(),
  decision: z.enum(["deny", "observe"]),
  backend: z.string().optional(),
});

const LogRecord = z.looseObject({
  type: z.literal("audit"),
  time: z.iso.datetime(),
  event: z.enum(["rotate", "compact", "prune", "over-budget"]),
  file: z.string().optional(),
  head: mac.nullable().optional(),
  files: z.array(z.string()).optional(),
  sessions: z.array(z.string()).optional(),
  dropped: z
    .record(z.string(), z.string().regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, "runs such as 3-5,9"))
    .optional(),
  count: z.number().int().nonnegative().optional(),
  keep: z.number().int().nonnegative().optional(),
});

export const AuditRecord = z.discriminatedUnion("type", [
  DecisionRecord,
  LifecycleRecord,
  KernelRecord,
  LogRecord,
]);
export type AuditRecord = z.infer<typeof AuditRecord>;

/** The first issue of a failed parse, as "field: what was expected". */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "not an audit record";
  return issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}
