/**
 * What an audit line may hold, as zod schemas: the log is a boundary (anyone with write access to
 * the file can put anything in it), so the reader and the verifier parse every line with these.
 */
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";

const mac = z.string().check(z.regex(/^[0-9a-f]{64}$/, "64 hex digits"));

/** The fields the chain adds to every record (audit.ts). */
export const ChainFields = z.looseObject({
  session: z.string().check(z.minLength(1), z.maxLength(64)),
  seq: z.int().check(z.nonnegative()),
  prev: z.optional(mac),
  kid: z.optional(z.string().check(z.maxLength(64))),
  anchor: z.optional(mac),
  anchorHead: z.optional(mac),
  /** On a session's first record: the last record of each session of the log that was over (auditHeads.ts). */
  prior: z.optional(
    z
      .array(
        z.object({
          session: z.string().check(z.minLength(1), z.maxLength(64)),
          seq: z.int().check(z.nonnegative()),
          mac,
        }),
      )
      .check(z.maxLength(64)),
  ),
  from: z.optional(mac),
});
export type ChainFields = z.infer<typeof ChainFields>;

const common = { time: z.iso.datetime(), server: z.string(), config: z.string() };

const DecisionRecord = z.looseObject({
  type: z.literal("decision"),
  ...common,
  tool: z.string(),
  layer: z.string(),
  rule: z.nullable(z.string()),
  decision: z.enum(["allow", "deny", "modify"]),
  reason: z.string(),
  latencyMs: z.number(),
  argsDigest: z.string(),
  needs: z.optional(
    z
      .array(
        z.strictObject({
          capability: z.enum(["read", "write", "exec", "network", "sql"]),
          value: z.string().check(z.minLength(1), z.maxLength(4096)),
        }),
      )
      .check(z.maxLength(32)),
  ),
});

const LifecycleRecord = z.looseObject({
  type: z.literal("lifecycle"),
  ...common,
  event: z.enum(["start", "exit"]),
  pid: z.optional(z.int()),
  status: z.optional(z.int()),
  withheld: z.optional(z.array(z.string())),
  claimedName: z.optional(z.string()),
  /** When each step of the start was reached, ms since the proxy's process began (startClock.ts). */
  startMs: z.optional(z.record(z.string(), z.number().check(z.nonnegative()))),
  world: z.optional(
    z.strictObject({
      cwd: z.string().check(z.minLength(1)),
      home: z.optional(z.string()),
      tmp: z.optional(z.string()),
    }),
  ),
});

const KernelRecord = z.looseObject({
  type: z.literal("kernel"),
  ...common,
  event: z.string(),
  decision: z.enum(["deny", "observe"]),
  backend: z.optional(z.string()),
});

const LogRecord = z.looseObject({
  type: z.literal("audit"),
  time: z.iso.datetime(),
  event: z.enum(["rotate", "compact", "prune", "over-budget"]),
  file: z.optional(z.string()),
  head: z.optional(z.nullable(mac)),
  files: z.optional(z.array(z.string())),
  sessions: z.optional(z.array(z.string())),
  dropped: z.optional(
    z.record(z.string(), z.string().check(z.regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, "runs such as 3-5,9"))),
  ),
  count: z.optional(z.int().check(z.nonnegative())),
  keep: z.optional(z.int().check(z.nonnegative())),
});

export const AuditRecord = z.discriminatedUnion("type", [
  DecisionRecord,
  LifecycleRecord,
  KernelRecord,
  LogRecord,
]);
export type AuditRecord = z.infer<typeof AuditRecord>;

/** The first issue of a failed parse, as "field: what was expected". */
export function firstIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "not an audit record";
  return issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}
