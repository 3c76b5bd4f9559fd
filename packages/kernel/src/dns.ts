/**
 * DNS messages as the proxy's resolver (resolver.ts) reads and writes them (RFC 1035, RFC 6891):
 * it takes a stub resolver's query apart, judges the one name it asks for, builds a fresh query of
 * its own for the upstream resolver, and fits the upstream's answer back to the client's query.
 * Nothing of the client's bytes but the name (in its own letter case) and the type reaches the
 * upstream: not its id, flags, EDNS options or padding, which could carry data, and a name that
 * is not granted never leaves at all.
 */

const TYPE_A = 1;
const TYPE_CNAME = 5;
const TYPE_AAAA = 28;
const TYPE_OPT = 41;
const TYPE_SVCB = 64;
const TYPE_HTTPS = 65;
const CLASS_IN = 1;

export const RCODE_SERVFAIL = 2;
export const RCODE_REFUSED = 5;

/**
 * The types a client may ask for about a granted name: its addresses (A, AAAA), its alias, and
 * the service records HTTPS clients ask for first (SVCB, HTTPS). Others (TXT, MX, ...) are not
 * what reaching a host needs.
 */
export const ASKABLE_TYPES: ReadonlySet<number> = new Set([
  TYPE_A,
  TYPE_AAAA,
  TYPE_CNAME,
  TYPE_SVCB,
  TYPE_HTTPS,
]);

/** The largest message over UDP without EDNS, and the largest UDP payload the resolver sends or takes. */
const PLAIN_UDP = 512;
export const MAX_UDP = 1232;
const HEADER = 12;

/** A client's query, read and checked: one question, nothing else but an EDNS OPT record. */
export interface Query {
  id: number;
  /** The name as asked, letter case kept (some clients check it), without the trailing dot. */
  name: string;
  /** The question name's wire form (labels), as the client wrote it. */
  wireName: Buffer;
  type: number;
  /** The UDP payload the client can take: 512 without EDNS, else its OPT's size (at least 512). */
  udpSize: number;
  edns: boolean;
  /** The recursion-desired bit, echoed in the answer. */
  rd: boolean;
}

export type ReadQuery = { ok: true; query: Query } | { ok: false; why: string; query?: Partial<Query> };

/**
 * The labels of a name at `offset` without compression (a query has nothing to point back to).
 * A label that holds a dot is refused: joined with dots, `api.example` and `com` would read as
 * `api.example.com`, the three labels the policy grants, where the upstream resolver is asked for
 * the two it was sent.
 */
function readName(msg: Buffer, offset: number): { name: string; end: number } | "dotted" | undefined {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    const length = msg[at];
    if (length === undefined) return undefined;
    if (length === 0) break;
    // 0xC0 is a compression pointer; 0x40 and 0x80 are reserved label types.
    if (length > 63) return undefined;
    const label = msg.subarray(at + 1, at + 1 + length);
    if (label.length !== length) return undefined;
    if (label.includes(0x2e)) return "dotted";
    labels.push(label.toString("latin1"));
    at += 1 + length;
  }
  if (at + 1 - offset > 255) return undefined;
  return { name: labels.join("."), end: at + 1 };
}

/** Read a client's query; anything that is not one plain question is refused, with why. */
export function readQuery(msg: Buffer): ReadQuery {
  if (msg.length < HEADER + 5) return { ok: false, why: "not a DNS query (too short)" };
  if (msg.length > MAX_UDP) return { ok: false, why: "not a DNS query (too long)" };
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  const qr = flags >> 15;
  const opcode = (flags >> 11) & 0xf;
  const [qd, an, ns, ar] = [4, 6, 8, 10].map((at) => msg.readUInt16BE(at)) as [
    number,
    number,
    number,
    number,
  ];
  if (qr !== 0 || opcode !== 0 || qd !== 1 || an !== 0 || ns !== 0 || ar > 1)
    return { ok: false, why: "not a DNS query (header)" };
  const q = readName(msg, HEADER);
  if (q === "dotted") return { ok: false, why: "a label of the name holds a dot" };
  if (!q || q.end + 4 > msg.length) return { ok: false, why: "not a DNS query (question)" };
  const type = msg.readUInt16BE(q.end);
  const klass = msg.readUInt16BE(q.end + 2);
  let at = q.end + 4;
  let edns = false;
  let udpSize = PLAIN_UDP;
  if (ar === 1) {
    // An OPT record: the root name, type 41, the payload size in the class field.
    if (msg[at] !== 0 || at + 11 > msg.length || msg.readUInt16BE(at + 1) !== TYPE_OPT)
      return { ok: false, why: "not a DNS query (additional record)" };
    udpSize = Math.max(PLAIN_UDP, msg.readUInt16BE(at + 3));
    at += 11 + msg.readUInt16BE(at + 9);
    edns = true;
  }
  if (at !== msg.length) return { ok: false, why: "not a DNS query (trailing bytes)" };
  const query: Query = {
    id,
    name: q.name,
    wireName: msg.subarray(HEADER, q.end),
    type,
    udpSize: Math.min(udpSize, MAX_UDP),
    edns,
    rd: (flags & 0x0100) !== 0,
  };
  if (klass !== CLASS_IN) return { ok: false, why: `class ${klass} is not IN`, query };
  return { ok: true, query };
}

/** DNS compares names without regard to ASCII case only (RFC 4343): other letters stay as they are. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/** Whether `name` is granted by `names` (exact, or `*.suffix` for any name below the suffix). */
export function nameGranted(name: string, names: readonly string[]): boolean {
  const asked = asciiLower(name).replace(/\.$/, "");
  return names.some((granted) => {
    const g = asciiLower(granted).replace(/\.$/, "");
    return g.startsWith("*.") ? asked.endsWith(g.slice(1)) && asked.length > g.length - 1 : asked === g;
  });
}

/**
 * How a refused name is recorded: its last two labels as they are (where it would have gone) and
 * the rest only counted, so that what a name carries out (a file, base32 in its labels) does not
 * land in the audit log: `…(3 labels).example.com`.
 */
export function recordedName(name: string): string {
  const labels = name.split(".").filter(Boolean);
  const printable = (label: string) => label.replace(/[^\x21-\x7e]/g, "?");
  if (labels.length <= 2) return labels.map(printable).join(".");
  return `…(${labels.length - 2} labels).${labels.slice(-2).map(printable).join(".")}`;
}

/** The upstream query: a fresh id, recursion desired, the name in lower case, EDNS for 1232 bytes. */
export function upstreamQuery(query: Query, id: number): Buffer {
  const header = Buffer.alloc(HEADER);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(1, 10);
  const name = Buffer.from(query.wireName);
  // Lower-case ASCII letters only, so that the letter case of a name cannot carry bits.
  for (let i = 0; i < name.length; i++) {
    const c = name[i] as number;
    if (c >= 0x41 && c <= 0x5a) name[i] = c + 0x20;
  }
  const question = Buffer.alloc(4);
  question.writeUInt16BE(query.type, 0);
  question.writeUInt16BE(CLASS_IN, 2);
  const opt = Buffer.from([0, 0, TYPE_OPT, MAX_UDP >> 8, MAX_UDP & 0xff, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, name, question, opt]);
}

/** Skip a possibly compressed name at `offset`: where it ends, or undefined when malformed. */
function skipName(msg: Buffer, offset: number): number | undefined {
  let at = offset;
  for (let labels = 0; labels < 128; labels++) {
    const length = msg[at];
    if (length === undefined) return undefined;
    if (length === 0) return at + 1;
    if ((length & 0xc0) === 0xc0) return at + 2 <= msg.length ? at + 2 : undefined;
    if (length > 63) return undefined;
    at += 1 + length;
  }
  return undefined;
}

/**
 * The upstream's answer fitted to the client's query, or undefined when it does not answer the
 * question asked: the client's id, its name as it wrote it (same length, so the answer's
 * compression pointers still hold), the client's recursion bit, and without the upstream's OPT
 * record and whatever follows it (a fresh OPT when the client sent one). Too long for the client's
 * UDP size, it is cut to the question with the TC bit set, and the client asks again over TCP.
 */
export function clientAnswer(
  answer: Buffer,
  query: Query,
  upstreamId: number,
  udp: boolean,
): Buffer | undefined {
  if (answer.length < HEADER || answer.readUInt16BE(0) !== upstreamId) return undefined;
  const flags = answer.readUInt16BE(2);
  if (flags >> 15 !== 1 || answer.readUInt16BE(4) !== 1) return undefined;
  const qEnd = HEADER + query.wireName.length;
  if (qEnd + 4 > answer.length) return undefined;
  const asked = asciiLower(answer.subarray(HEADER, qEnd).toString("latin1"));
  if (asked !== asciiLower(query.wireName.toString("latin1"))) return undefined;
  if (answer.readUInt16BE(qEnd) !== query.type || answer.readUInt16BE(qEnd + 2) !== CLASS_IN)
    return undefined;
  const counts = [6, 8, 10].map((at) => answer.readUInt16BE(at)) as [number, number, number];
  // Walk the records to the upstream's OPT (or the end).
  let at = qEnd + 4;
  let kept = [0, 0, 0];
  let end = at;
  walk: for (let section = 0; section < 3; section++) {
    for (let i = 0; i < (counts[section] as number); i++) {
      const nameEnd = skipName(answer, at);
      if (nameEnd === undefined || nameEnd + 10 > answer.length) return undefined;
      const type = answer.readUInt16BE(nameEnd);
      const rdEnd = nameEnd + 10 + answer.readUInt16BE(nameEnd + 8);
      if (rdEnd > answer.length) return undefined;
      if (type === TYPE_OPT) break walk;
      kept = kept.map((n, s) => (s === section ? n + 1 : n));
      at = rdEnd;
      end = rdEnd;
    }
  }
  const opt = query.edns
    ? Buffer.from([0, 0, TYPE_OPT, query.udpSize >> 8, query.udpSize & 0xff, 0, 0, 0, 0, 0, 0])
    : Buffer.alloc(0);
  const out = Buffer.concat([answer.subarray(0, end), opt]);
  out.writeUInt16BE(query.id, 0);
  // The client's recursion-desired bit; the upstream's other flags and its rcode stay.
  out.writeUInt16BE((flags & ~0x0100) | (query.rd ? 0x0100 : 0), 2);
  query.wireName.copy(out, HEADER);
  out.writeUInt16BE(kept[0] as number, 6);
  out.writeUInt16BE(kept[1] as number, 8);
  out.writeUInt16BE((kept[2] as number) + (query.edns ? 1 : 0), 10);
  if (udp && out.length > query.udpSize) return truncated(query, flags);
  return out;
}

/** An answer with the question only and the TC bit: too long for UDP, ask over TCP. */
function truncated(query: Query, upstreamFlags: number): Buffer {
  const out = errorAnswer(query, upstreamFlags & 0xf);
  out.writeUInt16BE(out.readUInt16BE(2) | 0x0200, 2);
  return out;
}

/** An answer that carries only an rcode (REFUSED, SERVFAIL), with the client's question. */
export function errorAnswer(query: Query, rcode: number): Buffer {
  const header = Buffer.alloc(HEADER);
  header.writeUInt16BE(query.id, 0);
  // QR, RA, the client's RD, and the rcode.
  header.writeUInt16BE(0x8080 | (query.rd ? 0x0100 : 0) | (rcode & 0xf), 2);
  header.writeUInt16BE(1, 4);
  const question = Buffer.alloc(4);
  question.writeUInt16BE(query.type, 0);
  question.writeUInt16BE(CLASS_IN, 2);
  const opt = query.edns
    ? Buffer.from([0, 0, TYPE_OPT, query.udpSize >> 8, query.udpSize & 0xff, 0, 0, 0, 0, 0, 0])
    : Buffer.alloc(0);
  if (query.edns) header.writeUInt16BE(1, 10);
  return Buffer.concat([header, query.wireName, question, opt]);
}
