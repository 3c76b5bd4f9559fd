/**
 * The audit log: one JSON object per line, appended with a single write(2) on an O_APPEND
 * descriptor, so lines from concurrent writers never interleave.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

export type Decision = "allow" | "deny" | "modify";

export interface DecisionEvent {
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
}

export interface LifecycleEvent {
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

export type AuditEvent = DecisionEvent | LifecycleEvent | KernelAuditEvent;

/** JSON with object keys sorted, so equal arguments always give the same digest. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function digest(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}

export interface AuditLogOptions {
  /** Rotate once the file grows past this many bytes (default 16 MiB). */
  maxBytes?: number;
  /** Rotated files to keep, newest first (default 10). */
  keep?: number;
}

export const DEFAULT_AUDIT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_AUDIT_KEEP = 10;

let rotation = 0;

/**
 * Several proxies may share one audit log. Every line is one write(2) on an O_APPEND descriptor, so
 * lines never interleave. Rotation renames the file to a unique name (`<file>.<time>-<pid>-<n>`), so
 * two writers rotating at once cannot overwrite each other's file; a writer whose file was rotated
 * reopens the path before its next line, and a line that landed in a file pruned meanwhile is
 * written again, so no line is lost.
 */
export class AuditLog {
  #fd = -1;
  #ino = -1;
  readonly #maxBytes: number;
  readonly #keep: number;

  constructor(
    readonly path: string,
    options: AuditLogOptions = {},
  ) {
    this.#maxBytes = options.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES;
    this.#keep = options.keep ?? DEFAULT_AUDIT_KEEP;
    this.#open();
  }

  write(event: AuditEvent): void {
    const line = `${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`;
    for (let attempt = 0; attempt < 5; attempt++) {
      this.#followRotation();
      writeSync(this.#fd, line);
      const written = fstatSync(this.#fd);
      if (written.nlink > 0) {
        if (written.size > this.#maxBytes) this.#rotate();
        return;
      }
    }
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  #open(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = openSync(this.path, "a", 0o600);
    this.#ino = fstatSync(this.#fd).ino;
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
    try {
      renameSync(this.path, `${this.path}.${stamp}-${process.pid}-${++rotation}`);
    } catch {
      return; // Another writer rotated it first.
    }
    this.#open();
    this.#prune();
  }

  #prune(): void {
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}.`;
    const rotated = readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && /^\d{8}T\d+Z-\d+-\d+$/.test(name.slice(prefix.length)))
      .sort()
      .reverse();
    for (const name of rotated.slice(this.#keep)) {
      try {
        unlinkSync(join(dir, name));
      } catch {
        // Pruned by another writer.
      }
    }
  }
}

/** The audit log and its rotated files, oldest first. */
export function auditFiles(path: string): string[] {
  const dir = dirname(path);
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const rotated = names
    .filter((name) => name.startsWith(prefix) && /^\d{8}T\d+Z-\d+-\d+$/.test(name.slice(prefix.length)))
    .sort()
    .map((name) => join(dir, name));
  return names.includes(basename(path)) ? [...rotated, path] : rotated;
}
