/**
 * Head files: how the end of an audit log is proven (issue 29). Beside the key, in
 * `<dirname(key)>/heads/` (0700, as private as the key's own directory), each writer session of a
 * log keeps `<tag>.<session>.head` (0600; the tag is the log's, headName): the log's canonical path,
 * the session, the proxy's pid, the seq and MAC of the session's last sealed record, and whether it
 * ended. One pwrite after every record keeps it current (a fixed-width line, so one write replaces
 * it whole); close() marks it ended.
 *
 * A new session of the same log takes the head files of that log whose session ended (or whose
 * proxy is gone) into its first record, as `prior` (session, seq, mac), and unlinks them; once that
 * record is written it also removes head files whose log no longer exists (the benchmark deletes
 * each trial's log). A start reads its own log's head files only. So
 * `mcpguard audit verify` can tell a log whose last records were cut: the records a head file or
 * a `prior` names must be there, or declared dropped or pruned.
 */
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { isRecord } from "@mcpguard/protocol";
import { absolute, canonical } from "./guardFiles.js";

/** A session's last record as its head file (or a later session's `prior`) names it. */
export interface PriorRef {
  session: string;
  seq: number;
  mac: string;
}

export interface Head extends PriorRef {
  /** The log's canonical path. */
  log: string;
  pid: number;
  ended: boolean;
}

/** Head files a new session takes at most (the others wait for the next one). */
const MAX_PRIOR = 64;

/** The heads directory of a key: `<dirname(key)>/heads`. */
export function headsDir(keyPath: string): string {
  return join(dirname(keyPath), "heads");
}

/**
 * Make the heads directory (0700) beside the key, whose directory loadAuditKey() has checked, and
 * check it: a directory, not a link, ours alone. Throws an Error whose message says why.
 */
export function openHeadsDir(keyPath: string): string {
  const dir = headsDir(keyPath);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST") throw new Error(`cannot create the audit head directory ${dir}: ${code}`);
  }
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory())
    throw new Error(`the audit head directory ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`the audit head directory ${dir} is owned by uid ${st.uid}, not by you (uid ${uid})`);
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
    throw new Error(`the audit head directory ${dir} is open to others (mode ${mode}): chmod 700 it`);
  }
  return dir;
}

/**
 * The log's path with its folder resolved as the kernel walks it (links and a `..` after one
 * included, guardFiles.ts), as head files name it: every spelling of a log names the same head
 * files, and a log that is there is never taken for one that is gone (whose head files a start
 * removes). Folded first (path.resolve), `dir/link/../audit.ndjson` named `dir/audit.ndjson`.
 */
export function canonicalLog(path: string): string {
  const abs = absolute(path);
  return join(canonical(dirname(abs)), basename(abs));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A head file as written (writeHead), checked field by field: `run` reads heads before zod loads. */
function parseHead(text: string): Head | undefined {
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch {
    // A torn or foreign file is no head: the caller skips it.
    return undefined;
  }
  if (
    !isRecord(h) ||
    typeof h.log !== "string" ||
    typeof h.session !== "string" ||
    typeof h.pid !== "number" ||
    typeof h.seq !== "number" ||
    typeof h.mac !== "string" ||
    typeof h.ended !== "boolean"
  )
    return undefined;
  return { ...h, log: h.log, session: h.session, pid: h.pid, seq: h.seq, mac: h.mac, ended: h.ended };
}

/**
 * A head file's name: a tag of its log and the session, so that a session reads the head files of
 * its own log only, however many other logs the key has signed. The tag only narrows the search: a
 * head file is a log's by the path it holds.
 */
export function headName(log: string, session: string): string {
  return `${logTag(log)}.${session}.head`;
}

/** The files a session of `log` may keep its head in: its name, and the one builds before the tag gave it. */
export function headFiles(dir: string, log: string, session: string): string[] {
  return [join(dir, headName(log, session)), join(dir, `${session}.head`)];
}

/**
 * The 64-bit FNV-1a hash of the log's canonical path, as 16 hex digits. Its own code, fixed: the
 * head files already written are found by it, and a test holds its value for one path.
 */
export function logTag(log: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(log, "utf8"))
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, "0");
}

/**
 * The head files in `dir` that parse, with their paths: with `log`, those of that log only (named
 * by its tag, or by the session alone, as builds before the tag named them).
 */
export function readHeads(dir: string, log?: string): { path: string; head: Head }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // No heads folder: no heads.
    return [];
  }
  const tag = log === undefined ? undefined : `${logTag(log)}.`;
  const heads: { path: string; head: Head }[] = [];
  for (const name of names) {
    if (!name.endsWith(".head")) continue;
    if (tag !== undefined && !name.startsWith(tag) && name.slice(0, -5).includes(".")) continue;
    const path = join(dir, name);
    try {
      const head = parseHead(readFileSync(path, "utf8"));
      if (head && (log === undefined || head.log === log)) heads.push({ path, head });
    } catch {
      // Taken by another session meanwhile.
    }
  }
  return heads;
}

/** Whether a head file's session is still writing: not ended, and its proxy alive. */
export function running(head: Head): boolean {
  return !head.ended && alive(head.pid);
}

/**
 * What a session starting on `log` takes: the head files of that log whose session is over. When
 * the log has no file left (`logExists` tells: the log itself, or one of its rotated files), there
 * is no session to follow, and its head files are unlinked here. The taken files are unlinked once
 * the session's first record is written.
 */
export function claimHeads(
  dir: string,
  log: string,
  logExists: (log: string) => boolean,
): { prior: PriorRef[]; files: string[] } {
  const prior: PriorRef[] = [];
  const files: string[] = [];
  const heads = readHeads(dir, log);
  if (heads.length > 0 && !logExists(log)) {
    for (const { path } of heads) unlinkQuietly(path);
    return { prior, files };
  }
  for (const { path, head } of heads) {
    if (running(head) || prior.length >= MAX_PRIOR) continue;
    prior.push({ session: head.session, seq: head.seq, mac: head.mac });
    files.push(path);
  }
  return { prior, files };
}

/**
 * Unlink the head files of logs that have no file left (the benchmark deletes each trial's log):
 * every head file is read, so a session does it once its first record is written, which `run`
 * writes once the server is released, not while the start waits.
 */
export function pruneHeads(dir: string, logExists: (log: string) => boolean): void {
  const exists = new Map<string, boolean>();
  for (const { path, head } of readHeads(dir)) {
    let there = exists.get(head.log);
    if (there === undefined) {
      there = logExists(head.log);
      exists.set(head.log, there);
    }
    if (!there) unlinkQuietly(path);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Removed by another session.
  }
}

/**
 * A session's head file: created at its first record, rewritten in place (one pwrite of a
 * fixed-width line) after each, marked ended by end().
 */
export class HeadFile {
  readonly path: string;
  readonly #fd: number;
  readonly #buffer: Buffer;
  /** The bytes before the seq: `{"log":...,"session":...,"pid":...,"seq":`, written once. */
  readonly #prefix: number;
  #seq = -1;
  #mac = "";

  constructor(dir: string, log: string, session: string) {
    this.path = join(dir, headName(log, session));
    const prefix = `${JSON.stringify({ log, session, pid: process.pid }).slice(0, -1)},"seq":`;
    this.#prefix = Buffer.byteLength(prefix);
    const widest = `${Number.MAX_SAFE_INTEGER},"mac":"${"0".repeat(64)}","ended":false}`;
    this.#buffer = Buffer.alloc(this.#prefix + widest.length + 1);
    this.#buffer.write(prefix, 0, "utf8");
    this.#fd = openSync(
      this.path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  }

  /** One pwrite of the whole line (JSON padded with spaces to a fixed width). */
  update(seq: number, mac: string, ended = false): void {
    this.#seq = seq;
    this.#mac = mac;
    const tail = `${seq},"mac":"${mac}","ended":${ended}}`;
    const end = this.#prefix + this.#buffer.write(tail, this.#prefix, "latin1");
    this.#buffer.fill(0x20, end, this.#buffer.length - 1);
    this.#buffer[this.#buffer.length - 1] = 0x0a;
    writeSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0);
  }

  /** The session is over: say so, and close the file. */
  end(): void {
    try {
      if (this.#seq >= 0) this.update(this.#seq, this.#mac, true);
    } finally {
      closeSync(this.#fd);
    }
  }
}

/** Whether a log has any file left: the log itself, or one of its rotated files. */
export function logHasFiles(log: string, rotated: (log: string) => string[]): boolean {
  return existsSync(log) || rotated(log).length > 0;
}
