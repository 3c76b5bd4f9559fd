/**
 * The audit log: one JSON object per line, appended with a single write(2) on an O_APPEND
 * descriptor, so lines from concurrent writers never interleave. Every line is sealed with an
 * HMAC chained per writer session (see docs/DESIGN.md, "The audit log"), so `mcpguard audit verify`
 * can tell an altered, inserted, deleted or reordered line.
 */
import { closeSync, fstatSync, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CHAIN_FIELDS, claimedMac, firstLine, keyId, lastLine, seal } from "./auditChain.js";
import { type LogEvent, maintain, rotatedFiles, SETTLE_MS } from "./auditCompact.js";

import {
  canonicalLog,
  claimHeads,
  HeadFile,
  headFiles,
  logHasFiles,
  type PriorRef,
  pruneHeads,
  readHeads,
  running,
} from "./auditHeads.js";

/** node:crypto on first use: loading it costs a start that needs none (C0 without an audit log) about 5 ms. */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

type Decision = "allow" | "deny" | "modify";

interface DecisionEvent {
  type: "decision";
  server: string;
  tool: string;
  config: string;
  /** The layer that decided, or "none" when no layer is configured. */
  layer: string;
  rule: string | null;
  decision: Decision;
  reason: string;
  /** Time the layers took to decide, in milliseconds. */
  latencyMs: number;
  /** sha256 of the canonical JSON of the arguments: never the arguments themselves. */
  argsDigest: string;
  /**
   * An L1 refusal's missing grants (files, programs, destinations, SQL classes; the first is the
   * one its reason names): what `mcpguard policy learn` proposes.
   */
  needs?: { capability: string; value: string }[];
}

interface LifecycleEvent {
  type: "lifecycle";
  server: string;
  config: string;
  event: "start" | "exit";
  pid?: number;
  status?: number;
  containment?: string;
  /** Environment variables withheld from the server at spawn (names only). */
  withheld?: string[];
  /** The L3 backend of each capability, and what compiling the policy approximated. */
  l3?: Record<string, string>;
  l3Notes?: string[];
  /** On the exit record: the name the server gave itself in `initialize` (its claim, not its name). */
  claimedName?: string;
  /** On the start record: the folders {{cwd}}, {{home}} and {{tmp}} stood for. */
  world?: { cwd: string; home?: string; tmp?: string };
}

/** What the kernel layer saw: a deny by a BPF program, a syscall Landlock refused, an exec, a fork. */
export interface KernelAuditEvent {
  type: "kernel";
  server: string;
  config: string;
  event: string;
  decision: "deny" | "observe";
  backend?: string;
  [detail: string]: unknown;
}

export type AuditEvent = DecisionEvent | LifecycleEvent | KernelAuditEvent | LogEvent;

const SCRIPT_RUNNERS =
  /^(node|nodejs|bun|bunx|deno|npx|pnpm|pnpx|uv|uvx|pipx|python[\d.]*|pypy[\d.]*|ruby|perl|php|java|sh|bash)$/;
const SUBCOMMANDS = new Set(["run", "exec", "dlx", "x", "tool"]);

/**
 * The server's name when neither `--server-name` nor a policy gives one: its script's (or command's)
 * file name, never what the server calls itself. `node /srv/files.mjs` is "files", `uvx mcp-fetch` is
 * "mcp-fetch", `python3 -m notes` is "notes".
 */
export function serverNameFromCommand(argv: readonly string[]): string {
  const [command = "", ...args] = argv;
  let name = basename(command);
  if (SCRIPT_RUNNERS.test(name)) {
    const script = args.find((arg) => !arg.startsWith("-") && !SUBCOMMANDS.has(arg));
    if (script) name = basename(script);
  }
  return name.replace(/\.(m?[jt]s|c[jt]s|py|rb|pl|php|jar|sh)$/, "") || "server";
}

/** An array or object {@link canonicalJson} is writing: its values (and keys) and how far it got. */
interface Open {
  values: unknown[];
  keys: string[] | undefined;
  next: number;
  close: "]" | "}";
}

/** A value's text when it holds nothing, else its opening bracket, with its entry put on `open`. */
function begin(value: unknown, open: Open[]): string {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) {
    // Holding no array or object, it is the same text as JSON.stringify writes, written at once.
    if (value.every((v) => v === null || typeof v !== "object")) return JSON.stringify(value);
    open.push({ values: value, keys: undefined, next: 0, close: "]" });
    return "[";
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    open.push({ values: entries.map((e) => e[1]), keys: entries.map((e) => e[0]), next: 0, close: "}" });
    return "{";
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * JSON with object keys sorted, so equal arguments always give the same digest. The walk keeps its
 * own stack of the arrays and objects it is in, so a value nested any depth costs heap, never the
 * call stack, and a long array costs its text, not an entry per element (a tool listing with an
 * enum of millions of numbers took the proxy's heap past its limit when it did).
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  let chunk = "";
  const open: Open[] = [];
  chunk += begin(value, open);
  while (open.length > 0) {
    const top = open[open.length - 1] as Open;
    if (top.next >= top.values.length) {
      open.pop();
      chunk += top.close;
      continue;
    }
    const i = top.next++;
    const separator = i > 0 ? "," : "";
    chunk +=
      top.keys === undefined
        ? separator + begin(top.values[i], open)
        : `${separator}${JSON.stringify(top.keys[i])}:${begin(top.values[i], open)}`;
    if (chunk.length >= 65_536) {
      out.push(chunk);
      chunk = "";
    }
  }
  out.push(chunk);
  return out.join("");
}

export function digest(value: unknown): string {
  return `sha256:${nodeCrypto().createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}

export interface AuditLogOptions {
  /** The HMAC key (see auditKey.ts): every line is sealed with it. */
  key: Buffer;
  /**
   * The key's public id (auditChain.keyId), written on each session's first record; computed from
   * the key there when not given.
   */
  kid?: string;
  /** Rotate once the file grows past this many bytes (default 16 MiB). */
  maxBytes?: number;
  /**
   * Rotated files to keep whole, newest first (default 10); older ones are compacted, and as many
   * compacted files are kept (auditCompact.ts).
   */
  keep?: number;
  /**
   * The heads directory beside the key (auditHeads.ts, openHeadsDir): the session keeps its head
   * file there, and takes those of the log's sessions that are over. Without it, no head file.
   */
  heads?: string;
  /** How long a rotated file must have been left alone to be compacted (auditCompact.ts, SETTLE_MS; tests). */
  settleMs?: number;
}

export const DEFAULT_AUDIT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_AUDIT_KEEP = 10;

let rotation = 0;

/** A record the audit log could not take: whatever it recorded must not happen unrecorded. */
export class AuditWriteError extends Error {
  override readonly name = "AuditWriteError";
}

/**
 * Several proxies may share one audit log. Every line is one write(2) on an O_APPEND descriptor, so
 * lines never interleave. Rotation renames the file to a unique name (`<file>.<time>-<pid>-<n>`), so
 * two writers rotating at once cannot overwrite each other's file; a writer whose file was rotated
 * reopens the path before its next line, and a line that landed in a file pruned meanwhile is
 * written again, so no line is lost.
 *
 * Each AuditLog is one session of the chain: a random id, a sequence number, `prev` (the MAC of the
 * session's previous line), on its first line the key id and an `anchor` (the MAC of the log's last
 * line at that moment, and `anchorHead`, the MAC of the first line of the file holding it), and
 * `from` (the MAC of the first line of the file holding the previous line) on a line that is the
 * session's first in another file. No lock: the chains of concurrent writers never meet.
 */
export class AuditLog {
  #fd = -1;
  #ino = -1;
  /** The session has a line in the file under #fd. */
  #wroteHere = false;
  /** The first-line MAC of the file holding the session's previous line, once it is not this file. */
  #from: string | undefined;
  #seq = 0;
  #prev: string | undefined;
  /** Writing a rotate, compact or prune record, which never rotates. */
  #bookkeeping = false;
  /** The heads directory, this session's head file once it has written, and what it took. */
  readonly #heads: string | undefined;
  #head: HeadFile | undefined;
  #prior: PriorRef[] = [];
  #claimed: string[] = [];
  readonly #canonical: string;
  readonly #settleMs: number;
  #saidOverBudget = false;
  /**
   * The session id and the key id, made at the first record (#sessionId, #record): they need
   * node:crypto, which then loads once the server is released (`run` writes its start record then),
   * not on the start's path.
   */
  #session: string | undefined;
  readonly #key: Buffer;
  #kid: string | undefined;
  readonly #maxBytes: number;
  readonly #keep: number;

  constructor(
    readonly path: string,
    options: AuditLogOptions,
  ) {
    this.#key = options.key;
    this.#kid = options.kid;
    this.#maxBytes = options.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES;
    this.#keep = options.keep ?? DEFAULT_AUDIT_KEEP;
    this.#heads = options.heads;
    this.#settleMs = options.settleMs ?? SETTLE_MS;
    this.#canonical = canonicalLog(path);
    // Before the log is opened (and made): a log that is not there has no session to follow.
    if (this.#heads)
      ({ prior: this.#prior, files: this.#claimed } = claimHeads(this.#heads, this.#canonical, (log) =>
        logHasFiles(log, auditFiles),
      ));
    this.#open();
  }

  /** Called before a decision record is written (`mcpguard run` writes the kernel events it counted). */
  beforeDecision: (() => void) | undefined;

  /** The session id on every line this writer seals. */
  get session(): string {
    return this.#sessionId();
  }

  /** Append one record; throws {@link AuditWriteError} when the file cannot take it (a full disk). */
  write(event: AuditEvent): void {
    if (event.type === "decision") this.beforeDecision?.();
    try {
      this.#write(event);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new AuditWriteError(`the audit log ${this.path} cannot be written: ${code}`);
    }
  }

  #write(event: AuditEvent): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      this.#followRotation();
      const { line, mac } = seal(this.#key, this.#record(event));
      writeSync(this.#fd, line);
      const written = fstatSync(this.#fd);
      if (written.nlink > 0) {
        this.#seq++;
        this.#prev = mac;
        this.#from = undefined;
        this.#wroteHere = true;
        if (this.#heads) this.#updateHead(this.#seq - 1, mac);
        if (written.size > this.#maxBytes && !this.#bookkeeping) this.#rotate();
        return;
      }
      // The file was pruned after our line landed in it: seal the line again for the file that replaced it.
    }
  }

  /** The session is over: its head file says so. */
  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
    const head = this.#head;
    this.#head = undefined;
    head?.end();
  }

  /** One pwrite: the head file names the record just written (made at the session's first). */
  #updateHead(seq: number, mac: string): void {
    if (this.#head) {
      this.#head.update(seq, mac);
      return;
    }
    this.#head = new HeadFile(this.#heads as string, this.#canonical, this.#sessionId());
    this.#head.update(seq, mac);
    // The sessions this one's first record named as prior are accounted for in the log now, and
    // by this session's head file: theirs go.
    for (const file of this.#claimed) {
      try {
        unlinkSync(file);
      } catch {
        // Taken by another session too.
      }
    }
    this.#claimed = [];
    // After the release under `run` (its first record is the start record), while the server boots.
    pruneHeads(this.#heads as string, (log) => logHasFiles(log, auditFiles));
  }

  #sessionId(): string {
    this.#session ??= nodeCrypto().randomBytes(12).toString("base64url");
    return this.#session;
  }

  #record(event: AuditEvent): Record<string, unknown> {
    const record: Record<string, unknown> = { time: new Date().toISOString(), ...event };
    for (const field of CHAIN_FIELDS) if (Object.hasOwn(record, field)) delete record[field];
    record.session = this.#sessionId();
    record.seq = this.#seq;
    if (this.#seq === 0) {
      this.#kid ??= keyId(this.#key);
      Object.assign(record, { kid: this.#kid }, this.#anchor());
      if (this.#prior.length > 0) record.prior = this.#prior;
    } else record.prev = this.#prev;
    if (this.#from !== undefined) record.from = this.#from;
    return record;
  }

  /** The log's last line before this session's first: in this file, or else in the newest rotated one. */
  #anchor(): { anchor?: string; anchorHead?: string } {
    let last = lastLine(this.#fd);
    let head = last === undefined ? undefined : firstLine(this.#fd);
    if (last === undefined) {
      const newest = auditFiles(this.path)
        .filter((f) => f !== this.path)
        .at(-1);
      if (newest) {
        try {
          const fd = openSync(newest, "r");
          [last, head] = [lastLine(fd), firstLine(fd)];
          closeSync(fd);
        } catch {
          // Pruned meanwhile.
        }
      }
    }
    const anchor = last === undefined ? undefined : claimedMac(last);
    const anchorHead = head === undefined ? undefined : claimedMac(head);
    return anchor ? { anchor, ...(anchorHead ? { anchorHead } : {}) } : {};
  }

  #open(): void {
    if (this.#fd >= 0) {
      if (this.#wroteHere) {
        const head = firstLine(this.#fd);
        this.#from = head === undefined ? undefined : claimedMac(head);
      }
      closeSync(this.#fd);
    }
    // Read and append: the chain reads the first and last lines of the file it writes to.
    const fd = openSync(this.path, "a+", 0o600);
    const st = fstatSync(fd);
    // A device or a pipe (`/dev/stdout` is the protocol's own stream) can be neither chained nor rotated.
    if (!st.isFile()) {
      closeSync(fd);
      throw Object.assign(new Error(`${this.path} is not a regular file`), { code: "ENOTREG" });
    }
    this.#fd = fd;
    this.#ino = st.ino;
    this.#wroteHere = false;
  }

  /** Reopen when another writer rotated the file away from under us. */
  #followRotation(): void {
    try {
      if (statSync(this.path).ino === this.#ino) return;
    } catch {
      // The path is gone: it was rotated and nobody has written since.
    }
    this.#open();
  }

  #rotate(): void {
    const stamp = new Date().toISOString().replace(/[-:.]/g, "");
    const name = `${basename(this.path)}.${stamp}-${process.pid}-${++rotation}`;
    const renamed = join(dirname(this.path), name);
    try {
      // Another writer may have rotated our file already; then the file at the path is not ours to move.
      if (statSync(this.path).ino !== this.#ino) return;
      renameSync(this.path, renamed);
    } catch {
      return; // Another writer rotated it first.
    }
    const head = headOf(renamed);
    this.#open();
    this.#bookkeeping = true;
    try {
      this.write({ type: "audit", event: "rotate", file: name, head: head ?? null });
      const ctx = {
        path: this.path,
        key: this.#key,
        keep: this.#keep,
        write: (event: LogEvent) => this.write(event),
        running: () => this.#running(),
        headFiles: this.#heads
          ? (s: string) => headFiles(this.#heads as string, this.#canonical, s)
          : undefined,
        saidOverBudget: this.#saidOverBudget,
        settleMs: this.#settleMs,
      };
      maintain(ctx);
      this.#saidOverBudget = ctx.saidOverBudget;
    } finally {
      this.#bookkeeping = false;
    }
  }

  /** The sessions still writing to this log: this one, and those whose head file says so. */
  #running(): Set<string> {
    const sessions = new Set([this.#sessionId()]);
    if (this.#heads)
      for (const { head } of readHeads(this.#heads, this.#canonical))
        if (running(head)) sessions.add(head.session);
    return sessions;
  }
}

/** The MAC of a file's first line: the file's identity in the chain. */
function headOf(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    // Rotated away or pruned: no head.
    return undefined;
  }
  try {
    const line = firstLine(fd);
    return line === undefined ? undefined : claimedMac(line);
  } finally {
    closeSync(fd);
  }
}

/** The audit log and its rotated files (compacted or not), oldest first. */
export function auditFiles(path: string): string[] {
  const rotated = rotatedFiles(path).map((f) => join(dirname(path), f.name));
  let live = false;
  try {
    statSync(path); // Whatever it is: a reader names a directory's EISDIR.
    live = true;
  } catch {
    // Rotated away, and nobody has written since.
  }
  return live ? [...rotated, path] : rotated;
}
