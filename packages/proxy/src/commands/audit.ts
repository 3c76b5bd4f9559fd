import { existsSync, readFileSync } from "node:fs";
import { defineCommand, UsageError } from "../args.js";
import { auditFiles } from "../audit.js";
import { headsDir } from "../auditHeads.js";
import { AuditSetupError, auditKeyPath, loadAuditKey } from "../auditKey.js";
import { AuditRecord, firstIssue } from "../auditRecords.js";
import { type VerifyReport, verifyAuditLog } from "../auditVerify.js";
import { describeDenial } from "../startupDenials.js";
import { terminalSafe } from "../terminal.js";

export const AUDIT_KEY = {
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
    "refusals as operation and path (repeats counted: ×n in s seconds), and what compaction and " +
    "pruning took out of the log. The last line says whether the log checks out against its key; " +
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
    "writer session's chain, the files rotation renamed, compacted or pruned, and the log's end: the " +
    "last record of each session, as its head file beside the key or a later session's first record " +
    "names it. Prints OK with counts, or each line that breaks the chain and how. Exit status 0 when " +
    "intact, 1 when tampered with (a session cut included), 2 on a usage error.",
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

export function logFiles(file: string | undefined): string[] {
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
    // Not JSON: reported as an unreadable line by the caller.
    return undefined;
  }
}

/** Every line that parses as an audit record; the others are named on stderr and skipped. */
export function readRecords(files: string[]): AuditRecord[] {
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

const seconds = (k: Record<string, unknown>) => {
  const ms = Date.parse(String(k.lastTime)) - Date.parse(String(k.firstTime));
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "?";
};

/** A kernel record that counts repeats (kernelEvents.ts): `×n in s`, and an overflow's targets. */
function repeats(k: Record<string, unknown>): string {
  if (typeof k.count !== "number") return "";
  const times = ` ×${k.count} in ${seconds(k)}`;
  if (k.overflow !== true) return times;
  const samples = Array.isArray(k.samples) ? (k.samples as Record<string, unknown>[]) : [];
  const shown = samples
    .map((t) => (typeof t.addr === "string" ? `${t.addr}:${t.port}` : (t.path ?? t.name ?? t.filename)))
    .filter((t) => t !== undefined)
    .join(", ");
  const more = k.targetsCapped === true ? "at least " : "";
  return `${times}, to ${more}${k.targets} targets past the window's keys${shown ? ` (${shown}, ...)` : ""}`;
}

/** The log's bookkeeping shown as events: what compaction dropped, what pruning deleted. */
function describeLog(e: Extract<AuditRecord, { type: "audit" }>): string {
  const r = e as Record<string, unknown>;
  if (e.event === "compact") {
    const dropped = Object.entries((r.dropped ?? {}) as Record<string, string>);
    const of = dropped.length ? ` of ${plural(dropped.length, "session")}` : "";
    return `audit log: compacted ${e.file}: dropped ${plural(Number(r.count ?? 0), "kernel record")}${of}`;
  }
  if (e.event === "prune") {
    const sessions = Array.isArray(r.sessions) ? ` (${plural(r.sessions.length, "session")})` : "";
    return `audit log: pruned ${(e.files ?? []).join(", ")}${sessions}`;
  }
  if (e.event === "over-budget")
    return `audit log: over budget: ${r.count} compacted files kept past --audit-keep ${r.keep}, held by sessions still writing`;
  return `audit log: ${e.event} ${e.file ?? ""}`;
}

function describe(e: AuditRecord): string {
  switch (e.type) {
    case "audit":
      return describeLog(e);
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
      const times = repeats(k);
      if (k.overflow === true)
        return `${e.decision === "deny" ? "denied" : e.event} ${k.op ?? k.syscall ?? e.event}${times}${backend}`;
      if (what) return `${e.decision === "deny" ? "denied" : e.event} ${what}${times}${backend}${by}`;
      if (e.event === "exec" && typeof k.filename === "string") return `exec ${k.filename}${times}${by}`;
      if (e.event === "exit" && typeof k.pid === "number")
        return `process ${k.pid} exited${typeof k.code === "number" ? ` ${k.code}` : ""}${times}`;
      return `${e.event} ${e.decision}${times}${backend}${by}`;
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
  const compacted = report.compacted
    ? `, ${plural(report.compacted, "compacted file")} (${plural(report.dropped, "kernel record")} dropped, as declared)`
    : "";
  const cut = report.cut ? `, ${report.cut} cut` : "";
  const { sessions, records, unterminated } = report;
  return `${plural(sessions, "session")}, ${plural(records, "record")}${files}, ${unterminated.length} unterminated${continued}${compacted}${cut}`;
}

/** The head files of the log's sessions lie beside the key (auditHeads.ts). */
function heads(keyPath: string): string | undefined {
  const dir = headsDir(keyPath);
  return existsSync(dir) ? dir : undefined;
}

export function check(file: string, key: Buffer, files: string[], keyPath: string): VerifyReport {
  try {
    return verifyAuditLog(file, key, { heads: heads(keyPath) });
  } catch (error) {
    for (const f of files) read(f); // Name the file that cannot be read.
    throw error;
  }
}

/** The reader's last line: whether the log checks out, without making a key that is not there. */
function integrity(file: string, keyFile: string | undefined, files: string[]): string {
  let key: { key: Buffer; path: string };
  try {
    key = loadAuditKey(auditKeyPath(keyFile), false);
  } catch (error) {
    if (!(error instanceof AuditSetupError)) throw error;
    return `integrity: not checked (${error.message}); see mcpguard audit verify --help`;
  }
  const report = check(file, key.key, files, key.path);
  const first = report.problems[0];
  if (!first) return `integrity: verified (${counts(report)})`;
  const cut = report.cut ? ` (${plural(report.cut, "session")} cut)` : "";
  return `integrity: TAMPERED: ${plural(report.problems.length, "problem")}${cut}, the first at ${first.file}:${first.line}: ${first.what}; run mcpguard audit verify`;
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
  // The log's own bookkeeping is not events; what took records out of it (compaction, pruning) is
  // shown among them, unless the events are filtered by what bookkeeping has not.
  const records = readRecords(files);
  const events = records.filter((e) => e.type !== "audit");
  const filtered = values.decision || values.server || values.config || values.layer;
  const bookkeeping = filtered
    ? []
    : records.filter(
        (e) =>
          e.type === "audit" && e.event !== "rotate" && (since === undefined || Date.parse(e.time) >= since),
      );
  const matching = events
    .filter((e) => since === undefined || Date.parse(e.time) >= since)
    .filter((e) => !values.decision || e.decision === values.decision)
    .filter((e) => !values.server || e.server === values.server)
    .filter((e) => !values.config || e.config === values.config)
    .filter((e) => !values.layer || (e.type === "decision" && e.layer === values.layer));
  const integrityLine = integrity(file as string, values["audit-key"], files);
  const listed = [...matching, ...bookkeeping].sort((a, b) => a.time.localeCompare(b.time));
  if (values.json) {
    for (const e of listed) process.stdout.write(`${JSON.stringify(e)}\n`);
    process.stderr.write(`${integrityLine}\n`);
    return 0;
  }
  const noise = values.all ? new Set<AuditRecord>() : startupNoise(events);
  const shown = matching.filter((e) => !noise.has(e));
  for (const e of listed) {
    if (noise.has(e)) continue;
    const where = e.type === "audit" ? "-  -" : `${e.server}  ${e.config}`;
    process.stdout.write(`${e.time}  ${terminalSafe(where)}  ${terminalSafe(describe(e))}\n`);
  }
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
  const { key, path: keyPath } = loadAuditKey(auditKeyPath(values["audit-key"]), false);
  const report = check(file as string, key, files, keyPath);
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
