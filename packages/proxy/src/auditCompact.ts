/**
 * What rotation does with the rotated files past `--audit-keep` (issue 29): it compacts them, and
 * deletes a compacted file only once nothing in it can matter to a session whose records are kept.
 *
 * - Compacting the oldest rotated file: it is rewritten (beside it, then renamed over it) with its
 *   first line (files are known by their first line's MAC, which `from` and `anchorHead` name),
 *   every record that is not a kernel event, every kernel record that starts a session or that a
 *   session's start anchors on (one in that file, or in any later one, the live log included), and every
 *   line whose MAC does not check out (so verify still reports it). A sealed
 *   `{"type":"audit","event":"compact","file","dropped":{"<session>":"a-b,c"},"count"}` record goes
 *   to the live log first, naming the sequence numbers dropped, each run of them only as far as
 *   they were there. The file then takes a `.compact` suffix (never compacted twice); a file a
 *   writer may still append to (changed in the last SETTLE_MS) waits for a later rotation.
 * - Compacted files do not count towards `keep`. Past `keep` of them, the oldest are deleted (a
 *   prune record first, naming the files and the sessions in them) only when every session with a
 *   record in them is over (no head file says it is still writing) and has no record in a newer
 *   file but bookkeeping: as many of the oldest as must go together for that. Otherwise they stay,
 *   and the writer says so once, in an `over-budget` record.
 */
import {
  appendFileSync,
  closeSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { isRecord } from "@mcpguard/protocol";
import { claimedMac, unseal } from "./auditChain.js";

/**
 * The log's own bookkeeping: a file rotated away (and its first line's MAC), a rotated file
 * compacted (auditCompact.ts), files pruned, and once per writer a log kept past its budget.
 */
export interface LogEvent {
  type: "audit";
  event: "rotate" | "compact" | "prune" | "over-budget";
  /** rotate: the name the file was given; compact: the rotated file compacted (its name as rotated). */
  file?: string;
  /** rotate: the MAC of that file's first line, which identifies it. */
  head?: string | null;
  /** prune: the rotated files about to be deleted. */
  files?: string[];
  /** prune: the sessions with a record in them; over-budget: the sessions that keep them. */
  sessions?: string[];
  /** compact: each session's sequence numbers dropped, as runs ("3-5,9"). */
  dropped?: Record<string, string>;
  /** compact: records dropped; over-budget: compacted files kept. */
  count?: number;
  /** over-budget: the --audit-keep it is past. */
  keep?: number;
  reason?: string;
}

/**
 * A rotated file changed this recently may still take a line from a writer that has not followed
 * the rotation (it checked the path, then was descheduled): it is compacted at a later rotation.
 */
export const SETTLE_MS = 200;
/** A compaction lock older than this was left by a writer that died. */
const STALE_LOCK_MS = 60_000;

const ROTATED_NAME = /^(\d{8}T\d+Z)-(\d+)-(\d+)(\.compact)?$/;

export interface RotatedFile {
  /** The file's name in the log's directory. */
  name: string;
  /** Its name as rotation gave it (without `.compact`), which its rotate record names. */
  rotated: string;
  compacted: boolean;
}

/**
 * The log's rotated files, oldest first: by the time in the name rotation gave them, then by the
 * writer's count (numerically: a writer can rotate `-9` and `-10` within one millisecond).
 */
export function rotatedFiles(path: string): RotatedFile[] {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    // No folder: no rotated files.
    return [];
  }
  const files: (RotatedFile & { key: [string, number, number] })[] = [];
  for (const name of names) {
    const m = name.startsWith(prefix) ? ROTATED_NAME.exec(name.slice(prefix.length)) : null;
    if (!m) continue;
    const compacted = m[4] !== undefined;
    const rotated = compacted ? name.slice(0, -".compact".length) : name;
    files.push({ name, rotated, compacted, key: [m[1] as string, Number(m[3]), Number(m[2])] });
  }
  const order = (a: (typeof files)[number], b: (typeof files)[number]) =>
    a.key[0] < b.key[0] ? -1 : a.key[0] > b.key[0] ? 1 : a.key[1] - b.key[1] || a.key[2] - b.key[2];
  return files.sort(order).map(({ name, rotated, compacted }) => ({ name, rotated, compacted }));
}

/** Sequence numbers as runs: [3, 4, 5, 9] is "3-5,9". */
function seqRanges(seqs: number[]): string {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    runs.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return runs.join(",");
}

/** "3-5,9" as [[3, 5], [9, 9]]; undefined when it is not such a list. */
export function parseRanges(text: string): [number, number][] | undefined {
  const out: [number, number][] = [];
  for (const part of text.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) return undefined;
    out.push([a, b]);
  }
  return out;
}

function readAll(fd: number, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, buffer, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  return buffer.subarray(0, at);
}

/** The anchors of the session starts among `lines`. */
function anchorsIn(lines: Iterable<string>, into: Set<string>): void {
  for (const line of lines) {
    if (!line.includes('"seq":0,')) continue;
    try {
      // Checked by hand, not with a zod schema: the audit log is written on `run`'s path, before zod loads.
      const record: unknown = JSON.parse(line);
      if (isRecord(record) && record.seq === 0 && typeof record.anchor === "string") into.add(record.anchor);
    } catch {
      // Not a record: kept as it is.
    }
  }
}

/**
 * The session starts of the files after the one being compacted, the live log included: each may
 * anchor on any of its lines. A session reads its anchor (the last line of the file it holds open)
 * and writes its start in one call, but the start lands after whatever other writers appended
 * meanwhile, and in the next file, or one after it, when the log rotated in between (four writers
 * rotating every few kilobytes put a start past the next file's first lines, a test found).
 */
function laterStarts(files: readonly string[]): string[] {
  const starts: string[] = [];
  for (const file of files) {
    let fd: number;
    try {
      fd = openSync(file, "r");
    } catch {
      // Compacted meanwhile by another writer (compaction keeps every start), or pruned.
      try {
        fd = openSync(`${file}.compact`, "r");
      } catch {
        continue;
      }
    }
    try {
      const text = readAll(fd, fstatSync(fd).size).toString("utf8");
      for (const line of text.split("\n")) if (line.includes('"seq":0,')) starts.push(line);
    } finally {
      closeSync(fd);
    }
  }
  return starts;
}

/** A line's chain fields as sealed: `,"session":"...","seq":N,` (a `prior` names sessions as `{"session"`). */
const CHAIN = /,"session":"([^"]{1,64})","seq":(\d+),/;

/**
 * A line compaction may drop: a kernel record (a line with `"type":"kernel"` outside a string: no
 * other record holds that pair), sealed with this key, that neither starts a session nor is anchored
 * on; its session and seq. No JSON.parse: a rotated file of kernel records is 50,000 lines.
 */
function droppable(
  line: string,
  key: Buffer,
  anchors: Set<string>,
): { session: string; seq: number } | false {
  if (!line.includes('"type":"kernel"')) return false;
  const at = line.lastIndexOf(',"session":"');
  const chain = at < 0 ? null : CHAIN.exec(line.slice(at));
  if (!chain) return false;
  const seq = Number(chain[2]);
  if (seq === 0) return false;
  const mac = claimedMac(line);
  if (!mac || anchors.has(mac) || !unseal(key, line).ok) return false;
  return { session: chain[1] as string, seq };
}

interface Compaction {
  /** The file's new text. */
  kept: string;
  dropped: Record<string, string>;
  count: number;
}

/**
 * What compacting a file's text keeps and drops: see the module's comment. `nextLines` are the
 * session starts of the later files (laterStarts), which may anchor in this one.
 */
function compaction(text: string, key: Buffer, nextLines: string[] = []): Compaction {
  const lines = text.split("\n");
  const tail = lines.pop() ?? ""; // A torn last line stays as it is.
  if (lines.length === 0) return { kept: text, dropped: {}, count: 0 };
  const anchors = new Set<string>();
  anchorsIn(lines, anchors);
  anchorsIn(nextLines, anchors);
  const kept: string[] = [];
  const dropped = new Map<string, number[]>();
  let count = 0;
  lines.forEach((line, i) => {
    const drop = i > 0 && droppable(line, key, anchors);
    if (!drop) {
      kept.push(line);
      return;
    }
    const list = dropped.get(drop.session) ?? [];
    list.push(drop.seq);
    dropped.set(drop.session, list);
    count++;
  });
  return {
    kept: `${kept.join("\n")}\n${tail}`,
    dropped: Object.fromEntries([...dropped].map(([s, seqs]) => [s, seqRanges(seqs)])),
    count,
  };
}

/** The sessions with a line in a file: all of them, and those with a line that is not bookkeeping. */
interface FileSessions {
  all: Set<string>;
  records: Set<string>;
}

/**
 * The sessions of `text`'s lines: each line's chain field `,"session":"..."` (a `prior` names
 * sessions too, each as `{"session":...`; an event has no field of that name).
 */
function sessionsIn(text: string): FileSessions {
  const found: FileSessions = { all: new Set(), records: new Set() };
  const marker = ',"session":"';
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const at = text.lastIndexOf(marker, end);
    if (at >= start) {
      const from = at + marker.length;
      const to = text.indexOf('"', from);
      if (to > from && to - from <= 64 && to < end) {
        const session = text.slice(from, to);
        found.all.add(session);
        const line = text.slice(start, end);
        if (!line.includes('"type":"audit"')) found.records.add(session);
      }
    }
    start = end + 1;
  }
  return found;
}

/**
 * Sessions per file, as long as the path names the same file (its inode: rotation and compaction
 * put another file at a path, which a coarse clock can give the same size and time) and it keeps
 * its size and times (a rotated file seldom changes).
 */
const sessionCache = new Map<
  string,
  { ino: number; size: number; mtimeMs: number; ctimeMs: number; sessions: FileSessions }
>();

function sessionsOf(file: string): FileSessions {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    // Gone (pruned by another writer): no sessions.
    return { all: new Set(), records: new Set() };
  }
  try {
    const st = fstatSync(fd);
    const cached = sessionCache.get(file);
    if (
      cached &&
      cached.ino === st.ino &&
      cached.size === st.size &&
      cached.mtimeMs === st.mtimeMs &&
      cached.ctimeMs === st.ctimeMs
    )
      return cached.sessions;
    const sessions = sessionsIn(readAll(fd, st.size).toString("utf8"));
    sessionCache.set(file, {
      ino: st.ino,
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      sessions,
    });
    return sessions;
  } finally {
    closeSync(fd);
  }
}

export interface MaintainContext {
  /** The live log. */
  path: string;
  key: Buffer;
  keep: number;
  /** Writes a bookkeeping record to the live log (never rotating). */
  write: (event: LogEvent) => void;
  /** The sessions still writing to this log (this writer's own among them). */
  running: () => Set<string>;
  /** The head files a session of this log may have (auditHeads.ts): those of the sessions pruned go with them. */
  headFiles: ((session: string) => string[]) | undefined;
  /** The writer has said its log is over budget already. */
  saidOverBudget: boolean;
  /** SETTLE_MS, unless a test says otherwise. */
  settleMs: number;
}

/** After a rotation: compact the oldest rotated files past `keep`, then delete what compacted files may go. */
export function maintain(ctx: MaintainContext): void {
  const files = rotatedFiles(ctx.path);
  const order = [...files.map((f) => join(dirname(ctx.path), f.name)), ctx.path];
  const plain = files.filter((f) => !f.compacted);
  for (let i = 0; i < plain.length - ctx.keep; i++) {
    const file = plain[i] as RotatedFile;
    const at = order.indexOf(join(dirname(ctx.path), file.name));
    compact(ctx, file, order.slice(at + 1));
  }
  prune(ctx);
}

/** Compact one rotated file, unless another writer is at it or a writer may still append to it. */
function compact(ctx: MaintainContext, file: RotatedFile, later: readonly string[]): void {
  const dir = dirname(ctx.path);
  const path = join(dir, file.name);
  const lock = join(dir, `.${file.name}.lock`);
  try {
    closeSync(openSync(lock, "wx", 0o600));
  } catch {
    // Another writer holds the lock, or held it and died: checked below.
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock);
    } catch {
      // Gone meanwhile.
    }
    return;
  }
  try {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return; // Compacted or pruned by another writer.
    }
    try {
      const st = fstatSync(fd);
      // Date.now() counts whole milliseconds and mtimeMs has a fraction: a file changed within the
      // current millisecond read as changed in the future, so a settle time of 0 sometimes waited.
      if (ctx.settleMs > 0 && Date.now() - st.mtimeMs < ctx.settleMs) return;
      const plan = compaction(readAll(fd, st.size).toString("utf8"), ctx.key, laterStarts(later));
      ctx.write({
        type: "audit",
        event: "compact",
        file: file.name,
        dropped: plan.dropped,
        count: plan.count,
      });
      const temp = join(dir, `.${file.name}.tmp`);
      writeFileSync(temp, plan.kept, { mode: 0o600 });
      renameSync(temp, path);
      // A line that reached the old file after it was read: kept, at the end.
      const size = fstatSync(fd).size;
      if (size > st.size) {
        const late = Buffer.alloc(size - st.size);
        readSync(fd, late, 0, late.length, st.size);
        appendFileSync(path, late);
      }
      renameSync(path, `${path}.compact`);
    } finally {
      closeSync(fd);
    }
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // Already gone.
    }
  }
}

/**
 * Delete the oldest compacted files past `keep`, as few as can go together: every session with a
 * record in them over, and none with a record in a newer file but bookkeeping. (A rotating writer
 * seals its rotate record in the new file, so each file's end is crossed by the session that
 * rotated it; its bookkeeping is kept in the newer file, and the rest of it goes with the group.)
 */
function prune(ctx: MaintainContext): void {
  const dir = dirname(ctx.path);
  const files = rotatedFiles(ctx.path);
  const compacted = files.filter((f) => f.compacted);
  const excess = compacted.length - ctx.keep;
  if (excess <= 0) return;
  const running = ctx.running();
  const group: string[] = [];
  const sessions = new Set<string>();
  let held: string[] = [];
  for (const file of compacted) {
    group.push(file.name);
    for (const s of sessionsOf(join(dir, file.name)).all) sessions.add(s);
    if (group.length < excess) continue;
    held = [...sessions].filter((s) => running.has(s));
    if (held.length > 0) break; // A longer group holds them too.
    const newer = [...files.slice(files.indexOf(file) + 1).map((f) => join(dir, f.name)), ctx.path];
    held = [...sessions].filter((s) => newer.some((f) => sessionsOf(f).records.has(s)));
    if (held.length > 0) continue;
    ctx.write({ type: "audit", event: "prune", files: group, sessions: [...sessions] });
    // A session pruned is over for good: no later session's `prior` is to name it (the prune
    // record, in a newer file than any record that names it, outlives them all).
    const gone = [
      ...group.map((name) => join(dir, name)),
      ...[...sessions].flatMap((s) => ctx.headFiles?.(s) ?? []),
    ];
    for (const path of gone) {
      try {
        unlinkSync(path);
      } catch {
        // Pruned by another writer; a session without a head file.
      }
      sessionCache.delete(path);
    }
    return;
  }
  if (ctx.saidOverBudget) return;
  ctx.saidOverBudget = true;
  ctx.write({
    type: "audit",
    event: "over-budget",
    count: compacted.length,
    keep: ctx.keep,
    sessions: held,
    reason:
      "the compacted files past --audit-keep hold records of sessions still writing, or that go on in newer files: kept",
  });
}
