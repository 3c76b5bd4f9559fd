/**
 * The audit log: one JSON object per line, appended with a single write(2) on an O_APPEND
 * descriptor, so lines from concurrent writers never interleave.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";

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
}

export type AuditEvent = DecisionEvent | LifecycleEvent;

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

export class AuditLog {
  readonly #fd: number;

  constructor(readonly path: string) {
    this.#fd = openSync(path, "a", 0o600);
  }

  write(event: AuditEvent): void {
    const line = `${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`;
    writeSync(this.#fd, line);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
