import { readFileSync } from "node:fs";
import { parseOptions, UsageError } from "../args.js";
import { auditFiles } from "../audit.js";

const HELP = `usage: mcpguard audit [--file FILE] [--since TIME] [--decision allow|deny|modify] [--server NAME]
                     [--config NAME] [--layer NAME] [--json]

Read an audit log and its rotated files, oldest first.
  --file FILE     the audit log (default: $MCPGUARD_AUDIT_LOG)
  --since TIME    an ISO time, or a duration back from now: 30s, 10m, 2h, 7d
  --json          print the matching events as NDJSON instead of a table
`;

/** An ISO time or a duration back from now (`30s`, `10m`, `2h`, `7d`), as epoch milliseconds. */
export function parseSince(value: string, now = Date.now()): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (m) return now - Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as "s" | "m" | "h" | "d"];
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new UsageError(`--since: "${value}" is neither an ISO time nor a duration such as 10m`);
  return t;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    file: { type: "string" },
    since: { type: "string" },
    decision: { type: "string" },
    server: { type: "string" },
    config: { type: "string" },
    layer: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const file = values.file ?? process.env.MCPGUARD_AUDIT_LOG;
  if (!file) throw new UsageError("no audit log given (--file FILE or MCPGUARD_AUDIT_LOG)");
  if (values.decision && !["allow", "deny", "modify"].includes(values.decision)) {
    throw new UsageError(`--decision must be allow, deny or modify, got "${values.decision}"`);
  }
  const since = values.since ? parseSince(values.since) : undefined;
  const files = auditFiles(file);
  if (files.length === 0) throw new UsageError(`${file}: no such audit log`);
  const events: Record<string, unknown>[] = [];
  for (const f of files) {
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (!line) continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        process.stderr.write(`mcpguard audit: skipped a line of ${f} that is not JSON\n`);
      }
    }
  }
  const matching = events
    .filter((e) => since === undefined || Date.parse(String(e.time)) >= since)
    .filter((e) => !values.decision || e.decision === values.decision)
    .filter((e) => !values.server || e.server === values.server)
    .filter((e) => !values.config || e.config === values.config)
    .filter((e) => !values.layer || e.layer === values.layer)
    .sort((a, b) => String(a.time).localeCompare(String(b.time)));
  if (values.json) {
    for (const e of matching) process.stdout.write(`${JSON.stringify(e)}\n`);
    return 0;
  }
  for (const e of matching) {
    const what =
      e.type === "decision"
        ? `${e.decision} ${e.tool} by ${e.layer}${e.rule ? ` (${e.rule})` : ""}: ${e.reason}`
        : `${e.event}${e.status !== undefined ? ` status ${e.status}` : ""}${Array.isArray(e.withheld) && e.withheld.length ? `, withheld ${e.withheld.join(" ")}` : ""}`;
    process.stdout.write(`${e.time}  ${e.server}  ${e.config}  ${what}\n`);
  }
  process.stdout.write(`${matching.length} of ${events.length} events\n`);
  return 0;
}
