import { readFileSync } from "node:fs";
import { defineCommand, UsageError } from "../args.js";
import { auditFiles } from "../audit.js";
import { AuditSetupError, auditKeyPath, loadAuditKey } from "../auditKey.js";
import { AuditRecord, firstIssue } from "../auditRecords.js";
import { type VerifyReport, verifyAuditLog } from "../auditVerify.js";
import { describeDenial } from "../startupDenials.js";

const AUDIT_KEY = {
  type: "string",
  value: "file",
  help:
    "the key the log is sealed with (default: $MCPGUARD_AUDIT_KEY, else /var/lib/mcpguard/audit.key " +
    "for root, ~/.local/state/mcpguard/audit.key otherwise)",
} as const;

const AUDIT = defineCommand({
  name: "mcpguard audit",
  description:
    "Read an audit log and its rotated files, oldest first: one line per event, with the kernel's " +
    "refusals as operation and path. The last line says whether the log checks out against its key; " +
    "`mcpguard audit verify` says where it does not.",
  options: {
    file: { type: "string", value: "file", help: "the audit log (default: $MCPGUARD_AUDIT_LOG)" },
    /** `mcpguard run`'s name for the same file, kept as an alias. */
    "audit-log": { type: "string", value: "file" },
    since: {
      type: "string",
      value: "time",
      help: "an ISO time, or a duration back from now: 30s, 10m, 2h, 7d",
    },
    decision: {
      type: "string",
      value: "decision",
      choices: ["allow", "deny", "modify"],
      help: "only this decision (kernel refusals are deny, kernel observations observe)",
    },
    server: {
      type: "string",
      value: "name",
      help: "only this server (as the proxy names it, never as the server calls itself)",
    },
    config: {
      type: "string",
      value: "name",
      help: "only this config (C0, C-AB, C-app, C-ebpf, C-full, C-AB+ebpf)",
    },
    layer: { type: "string", value: "name", help: "only decisions of this layer (L1, L2, AB)" },
    all: {
      type: "boolean",
      help:
        "also list the refusals every runtime meets while it starts (reads under /proc, /sys and the " +
        "locale folders before the session's first tool call); without it they are counted in one line",
    },
    json: {
      type: "boolean",
      help: "print every matching event as NDJSON instead of a table (nothing grouped)",
    },
    "audit-key": AUDIT_KEY,
  },
  more: "mcpguard audit verify [--audit-key <file>] [file] checks the log line by line (see its --help)",
});

const VERIFY = defineCommand({
  name: "mcpguard audit verify",
  description:
    "Check every line of an audit log and its rotated files against the key: each line's MAC, each " +
    "writer session's chain, and the files rotation renamed or pruned. Prints OK with counts, or each " +
    "line that breaks the chain and how. Exit status 0 when intact, 1 when tampered with, 2 on a usage " +
    "error.",
  args: [["[file]", "the audit log (default: $MCPGUARD_AUDIT_LOG)"]],
  options: { "audit-key": AUDIT_KEY },
});

/** An ISO time or a duration back from now (`30s`, `10m`, `2h`, `7d`), as epoch milliseconds. */
export function parseSince(value: string, now = Date.now()): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (m) return now - Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as "s" | "m" | "h" | "d"];
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new UsageError(`--since: "${value}" is neither an ISO time nor a duration such as 10m`);
  return t;
}

function logFiles(file: string | undefined): string[] {
  if (!file) throw new UsageError("no audit log given (--file FILE or MCPGUARD_AUDIT_LOG)");
  const files = auditFiles(file);
  if (files.length === 0) throw new UsageError(`${file}: no such audit log`);
  return files;
}

function read(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
}

function parseLine(line: string): ReturnType<typeof AuditRecord.safeParse> | undefined {
  try {
    return AuditRecord.safeParse(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** Every line that parses as an audit record; the others are named on stderr and skipped. */
function readRecords(files: string[]): AuditRecord[] {
  const records: AuditRecord[] = [];
  let skipped = 0;
  for (const f of files) {
    const lines = read(f).split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]) continue;
      const parsed = parseLine(lines[i] as string);
      if (parsed?.success) {
        records.push(parsed.data);
      } else if (++skipped <= 10) {
        const why = parsed ? firstIssue(parsed.error) : "not JSON";
        process.stderr.write(`mcpguard audit: skipped ${f}:${i + 1}: ${why}\n`);
      }
    }
  }
  if (skipped > 10) process.stderr.write(`mcpguard audit: skipped ${skipped} lines in all\n`);
  return records;
}

function describe(e: AuditRecord): string {
  switch (e.type) {
    case "decision":
      return `${e.decision} ${e.tool} by ${e.layer}${e.rule ? ` (${e.rule})` : ""}: ${e.reason}`;
    case "lifecycle": {
      const status = e.status !== undefined ? ` status ${e.status}` : "";
      const withheld = e.withheld?.length ? `, withheld ${e.withheld.join(" ")}` : "";
      const claimed =
        e.claimedName !== undefined ? `, server calls itself ${JSON.stringify(e.claimedName)}` : "";
      return `${e.event}${status}${withheld}${claimed}`;
    }
    default: {
      // A kernel event: what was refused or seen, by which process, and how.
      const k = e as Record<string, unknown>;
      const what = describeDenial({ ...k, type: e.event } as Parameters<typeof describeDenial>[0]);
      const errno = typeof k.errno === "number" ? ` errno ${k.errno}` : "";
      const by =
        typeof k.comm === "string" ? ` by ${k.comm}${typeof k.pid === "number" ? `[${k.pid}]` : ""}` : "";
      const backend = typeof k.backend === "string" ? ` (${k.backend}${errno})` : errno;
      if (what) return `${e.decision === "deny" ? "denied" : e.event} ${what}${backend}${by}`;
      if (e.event === "exec" && typeof k.filename === "string") return `exec ${k.filename}${by}`;
      if (e.event === "exit" && typeof k.pid === "number")
        return `process ${k.pid} exited${typeof k.code === "number" ? ` ${k.code}` : ""}`;
      return `${e.event} ${e.decision}${backend}${by}`;
    }
  }
}

/** What every runtime reads at start and does without: refusals here are noise, not an attack. */
const RUNTIME_PROBE = /^(\/proc|\/sys|\/usr\/share\/locale|\/usr\/lib\/locale)(\/|$)/;

/**
 * Kernel refusals of runtime probes before the session's first tool call. An attack that reads
 * /proc in a tool call comes after it, and is listed; one at start is counted in the summary line.
 */
function startupNoise(events: AuditRecord[]): Set<AuditRecord> {
  // Within a writer session, `seq` orders the records (times can tie within a millisecond).
  const order = (e: AuditRecord) => {
    const { session, seq } = e as { session?: unknown; seq?: unknown };
    return typeof session === "string" && typeof seq === "number" ? { session, seq } : undefined;
  };
  const firstCall = new Map<string, number>();
  for (const e of events) {
    const at = order(e);
    if (e.type === "decision" && at && at.seq < (firstCall.get(at.session) ?? Number.POSITIVE_INFINITY))
      firstCall.set(at.session, at.seq);
  }
  const noise = new Set<AuditRecord>();
  for (const e of events) {
    if (e.type !== "kernel" || e.decision !== "deny") continue;
    const path = (e as { path?: unknown }).path;
    const at = order(e);
    if (!at || typeof path !== "string" || !RUNTIME_PROBE.test(path)) continue;
    if (at.seq < (firstCall.get(at.session) ?? Number.POSITIVE_INFINITY)) noise.add(e);
  }
  return noise;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function counts(report: VerifyReport): string {
  const rotated = report.files.length - 1;
  const files = rotated > 0 ? ` in ${report.files.length} files` : "";
  const continued = report.continued ? `, ${report.continued} begun in pruned files` : "";
  const { sessions, records, unterminated } = report;
  return `${plural(sessions, "session")}, ${plural(records, "record")}${files}, ${unterminated.length} unterminated${continued}`;
}

function check(file: string, key: Buffer, files: string[]): VerifyReport {
  try {
    return verifyAuditLog(file, key);
  } catch (error) {
    for (const f of files) read(f); // Name the file that cannot be read.
    throw error;
  }
}

/** The reader's last line: whether the log checks out, without making a key that is not there. */
function integrity(file: string, keyFile: string | undefined, files: string[]): string {
  let key: Buffer;
  try {
    key = loadAuditKey(auditKeyPath(keyFile), false).key;
  } catch (error) {
    if (!(error instanceof AuditSetupError)) throw error;
    return `integrity: not checked (${error.message}); see mcpguard audit verify --help`;
  }
  const report = check(file, key, files);
  const first = report.problems[0];
  if (!first) return `integrity: verified (${counts(report)})`;
  return `integrity: TAMPERED: ${plural(report.problems.length, "problem")}, the first at ${first.file}:${first.line}: ${first.what}; run mcpguard audit verify`;
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === "verify") return verify(argv.slice(1));
  const parsed = AUDIT.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const since = values.since ? parseSince(values.since) : undefined;
  if (values.file !== undefined && values["audit-log"] !== undefined)
    throw new UsageError("give --file or its alias --audit-log, not both");
  const file = values.file ?? values["audit-log"] ?? process.env.MCPGUARD_AUDIT_LOG;
  const files = logFiles(file);
  // The log's own rotate and prune records are bookkeeping, not events.
  const events = readRecords(files).filter((e) => e.type !== "audit");
  const matching = events
    .filter((e) => since === undefined || Date.parse(e.time) >= since)
    .filter((e) => !values.decision || e.decision === values.decision)
    .filter((e) => !values.server || e.server === values.server)
    .filter((e) => !values.config || e.config === values.config)
    .filter((e) => !values.layer || (e.type === "decision" && e.layer === values.layer))
    .sort((a, b) => a.time.localeCompare(b.time));
  const integrityLine = integrity(file as string, values["audit-key"], files);
  if (values.json) {
    for (const e of matching) process.stdout.write(`${JSON.stringify(e)}\n`);
    process.stderr.write(`${integrityLine}\n`);
    return 0;
  }
  const noise = values.all ? new Set<AuditRecord>() : startupNoise(events);
  const shown = matching.filter((e) => !noise.has(e));
  for (const e of shown) process.stdout.write(`${e.time}  ${e.server}  ${e.config}  ${describe(e)}\n`);
  const grouped = matching.length - shown.length;
  const hidden = grouped
    ? `, and ${grouped} kernel refusal${grouped === 1 ? "" : "s"} of runtime start-up probes (/proc, /sys, locales; --all lists them)`
    : "";
  process.stdout.write(`${shown.length} of ${events.length} events${hidden}\n${integrityLine}\n`);
  return 0;
}

async function verify(argv: string[]): Promise<number> {
  const parsed = VERIFY.parse(argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const file = positionals[0] ?? process.env.MCPGUARD_AUDIT_LOG;
  const files = logFiles(file);
  const { key } = loadAuditKey(auditKeyPath(values["audit-key"]), false);
  const report = check(file as string, key, files);
  for (const p of report.problems.slice(0, 50)) process.stdout.write(`${p.file}:${p.line}: ${p.what}\n`);
  if (report.problems.length > 50) process.stdout.write(`... and ${report.problems.length - 50} more\n`);
  if (report.problems.length) {
    process.stdout.write(
      `TAMPERED: ${plural(report.problems.length, "problem")} in ${file} (${counts(report)})\n`,
    );
    return 1;
  }
  process.stdout.write(`OK: ${file}: ${counts(report)}\n`);
  for (const u of report.unterminated) {
    process.stdout.write(
      `unterminated: session ${u.session} (${u.server}, started ${u.started}) ends at ${u.file}:${u.line} without an exit record: its proxy was killed, or its last records were cut\n`,
    );
  }
  return 0;
}
