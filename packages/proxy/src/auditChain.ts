/**
 * The audit log's integrity chain, in its smallest parts: sealing a record into one line with an
 * HMAC-SHA256 over the line's own bytes, reading that MAC back, and finding a file's first and last
 * line. The writer (audit.ts) and the verifier (auditVerify.ts) share them; no zod here, so the
 * proxy's start-up does not pay for it.
 */
import { fstatSync, readSync } from "node:fs";

/** node:crypto on first use: loading it costs a start that needs none (C0 without an audit log) about 5 ms. */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

/** The fields the chain adds to a record; an event cannot set them. */
export const CHAIN_FIELDS = [
  "session",
  "seq",
  "prev",
  "kid",
  "anchor",
  "anchorHead",
  "prior",
  "from",
  "mac",
] as const;

/** A sealed line ends with its MAC: `...,"mac":"<64 hex>"}`. */
const MAC_TAIL = /,"mac":"([0-9a-f]{64})"\}$/;

/** The longest line the head and tail readers look for (records are a few hundred bytes). */
const MAX_LINE = 1024 * 1024;

function hmac(key: Buffer, body: string): string {
  return nodeCrypto().createHmac("sha256", key).update(body).digest("hex");
}

/**
 * One NDJSON line for `record`, its MAC last. The MAC covers the exact bytes of the line without
 * its `mac` field, so verifying needs no canonical JSON.
 */
export function seal(key: Buffer, record: Record<string, unknown>): { line: string; mac: string } {
  const body = JSON.stringify(record);
  const mac = hmac(key, body);
  return { line: `${body.slice(0, -1)},"mac":"${mac}"}\n`, mac };
}

/** The MAC a line claims, without checking it: a file's identity is the MAC of its first line. */
export function claimedMac(line: string): string | undefined {
  return MAC_TAIL.exec(line)?.[1];
}

export type Unsealed = { ok: true; mac: string } | { ok: false; why: "no-mac" | "bad-mac"; mac?: string };

/** Check a line (without its newline) against the key. */
export function unseal(key: Buffer, line: string): Unsealed {
  const m = MAC_TAIL.exec(line);
  if (!m) return { ok: false, why: "no-mac" };
  const mac = m[1] as string;
  const expected = hmac(key, `${line.slice(0, m.index)}}`);
  const ok = nodeCrypto().timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex"));
  return ok ? { ok: true, mac } : { ok: false, why: "bad-mac", mac };
}

/** A short public name for a key, so `verify` can tell "another key" from "altered". */
export function keyId(key: Buffer): string {
  return hmac(key, "mcpguard audit key id").slice(0, 16);
}

/** The first complete line of an open file (without its newline), if it has one. */
export function firstLine(fd: number): string | undefined {
  const chunks: Buffer[] = [];
  let position = 0;
  while (position < MAX_LINE) {
    const chunk = Buffer.alloc(8192);
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) return undefined;
    const end = chunk.subarray(0, n).indexOf(10);
    if (end >= 0) {
      chunks.push(chunk.subarray(0, end));
      return Buffer.concat(chunks).toString("utf8");
    }
    chunks.push(chunk.subarray(0, n));
    position += n;
  }
  return undefined;
}

/** The last complete line of an open file (without its newline), if it has one. */
export function lastLine(fd: number): string | undefined {
  const size = fstatSync(fd).size;
  let start = size;
  let tail = Buffer.alloc(0);
  while (start > 0 && size - start < MAX_LINE) {
    const length = Math.min(8192, start);
    start -= length;
    const chunk = Buffer.alloc(length);
    readSync(fd, chunk, 0, length, start);
    tail = Buffer.concat([chunk, tail]);
    const lastNewline = tail.lastIndexOf(10);
    if (lastNewline < 0) continue;
    const before = tail.subarray(0, lastNewline).lastIndexOf(10);
    if (before >= 0 || start === 0) return tail.subarray(before + 1, lastNewline).toString("utf8");
  }
  return undefined;
}
