/**
 * `mcpguard audit verify`: check the audit log and its rotated files against the key. Each writer
 * session is one chain (seq, prev); a session's first record anchors on the line before it; rotate,
 * compact and prune records account for every file that left the log and every record compaction
 * dropped. File order does not matter: where a chain crosses files, its `from` names the file it
 * came from (by the MAC of that file's first line). The end of the log is proven by the head files
 * beside the key and the `prior` of each session's first record (auditHeads.ts): the records they
 * name must be there, or declared dropped or pruned.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { auditFiles } from "./audit.js";
import { claimedMac, keyId, unseal } from "./auditChain.js";
import { parseRanges } from "./auditCompact.js";
import { canonicalLog, type Head, type PriorRef, readHeads } from "./auditHeads.js";
import { AuditRecord, ChainFields, firstIssue } from "./auditRecords.js";

interface Problem {
  file: string;
  line: number;
  what: string;
}

interface Unterminated {
  session: string;
  server: string;
  started: string;
  /** Where the session's last record is. */
  file: string;
  line: number;
}

export interface VerifyReport {
  files: string[];
  records: number;
  sessions: number;
  unterminated: Unterminated[];
  /** Sessions whose first records were in files rotation has pruned. */
  continued: number;
  /** Rotated files compacted, and the kernel records their compaction dropped (declared). */
  compacted: number;
  dropped: number;
  /** Sessions whose last records were cut (a head file or a later session's `prior` names more). */
  cut: number;
  problems: Problem[];
}

export interface VerifyOptions {
  /** The heads directory beside the key (auditHeads.ts): the head files of this log are checked. */
  heads?: string;
}

interface Sealed {
  session: string;
  seq: number;
  prev?: string;
  anchor?: string;
  anchorHead?: string;
  prior?: PriorRef[];
  from?: string;
  mac: string;
  /** The MAC checks out; a line that fails it is reported and kept only to avoid a cascade. */
  valid: boolean;
  record?: AuditRecord;
}

interface Entry extends Sealed {
  file: number;
  line: number;
}

interface Log {
  files: string[];
  heads: (string | undefined)[];
  entries: Entry[];
  problems: Problem[];
}

function readLog(path: string, key: Buffer): Log {
  const log: Log = { files: auditFiles(path), heads: [], entries: [], problems: [] };
  const kid = keyId(key);
  log.files.forEach((file, fi) => {
    const lines = readFileSync(file, "utf8").split("\n");
    const tail = lines.pop();
    if (tail)
      log.problems.push({ file, line: lines.length + 1, what: "incomplete last line: the file was cut" });
    log.heads.push(lines[0] === undefined ? undefined : claimedMac(lines[0]));
    lines.forEach((text, i) => {
      const entry = readLine(text, kid, key, (what) => log.problems.push({ file, line: i + 1, what }));
      if (entry) log.entries.push({ ...entry, file: fi, line: i + 1 });
    });
  });
  return log;
}

function readLine(
  text: string,
  kid: string,
  key: Buffer,
  problem: (what: string) => void,
): Sealed | undefined {
  const sealed = unseal(key, text);
  if (!sealed.ok && sealed.why === "no-mac") {
    problem(
      text ? "no MAC: a line inserted, or written without the audit key" : "an empty line was inserted",
    );
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Reported as a problem of the line, which is the answer.
    problem("bad MAC: the line is not even JSON (altered)");
    return undefined;
  }
  const chain = ChainFields.safeParse(json);
  if (!sealed.ok) {
    const other = chain.success && chain.data.kid !== undefined && chain.data.kid !== kid;
    problem(
      other
        ? `sealed with another key (key id ${chain.data?.kid}; this key's id is ${kid})`
        : `bad MAC: the line was altered, or forged by someone without the key${chain.success ? ` (it claims to be record ${chain.data.seq} of session ${chain.data.session})` : ""}`,
    );
    return chain.success ? { ...chainOf(chain.data), mac: sealed.mac ?? "", valid: false } : undefined;
  }
  const record = AuditRecord.safeParse(json);
  if (!chain.success || !record.success) {
    problem(`sealed, but not an audit record: ${firstIssue((chain.error ?? record.error) as never)}`);
    return undefined;
  }
  return { ...chainOf(chain.data), mac: sealed.mac, valid: true, record: record.data };
}

function chainOf(c: ChainFields): Omit<Sealed, "mac" | "valid"> {
  return {
    session: c.session,
    seq: c.seq,
    prev: c.prev,
    anchor: c.anchor,
    anchorHead: c.anchorHead,
    prior: c.prior,
    from: c.from,
  };
}

/** A compacted file's name as rotation gave it. */
const rotatedName = (file: string) => basename(file).replace(/\.compact$/, "");

/**
 * Every rotated file was rotated by a writer (and still starts where it did), and compacted by one
 * when it says so; every file gone was pruned.
 */
function checkFiles(log: Log, path: string): void {
  const rotates = new Map<string, Entry>();
  const compacts = new Set<string>();
  const pruned = new Set<string>();
  for (const e of log.entries) {
    if (!e.valid || e.record?.type !== "audit") continue;
    if (e.record.event === "rotate" && e.record.file) rotates.set(e.record.file, e);
    if (e.record.event === "compact" && e.record.file) compacts.add(e.record.file);
    if (e.record.event === "prune") for (const f of e.record.files ?? []) pruned.add(rotatedName(f));
  }
  const present = new Set(log.files.flatMap((f) => [basename(f), rotatedName(f)]));
  log.files.forEach((file, fi) => {
    if (file === path) return;
    if (file.endsWith(".compact") && !compacts.has(rotatedName(file)))
      log.problems.push({
        file,
        line: 1,
        what: "no compact record names this file: mcpguard did not compact it",
      });
    const rotate = rotates.get(rotatedName(file));
    if (!rotate) {
      log.problems.push({
        file,
        line: 1,
        what: "no rotate record names this file: mcpguard did not rotate it",
      });
    } else if (
      rotate.record?.type === "audit" &&
      rotate.record.head &&
      rotate.record.head !== log.heads[fi]
    ) {
      const at = `${log.files[rotate.file]}:${rotate.line}`;
      log.problems.push({
        file,
        line: 1,
        what: `lines were removed from the start (its first line is not the one ${at} recorded)`,
      });
    }
  });
  for (const [name, e] of rotates) {
    if (!present.has(name) && !pruned.has(name)) {
      const what = `rotated file ${name} is missing and no writer pruned it: it was deleted`;
      log.problems.push({ file: log.files[e.file] as string, line: e.line, what });
    }
  }
}

/** Whether the log recorded pruning any file: only then may a chain reach into a file that is not here. */
function prunedAny(log: Log): boolean {
  return log.entries.some((e) => e.valid && e.record?.type === "audit" && e.record.event === "prune");
}

/**
 * A session's records ordered by seq; a repeat of a valid record is reported and dropped. A record
 * sealed twice (another MAC: its writer wrote it again when its file was compacted or pruned as the
 * first copy landed) is no replay: the later copy, which the session's next record follows, stays.
 */
function sessions(log: Log): Map<string, Entry[]> {
  const bySession = new Map<string, Entry[]>();
  for (const e of log.entries) {
    const list = bySession.get(e.session) ?? [];
    list.push(e);
    bySession.set(e.session, list);
  }
  for (const [session, list] of bySession) {
    list.sort((a, b) => a.seq - b.seq || a.file - b.file || a.line - b.line);
    const kept: Entry[] = [];
    for (const e of list) {
      const last = kept.at(-1);
      if (last?.seq !== e.seq) kept.push(e);
      else if (e.valid && (!last.valid || e.mac !== last.mac)) kept[kept.length - 1] = e;
      else if (e.valid)
        report(log, e, `record ${e.seq} of session ${session} repeats ${where(log, last)}: replayed`);
    }
    bySession.set(session, kept);
  }
  return bySession;
}

function where(log: Log, e: Entry): string {
  return `${log.files[e.file]}:${e.line}`;
}

function report(log: Log, e: Entry, what: string): void {
  log.problems.push({ file: log.files[e.file] as string, line: e.line, what });
}

interface ChainContext {
  log: Log;
  heads: Set<string | undefined>;
  pruned: boolean;
  macs: Map<string, Entry>;
  /** Each session's sequence numbers that compaction dropped, as its compact records declare. */
  dropped: Map<string, [number, number][]>;
  /** The sessions prune records name; `legacyPrune` when one names none (written before they did). */
  prunedSessions: Set<string>;
  legacyPrune: boolean;
}

/** Whether compaction declared every record from..to of `session` dropped. */
function declared(ctx: ChainContext, session: string, from: number, to: number): boolean {
  const runs = (ctx.dropped.get(session) ?? []).filter(([a, b]) => b >= from && a <= to);
  runs.sort((x, y) => x[0] - y[0]);
  let next = from;
  for (const [a, b] of runs) {
    if (a > next) return false;
    next = Math.max(next, b + 1);
    if (next > to) return true;
  }
  return next > to;
}

/** The records from..to of `session` that no compact record declared dropped, as runs ("3-5,9"). */
function undeclared(ctx: ChainContext, session: string, from: number, to: number): string {
  const runs = (ctx.dropped.get(session) ?? []).filter(([a, b]) => b >= from && a <= to);
  runs.sort((x, y) => x[0] - y[0]);
  const lost: string[] = [];
  let next = from;
  for (const [a, b] of runs) {
    if (a > next) lost.push(a - 1 === next ? `${next}` : `${next}-${a - 1}`);
    next = Math.max(next, b + 1);
  }
  if (next <= to) lost.push(next === to ? `${next}` : `${next}-${to}`);
  return lost.join(",");
}

/** Whether rotation pruned files holding records of `session`. */
const prunedSession = (ctx: ChainContext, session: string) =>
  ctx.pruned && (ctx.legacyPrune || ctx.prunedSessions.has(session));

/** The declared drops, and the sessions of pruned files, from the compact and prune records. */
function bookkeeping(log: Log): Pick<ChainContext, "dropped" | "prunedSessions" | "legacyPrune"> {
  const dropped = new Map<string, [number, number][]>();
  const prunedSessions = new Set<string>();
  let legacyPrune = false;
  for (const e of log.entries) {
    if (!e.valid || e.record?.type !== "audit") continue;
    const record = e.record as { event: string; dropped?: Record<string, string>; sessions?: string[] };
    if (record.event === "compact") {
      for (const [session, text] of Object.entries(record.dropped ?? {})) {
        const runs = parseRanges(text) ?? [];
        dropped.set(session, [...(dropped.get(session) ?? []), ...runs]);
      }
    }
    if (record.event === "prune") {
      if (record.sessions) for (const s of record.sessions) prunedSessions.add(s);
      else legacyPrune = true;
    }
  }
  return { dropped, prunedSessions, legacyPrune };
}

/** A session's first record here: its anchor, or (a session older than the oldest file) its `from`. */
function checkStart(ctx: ChainContext, e: Entry): boolean {
  const { log } = ctx;
  if (!e.valid) return false; // Already reported as forged.
  if (e.seq > 0) {
    if (declared(ctx, e.session, 0, e.seq - 1)) return false;
    if (e.from && !ctx.heads.has(e.from) && prunedSession(ctx, e.session)) return true;
    const missing = e.seq === 1 ? "record 0" : `records 0-${e.seq - 1}`;
    report(log, e, `session ${e.session} begins at record ${e.seq}: ${missing} deleted`);
    return false;
  }
  if (!e.anchor) return false; // The log was empty when the session began.
  const anchored = ctx.macs.get(e.anchor);
  if (!anchored) {
    if (!(e.anchorHead && !ctx.heads.has(e.anchorHead) && ctx.pruned)) {
      report(
        log,
        e,
        `the line session ${e.session} anchored on (the log's last when it began) is missing: deleted`,
      );
    }
  } else if (anchored.file === e.file && anchored.line > e.line) {
    report(log, e, `session ${e.session} anchors on ${where(log, anchored)}, a later line: reordered`);
  } else if (e.anchorHead && log.heads[anchored.file] !== e.anchorHead) {
    report(log, e, `${log.files[anchored.file]} lost its first lines since session ${e.session} began`);
  }
  return false;
}

/** Record `e` follows `before` in its session: no gap, prev matches, and in order. */
function checkLink(ctx: ChainContext, before: Entry, e: Entry): void {
  const { log } = ctx;
  const gap = e.seq - before.seq - 1;
  // Records compaction dropped, and said so: what was around them is checked by their own chain.
  if (gap > 0 && declared(ctx, e.session, before.seq + 1, e.seq - 1)) return;
  if (gap > 0) {
    const lost = undeclared(ctx, e.session, before.seq + 1, e.seq - 1);
    const missing = /^\d+$/.test(lost) ? `record ${lost}` : `records ${lost}`;
    report(log, e, `session ${e.session} lacks ${missing} (after ${where(log, before)}): deleted`);
    return;
  }
  if (!before.valid || !e.valid) return; // Already reported as altered.
  if (e.prev !== before.mac) {
    report(
      log,
      e,
      `prev is not the MAC of record ${before.seq} (${where(log, before)}): a record was replaced`,
    );
  } else if (e.file === before.file && e.line < before.line) {
    report(
      log,
      e,
      `record ${e.seq} of session ${e.session} comes before record ${before.seq} (${where(log, before)}): reordered`,
    );
  } else if (e.file !== before.file && e.from !== log.heads[before.file]) {
    report(
      log,
      e,
      `record ${e.seq} of session ${e.session} left ${log.files[before.file]} without saying so: moved`,
    );
  }
}

/**
 * The record a head file or a `prior` names (`seq`, `mac` of `ref.session`) must be there, or
 * every record after the session's last one here declared dropped, or its files pruned. Returns
 * whether the session was cut.
 */
function checkReach(
  ctx: ChainContext,
  chains: Map<string, Entry[]>,
  ref: PriorRef,
  who: string,
  at: { file: string; line: number },
): boolean {
  const list = (chains.get(ref.session) ?? []).filter((e) => e.valid);
  const named = list.find((e) => e.seq === ref.seq);
  if (named) {
    if (named.mac === ref.mac) return false;
    report(
      ctx.log,
      named,
      `record ${ref.seq} of session ${ref.session} is not the one ${who} names: replaced`,
    );
    return false;
  }
  const last = list.filter((e) => e.seq < ref.seq).at(-1);
  const from = last ? last.seq + 1 : 0;
  if (declared(ctx, ref.session, from, ref.seq)) return false;
  if (prunedSession(ctx, ref.session)) return false;
  const where = last ? { file: ctx.log.files[last.file] as string, line: last.line } : at;
  const cut = last ? `was cut after record ${last.seq}` : "was cut: none of its records is left";
  ctx.log.problems.push({
    ...where,
    what: `session ${ref.session} ${cut} (${who} says it wrote records 0-${ref.seq})`,
  });
  return true;
}

/** The head files of this log, read before the log itself (a session writes a record, then its head). */
function headsOf(path: string, dir: string | undefined): { path: string; head: Head }[] {
  if (!dir) return [];
  const log = canonicalLog(path);
  return readHeads(dir, log);
}

/** Check the log at `path` (and its rotated files) against `key`. */
export function verifyAuditLog(path: string, key: Buffer, options: VerifyOptions = {}): VerifyReport {
  const heads = headsOf(path, options.heads);
  const log = readLog(path, key);
  checkFiles(log, path);
  const ctx: ChainContext = {
    log,
    heads: new Set(log.heads.filter((h) => h !== undefined)),
    pruned: prunedAny(log),
    macs: new Map(log.entries.filter((e) => e.valid).map((e) => [e.mac, e])),
    ...bookkeeping(log),
  };
  let continued = 0;
  const unterminated: Unterminated[] = [];
  const chains = sessions(log);
  for (const list of chains.values()) {
    list.forEach((e, i) => {
      const before = list[i - 1];
      if (before) checkLink(ctx, before, e);
      else if (checkStart(ctx, e)) continued++;
    });
    const valid = list.filter((e) => e.valid);
    const start = valid.find((e) => e.record?.type === "lifecycle" && e.record.event === "start");
    const exit = valid.some((e) => e.record?.type === "lifecycle" && e.record.event === "exit");
    const last = valid.at(-1);
    if (start?.record && start.record.type === "lifecycle" && !exit && last) {
      const { server, time } = start.record;
      unterminated.push({
        session: start.session,
        server,
        started: time,
        file: log.files[last.file] as string,
        line: last.line,
      });
    }
  }
  // The end: what head files and the first records of later sessions say each session wrote.
  const cut = new Set<string>();
  for (const { path: file, head } of heads) {
    if (checkReach(ctx, chains, head, `its head file ${basename(file)}`, { file, line: 1 }))
      cut.add(head.session);
  }
  for (const e of log.entries) {
    if (!e.valid || !e.prior) continue;
    const at = { file: log.files[e.file] as string, line: e.line };
    for (const ref of e.prior) {
      const who = `the first record of session ${e.session}, ${where(log, e)},`;
      if (!cut.has(ref.session) && checkReach(ctx, chains, ref, who, at)) cut.add(ref.session);
    }
  }
  let dropped = 0;
  for (const e of log.entries)
    if (e.valid && e.record?.type === "audit" && e.record.event === "compact") dropped += e.record.count ?? 0;
  const order = new Map(log.files.map((f, i) => [f, i]));
  log.problems.sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0) || a.line - b.line);
  return {
    files: log.files,
    records: log.entries.filter((e) => e.valid).length,
    sessions: [...chains.values()].filter((list) => list.some((e) => e.valid)).length,
    unterminated,
    continued,
    compacted: log.files.filter((f) => f.endsWith(".compact")).length,
    dropped,
    cut: cut.size,
    problems: log.problems,
  };
}
