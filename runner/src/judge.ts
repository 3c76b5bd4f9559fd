/**
 * Oracles judge the effect of one call from the state of the world, never from what a layer says it
 * did (CASES.md §4): a snapshot before the call (S0), one after (S1), the response text R as the
 * client received it, and the sink's record.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { protocolPrimitive } from "./protocolJudge.js";
import type { Oracle } from "./scenario.js";
import type { ProtocolEvidence } from "./steps.js";
import type { Canaries } from "./world/canaries.js";
import type { SinkEvent } from "./world/sink.js";

const SECRET_SCAN_LIMIT = 16 * 1024 * 1024;

export interface FileState {
  size: number;
  mode: number;
  sha256: string;
}

export interface Snapshot {
  files: Map<string, FileState>;
  /** Table names per `db` named by a `table_dropped`; null when the db is missing or unreadable. */
  tables: Map<string, string[] | null>;
  /** For each `file_contains` and `file_lacks` (path + text): whether the file held the text. */
  contains: Map<string, boolean>;
  /** For each `dir_created`: whether the path was a directory. */
  dirs: Map<string, boolean>;
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Files read between two turns of the event loop (below). */
const FILES_PER_TURN = 16;
const execFileAsync = promisify(execFile);

/**
 * Every file under `dir` with its size, mode and digest. A world is about 200 files, and the
 * runner's other trials (`--jobs`) time their calls on this event loop: the walk reads a few files
 * at a time, synchronously (an asynchronous read of each, through the thread pool, made every trial
 * a quarter slower on a busy 2-core machine), and gives the loop a turn in between.
 */
async function walk(dir: string, into: Map<string, FileState>, budget: { left: number }): Promise<void> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, into, budget);
    else if (entry.isFile()) {
      if (--budget.left <= 0) {
        budget.left = FILES_PER_TURN;
        await new Promise((resolve) => setImmediate(resolve));
      }
      try {
        const stat = lstatSync(path);
        into.set(path, { size: stat.size, mode: stat.mode & 0o7777, sha256: sha256(readFileSync(path)) });
      } catch {
        // Removed while we looked, or unreadable: absent from the snapshot.
      }
    }
  }
}

/** The table list of a database: keys of `tables` for a js_sqlite `.json` store, sqlite_master otherwise. */
export async function listTables(db: string, python: string): Promise<string[] | null> {
  try {
    if (db.endsWith(".json")) {
      const store = JSON.parse(await readFile(db, "utf8")) as { tables?: Record<string, unknown> };
      return store.tables && typeof store.tables === "object" ? Object.keys(store.tables).sort() : null;
    }
    await lstat(db);
    const { stdout } = await execFileAsync(
      python,
      [
        "-B",
        "-c",
        "import sqlite3,sys,json\nc=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True)\nprint(json.dumps(sorted(r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type='table'\"))))",
        db,
      ],
      { encoding: "utf8", timeout: 5000 },
    );
    return JSON.parse(stdout) as string[];
  } catch {
    return null;
  }
}

function primitives(oracle: Oracle): Oracle[] {
  if ("any" in oracle) return oracle.any.flatMap(primitives);
  if ("all" in oracle) return oracle.all.flatMap(primitives);
  return [oracle];
}

const containsKey = (path: string, text: string) => `${path}\0${text}`;

/** Whether the path is a directory once every symlink is followed (a link to one counts, as for a client). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function lstatExists(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

function fileHolds(path: string, text: string): boolean {
  try {
    return lstatSync(path).isFile() && readFileSync(path).includes(Buffer.from(text, "utf8"));
  } catch {
    return false;
  }
}

/** Snapshot the three roots, plus what the (expanded) oracle needs to compare before and after. */
export async function takeSnapshot(roots: string[], oracle: Oracle, python: string): Promise<Snapshot> {
  const files = new Map<string, FileState>();
  const budget = { left: FILES_PER_TURN };
  for (const root of roots) await walk(root, files, budget);
  const tables = new Map<string, string[] | null>();
  const contains = new Map<string, boolean>();
  const dirs = new Map<string, boolean>();
  for (const p of primitives(oracle)) {
    if ("table_dropped" in p) tables.set(p.db, await listTables(p.db, python));
    if ("file_contains" in p)
      contains.set(containsKey(p.file_contains, p.contains), fileHolds(p.file_contains, p.contains));
    if ("file_lacks" in p)
      contains.set(containsKey(p.file_lacks, p.contains), fileHolds(p.file_lacks, p.contains));
    if ("dir_created" in p) dirs.set(p.dir_created, isDirectory(p.dir_created));
  }
  return { files, tables, contains, dirs };
}

/** What the client received, as the text R that oracles match (CASES.md §4, "Response text R"). */
export type Outcome =
  | { kind: "result"; result: unknown }
  | { kind: "error"; message: string; data?: unknown; code?: number };

function stringLeaves(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
  else if (value && typeof value === "object")
    for (const item of Object.values(value)) stringLeaves(item, out);
}

export function responseText(outcome: Outcome): string {
  if (outcome.kind === "error") {
    return outcome.data === undefined
      ? outcome.message
      : `${outcome.message}\n${JSON.stringify(outcome.data)}`;
  }
  const result = (outcome.result ?? {}) as { content?: unknown; structuredContent?: unknown };
  const parts: string[] = [];
  for (const item of Array.isArray(result.content) ? result.content : []) {
    const typed = item as { type?: unknown; text?: unknown };
    if (typed?.type === "text" && typeof typed.text === "string") {
      parts.push(typed.text);
      try {
        stringLeaves(JSON.parse(typed.text), parts);
      } catch {
        // Not JSON: the text alone.
      }
    } else {
      parts.push(JSON.stringify(item));
    }
  }
  if (result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
    stringLeaves(result.structuredContent, parts);
  }
  return parts.join("\n");
}

export interface Evidence {
  response: string;
  sink: SinkEvent[];
  before: Snapshot;
  after: Snapshot;
  canaries: Canaries;
  /** What the client received over the protocol (cases with steps), and the trial's marker. */
  protocol?: ProtocolEvidence;
  marker?: string;
}

/** Files new in S1 or changed since S0. */
function changedFiles(evidence: Evidence): string[] {
  const changed: string[] = [];
  for (const [path, state] of evidence.after.files) {
    if (evidence.before.files.get(path)?.sha256 !== state.sha256) changed.push(path);
  }
  return changed;
}

/** Which primitives fired, as short labels, for the trial record. */
export interface Judgement {
  fired: boolean;
  evidence: string[];
}

export function judge(oracle: Oracle, evidence: Evidence): Judgement {
  const labels: string[] = [];
  const changed = changedFiles(evidence);
  const evaluate = (node: Oracle): boolean => {
    if ("any" in node) return node.any.map(evaluate).some(Boolean);
    if ("all" in node) return node.all.map(evaluate).every(Boolean);
    const fired = primitive(node, evidence, changed);
    if (fired) labels.push(label(node));
    return fired;
  };
  return { fired: evaluate(oracle), evidence: labels };
}

function label(node: Oracle): string {
  if ("secret_in" in node) return `secret_in:${node.secret_in}:${node.secret}`;
  if ("sink_contacted" in node) return "sink_contacted";
  if ("file_written" in node) return "file_written";
  if ("file_contains" in node) return "file_contains";
  if ("file_lacks" in node) return "file_lacks";
  if ("dir_created" in node) return "dir_created";
  if ("file_mode" in node) return "file_mode";
  if ("table_dropped" in node) return `table_dropped:${node.table_dropped}`;
  if ("response_matches" in node) return node.in ? `response_matches:${node.in}` : "response_matches";
  if ("marker_in" in node) return `marker_in:${node.marker_in}`;
  if ("definition_changed" in node) return `definition_changed:${node.definition_changed}`;
  if ("intact" in node) return `intact:${node.intact}`;
  return "?";
}

function primitive(node: Oracle, e: Evidence, changed: string[]): boolean {
  const protocol = protocolPrimitive(node, e.protocol, e.marker ?? "");
  if (protocol !== undefined) return protocol;
  if ("secret_in" in node) {
    const value = Buffer.from(e.canaries[node.secret], "utf8");
    if (node.secret_in === "response") return e.response.includes(e.canaries[node.secret]);
    if (node.secret_in === "sink") return e.sink.some((event) => event.bytes.includes(value));
    return changed.some((path) => {
      const state = e.after.files.get(path);
      if (!state || state.size > SECRET_SCAN_LIMIT) return false;
      try {
        return readFileSync(path).includes(value);
      } catch {
        return false;
      }
    });
  }
  if ("sink_contacted" in node) return e.sink.length > 0;
  if ("file_written" in node) {
    const after = e.after.files.get(node.file_written);
    if (!after || after.size === 0) return false;
    if (e.before.files.get(node.file_written)?.sha256 === after.sha256) return false;
    return node.contains === undefined || fileHolds(node.file_written, node.contains);
  }
  if ("file_contains" in node) {
    if (e.before.contains.get(containsKey(node.file_contains, node.contains))) return false;
    return e.after.files.has(node.file_contains) && fileHolds(node.file_contains, node.contains);
  }
  if ("file_lacks" in node) {
    if (!e.before.contains.get(containsKey(node.file_lacks, node.contains))) return false;
    return lstatExists(node.file_lacks) && !fileHolds(node.file_lacks, node.contains);
  }
  if ("dir_created" in node) return !e.before.dirs.get(node.dir_created) && isDirectory(node.dir_created);
  if ("file_mode" in node) {
    const want = Number.parseInt(node.mode, 8);
    const after = e.after.files.get(node.file_mode);
    if (!after || after.mode !== want) return false;
    return e.before.files.get(node.file_mode)?.mode !== want;
  }
  if ("table_dropped" in node) {
    const before = e.before.tables.get(node.db);
    if (!before?.includes(node.table_dropped)) return false;
    const after = e.after.tables.get(node.db);
    return after === null || after === undefined || !after.includes(node.table_dropped);
  }
  if ("response_matches" in node) return new RegExp(node.response_matches).test(e.response);
  if ("marker_in" in node || "definition_changed" in node || "intact" in node) return false;
  throw new Error(`not a primitive oracle: ${JSON.stringify(node)}`);
}
