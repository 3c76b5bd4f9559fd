/**
 * Kernel events on their way to the audit log, counted so that a server that repeats what the
 * kernel refuses (a denied datagram in a loop, an open of every file under /) cannot flood the log
 * and rotate away what matters (issue 29; docs/DESIGN.md, "The audit log").
 *
 * The rule, per key: the event's type, backend, op or syscall, errno and target (every field but
 * the process's: pid, ppid, comm, child; so a path and its `to`, an address and port, an exec's
 * filename, a DNS name and qtype; a fork is keyed by its type alone, an exit by its code and
 * signal). The first event of a key is written at once, as each was before, and opens the key's
 * window (1 s). Later events of the key within the window are counted, and written as one record
 * when it closes: the first counted event's fields with `count`, `firstTime` and `lastTime`. A
 * window that counted something opens the next one at once, so a key stays counted while its
 * events keep coming; a window that counted nothing closes, and the key's next event is written at
 * once again.
 *
 * Keys are bounded too, since an attacker can vary the port: past `maxKeys` windows open, an event
 * of a new key is counted in one overflow record per event type, backend and op (or syscall), with
 * `overflow: true`, the number of distinct `targets` and a few `samples`. So a flood costs at most
 * 2 × maxKeys records per window, plus one per overflowing type and op, whatever its rate.
 *
 * `flush()` writes what is counted and closes every window: `mcpguard run` calls it before each
 * decision record, so a call's first refusal is written right after its decision, where the
 * benchmark's attribution (runner/src/trial.ts, `auditFacts`) and `mcpguard audit` look for it.
 * `close()` flushes and stops counting; the run command calls it before the audit log closes, on
 * every way out. Timers are unref'd: counting never keeps the proxy alive.
 *
 * Anything KernelEvent-shaped may be added (the proxy's own resolver's refusals, say): `type`
 * becomes the record's `event`, and its `decision` is "deny" for deny, denied and an event that
 * says `decision: "deny"`, else "observe".
 */
import type { KernelEvent } from "@mcpguard/kernel";
import type { AuditEvent, KernelAuditEvent } from "./audit.js";

export const DEFAULT_KERNEL_WINDOW_MS = 1000;
export const DEFAULT_KERNEL_MAX_KEYS = 64;

/** The fields that say which process did it: not part of a key. */
const PROCESS_FIELDS = new Set(["pid", "ppid", "tid", "comm", "child"]);
/** The fields an overflow record is kept by: the kind of event, without its target. */
const KIND_FIELDS = ["type", "backend", "op", "syscall"] as const;
/** Distinct targets an overflow record counts (beyond, `targetsCapped`), and samples it keeps. */
const MAX_TARGETS = 10_000;
const MAX_SAMPLES = 3;

export interface KernelEventsOptions {
  /** Where the records go: the audit log's write (which may throw AuditWriteError, passed on). */
  write: (event: AuditEvent) => void;
  /** The server's name on each record, asked each time (the relay names it once it has started). */
  server: () => string;
  config: string;
  /** The window of a key, in milliseconds (default 1000). */
  windowMs?: number;
  /** Keys with a window open at once before new keys go to the overflow records (default 64). */
  maxKeys?: number;
  /** The clock, for tests (default Date.now). */
  now?: () => number;
}

interface Window {
  /** When the window closes (epoch ms). */
  end: number;
  /** Events counted since the last record of the key. */
  count: number;
  first: number;
  last: number;
  /** The first counted event: its fields go on the record. */
  sample?: KernelEvent;
  /** An overflow window: the distinct keys it counted and a few of their targets. */
  targets?: Set<string>;
  samples?: Record<string, unknown>[];
}

/** The record for a kernel event. */
function kernelRecord(event: KernelEvent, server: string, config: string): KernelAuditEvent {
  const { type, decision, ...rest } = event;
  const deny = type === "deny" || type === "denied" || decision === "deny";
  return { ...rest, type: "kernel", event: type, decision: deny ? "deny" : "observe", server, config };
}

function keyOf(event: KernelEvent): string {
  const fields = Object.keys(event)
    .filter((k) => !PROCESS_FIELDS.has(k))
    .sort();
  return JSON.stringify(fields.map((k) => [k, event[k]]));
}

function kindOf(event: KernelEvent): string {
  return JSON.stringify(KIND_FIELDS.map((k) => event[k] ?? null));
}

/** What an overflow sample keeps of an event: its target, not its kind or its process. */
function targetOf(event: KernelEvent): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event))
    if (!PROCESS_FIELDS.has(k) && !(KIND_FIELDS as readonly string[]).includes(k)) target[k] = v;
  return target;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Kernel events on their way to the audit log, aggregated per key and window (see the module's comment). */
export class KernelEvents {
  readonly #write: (event: AuditEvent) => void;
  readonly #server: () => string;
  readonly #config: string;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #keys = new Map<string, Window>();
  readonly #overflow = new Map<string, Window>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(options: KernelEventsOptions) {
    this.#write = options.write;
    this.#server = options.server;
    this.#config = options.config;
    this.#windowMs = options.windowMs ?? DEFAULT_KERNEL_WINDOW_MS;
    this.#maxKeys = options.maxKeys ?? DEFAULT_KERNEL_MAX_KEYS;
    this.#now = options.now ?? Date.now;
  }

  /** One event: written at once, or counted in its key's window (after close(), always written). */
  add(event: KernelEvent): void {
    if (this.#closed) {
      this.#emit(event);
      return;
    }
    const now = this.#now();
    const key = keyOf(event);
    const open = this.#keys.get(key);
    if (open) {
      this.#count(open, event, now);
    } else if (this.#keys.size < this.#maxKeys) {
      this.#keys.set(key, { end: now + this.#windowMs, count: 0, first: now, last: now });
      this.#schedule(now + this.#windowMs);
      this.#emit(event);
    } else {
      this.#countOverflow(event, key, now);
    }
  }

  /** An event of a new key past `maxKeys`: counted in its kind's overflow window. */
  #countOverflow(event: KernelEvent, key: string, now: number): void {
    const kind = kindOf(event);
    let overflow = this.#overflow.get(kind);
    if (!overflow) {
      overflow = {
        end: now + this.#windowMs,
        count: 0,
        first: now,
        last: now,
        targets: new Set(),
        samples: [],
      };
      this.#overflow.set(kind, overflow);
      this.#schedule(overflow.end);
    }
    this.#count(overflow, event, now);
    const targets = overflow.targets as Set<string>;
    if (targets.size < MAX_TARGETS) targets.add(key);
  }

  /** Write what is counted and close every window: the next event of any key is written at once. */
  flush(): void {
    const windows = [...this.#keys.values(), ...this.#overflow.values()];
    this.#keys.clear();
    this.#overflow.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    for (const w of windows) if (w.count > 0) this.#record(w);
  }

  /** Flush, and write every later event at once: before the audit log closes. */
  close(): void {
    this.#closed = true;
    this.flush();
  }

  #count(w: Window, event: KernelEvent, now: number): void {
    if (w.count === 0) {
      w.first = now;
      w.sample = event;
    }
    w.count++;
    w.last = now;
    if (w.samples && w.samples.length < MAX_SAMPLES) w.samples.push(targetOf(event));
  }

  #emit(event: KernelEvent): void {
    this.#write(kernelRecord(event, this.#server(), this.#config));
  }

  /** The record of a window that counted something. */
  #record(w: Window): void {
    const sample = w.sample as KernelEvent;
    const counts = { count: w.count, firstTime: iso(w.first), lastTime: iso(w.last) };
    if (!w.targets) {
      this.#write({ ...kernelRecord(sample, this.#server(), this.#config), ...counts });
      return;
    }
    const kind = Object.fromEntries(
      KIND_FIELDS.filter((k) => sample[k] !== undefined).map((k) => [k, sample[k]]),
    );
    this.#write({
      ...kernelRecord(kind as KernelEvent, this.#server(), this.#config),
      overflow: true,
      ...counts,
      targets: w.targets.size,
      ...(w.targets.size >= MAX_TARGETS ? { targetsCapped: true } : {}),
      samples: w.samples,
    });
  }

  #schedule(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, at - this.#now()));
    this.#timer.unref();
  }

  /** Close the windows that are due: each that counted something writes its record and opens the next. */
  #tick(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.#now();
    let next = Number.POSITIVE_INFINITY;
    for (const windows of [this.#keys, this.#overflow]) {
      for (const [key, w] of windows) {
        if (w.end > now) {
          next = Math.min(next, w.end);
          continue;
        }
        if (w.count === 0) {
          windows.delete(key);
          continue;
        }
        this.#record(w);
        w.count = 0;
        w.sample = undefined;
        if (w.targets) {
          w.targets.clear();
          w.samples = [];
        }
        w.end = Math.max(w.end + this.#windowMs, now + 1);
        next = Math.min(next, w.end);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.#schedule(next);
  }
}
