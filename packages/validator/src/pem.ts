/**
 * Armoured blocks (PEM, OpenPGP, RFC 4716): a block is public when its label says it holds public
 * material and its data is that material. A label alone says nothing (anyone can write "BEGIN
 * CERTIFICATE" above a key), so the data is read: the DER of a certificate is a SEQUENCE of the
 * signed part, the algorithm and the signature (a BIT STRING), a public key's a SEQUENCE of an
 * algorithm and a BIT STRING, and so on; an OpenPGP block's first packet is a public key or a
 * signature. A private key has none of these shapes (PKCS#8 is a version INTEGER, an algorithm and
 * an OCTET STRING; PKCS#1 and SEC1 start with a version INTEGER; OpenSSH keys are no DER), so a key
 * under a public label stays a secret.
 *
 * A `.pem` file is judged the same way, by what it holds rather than by its name: one whose every
 * block is public (a certificate chain, a CA bundle, a public key, parameters) holds no secret.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

interface Tlv {
  tag: number;
  /** Where its content starts and ends. */
  start: number;
  end: number;
}

/** The DER element at `at` (tag, length, content within `limit`), or undefined when it is none. */
function tlv(der: Buffer, at: number, limit: number): Tlv | undefined {
  if (at + 2 > limit) return undefined;
  const tag = der[at] as number;
  // High tag numbers (0x1f) appear in none of the structures read here.
  if ((tag & 0x1f) === 0x1f) return undefined;
  let length = der[at + 1] as number;
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    // DER: no indefinite length, at most four length bytes, and no leading zero byte.
    if (bytes === 0 || bytes > 4 || start + bytes > limit || der[start] === 0) return undefined;
    length = 0;
    for (let k = 0; k < bytes; k++) length = length * 256 + (der[start + k] as number);
    start += bytes;
    if (length < 0x80) return undefined;
  }
  const end = start + length;
  return end <= limit ? { tag, start, end } : undefined;
}

/** The elements that make up `parent`'s content exactly, or undefined when they do not. */
function children(der: Buffer, parent: Tlv): Tlv[] | undefined {
  const items: Tlv[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const item = tlv(der, at, parent.end);
    if (!item) return undefined;
    items.push(item);
    at = item.end;
  }
  return items;
}

const SEQUENCE = 0x30;
const INTEGER = 0x02;
const BIT_STRING = 0x03;
const OID = 0x06;
const EXPLICIT_0 = 0xa0;

/** `der` is one element (with nothing after it) whose children have these tags, in order. */
function shaped(der: Buffer, ...tags: number[]): boolean {
  const top = tlv(der, 0, der.length);
  if (!top || top.tag !== SEQUENCE || top.end !== der.length) return false;
  const items = children(der, top);
  return (
    items !== undefined && items.length === tags.length && items.every((item, k) => item.tag === tags[k])
  );
}

/** A SEQUENCE of `min` to `max` INTEGERs, optionally followed by one SEQUENCE (X9.42 parameters). */
function integers(der: Buffer, min: number, max: number, tail = false): boolean {
  const top = tlv(der, 0, der.length);
  if (!top || top.tag !== SEQUENCE || top.end !== der.length) return false;
  const items = children(der, top);
  if (!items) return false;
  const ints = items.findIndex((item) => item.tag !== INTEGER);
  const count = ints === -1 ? items.length : ints;
  const rest = items.slice(count);
  return (
    count >= min &&
    count <= max &&
    (rest.length === 0 || (tail && rest.length === 1 && rest[0]?.tag === SEQUENCE))
  );
}

/** `der` is one element of this tag, with nothing after it. */
function single(der: Buffer, tag: number): boolean {
  const top = tlv(der, 0, der.length);
  return top !== undefined && top.tag === tag && top.end === der.length;
}

/** A certificate, a CRL and a request alike: the signed part, the algorithm, the signature. */
const signed = (der: Buffer) => shaped(der, SEQUENCE, SEQUENCE, BIT_STRING);

/** PKCS#7 / CMS signedData (a certificate chain, a detached signature): its content type's OID. */
const SIGNED_DATA = Buffer.from([0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]);
function signedData(der: Buffer): boolean {
  const top = tlv(der, 0, der.length);
  const items = top && top.tag === SEQUENCE && top.end === der.length ? children(der, top) : undefined;
  return (
    items !== undefined &&
    items.length === 2 &&
    items[0]?.tag === OID &&
    der.subarray(top?.start, items[0].end).equals(SIGNED_DATA) &&
    items[1]?.tag === EXPLICIT_0
  );
}

/** OpenSSL's TRUSTED CERTIFICATE: a certificate, then its trust settings (a SEQUENCE), if any. */
function trustedCertificate(der: Buffer): boolean {
  const cert = tlv(der, 0, der.length);
  if (!cert || cert.tag !== SEQUENCE || !signed(der.subarray(0, cert.end))) return false;
  if (cert.end === der.length) return true;
  const aux = tlv(der, cert.end, der.length);
  return aux !== undefined && aux.tag === SEQUENCE && aux.end === der.length;
}

/** An OpenPGP block's first packet tag (old or new packet format). */
function packetTag(data: Buffer): number | undefined {
  const first = data[0];
  if (first === undefined || (first & 0x80) === 0) return undefined;
  return first & 0x40 ? first & 0x3f : (first >> 2) & 0x0f;
}

/** An SSH public key blob (RFC 4253): a length-prefixed key type, then the key. */
function sshBlob(data: Buffer): boolean {
  if (data.length < 8) return false;
  const length = data.readUInt32BE(0);
  const type = data.subarray(4, 4 + length).toString("latin1");
  return length < 64 && data.length > 4 + length && /^(?:ssh-|ecdsa-|sk-)[a-z0-9@.-]+$/.test(type);
}

/** What each public label's data must be. */
const PUBLIC_LABELS: ReadonlyMap<string, (data: Buffer) => boolean> = new Map([
  ["CERTIFICATE", signed],
  ["X509 CERTIFICATE", signed],
  ["X509 CRL", signed],
  ["CERTIFICATE REQUEST", signed],
  ["NEW CERTIFICATE REQUEST", signed],
  ["TRUSTED CERTIFICATE", trustedCertificate],
  ["PUBLIC KEY", (der) => shaped(der, SEQUENCE, BIT_STRING)],
  ["RSA PUBLIC KEY", (der) => shaped(der, INTEGER, INTEGER)],
  ["DH PARAMETERS", (der) => integers(der, 2, 3)],
  ["X9.42 DH PARAMETERS", (der) => integers(der, 3, 4, true)],
  ["DSA PARAMETERS", (der) => integers(der, 3, 3)],
  ["EC PARAMETERS", (der) => single(der, OID) || single(der, SEQUENCE)],
  ["PKCS7", signedData],
  ["CMS", signedData],
  ["PGP PUBLIC KEY BLOCK", (data) => packetTag(data) === 6],
  ["PGP SIGNATURE", (data) => packetTag(data) === 2],
  ["SSH2 PUBLIC KEY", sshBlob],
]);

/** An armoured block: `-----BEGIN <label>-----` (RFC 7468, OpenPGP) or `---- BEGIN <label> ----` (RFC 4716). */
const BLOCK = /(-----|---- )BEGIN ([A-Z0-9. ]+?)( ----|-----)\r?\n([\s\S]*?)\r?\n\1END \2\3/g;
const BASE64_BODY = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/**
 * The data of a block's body: its base64 without the headers (`Proc-Type: ...`, `Comment: "..."`
 * with its continuation lines, a PGP block's headers up to the blank line) and a PGP checksum line
 * (`=abcd`); undefined when what is left is not base64.
 */
function bodyData(body: string): Buffer | undefined {
  const lines = body.split("\n").map((line) => line.replace(/\r$/, ""));
  const data: string[] = [];
  let continued = false;
  for (const line of lines) {
    if (continued || /^[A-Za-z][\w-]*: /.test(line)) {
      continued = line.endsWith("\\");
      continue;
    }
    if (/^=[A-Za-z0-9+/]{4}$/.test(line)) continue;
    data.push(line);
  }
  const base64 = data.join("");
  if (!BASE64_BODY.test(base64)) return undefined;
  const bytes = Buffer.from(base64.replace(/\s/g, ""), "base64");
  return bytes.length > 0 ? bytes : undefined;
}

/** Whether a block with this label and body holds the public material its label names. */
function publicBlock(label: string, body: string): boolean {
  const check = PUBLIC_LABELS.get(label);
  if (!check) return false;
  const data = bodyData(body);
  return data !== undefined && check(data);
}

/** The [start, end) ranges of a text's public armoured blocks. */
export function publicArmour(text: string): [number, number][] {
  if (!text.includes("BEGIN ")) return [];
  const ranges: [number, number][] = [];
  for (const m of text.matchAll(BLOCK)) {
    if (publicBlock(m[2] as string, m[4] as string)) ranges.push([m.index, m.index + m[0].length]);
  }
  return ranges;
}

/**
 * Whether a PEM text holds only public material: one armoured block at least, and every block (of
 * any armour, any label) public. Text around the blocks (openssl's `subject=` lines, comments) is
 * not judged here: what a server reads of it goes through the sanitizer like any result.
 */
function publicPem(text: string): boolean {
  const blocks = [...text.matchAll(BLOCK)];
  if (blocks.length === 0) return false;
  if (!blocks.every((m) => publicBlock(m[2] as string, m[4] as string))) return false;
  // A BEGIN line that no block above accounts for (a key without its END line) is not public.
  const begins = text.match(/-----BEGIN |---- BEGIN /g)?.length ?? 0;
  return begins === blocks.length;
}

/** PEM files above this size are not read to tell; they count as holding secrets. */
const MAX_PEM_BYTES = 1 << 20;

/**
 * Whether the file at `path` is a PEM file of public material only ({@link publicPem}). It is
 * opened without blocking (a FIFO in its place cannot hold the proxy up) and read only when it is
 * a regular file of at most 1 MiB; anything else (no such file, a directory, a device, too large,
 * unreadable) is not known to be public.
 */
export function publicPemFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    // Unreadable: not a public key file.
    return false;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size === 0 || stat.size > MAX_PEM_BYTES) return false;
    const bytes = Buffer.alloc(stat.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return publicPem(bytes.subarray(0, read).toString("utf8"));
  } catch {
    // Unreadable: not a public key file.
    return false;
  } finally {
    closeSync(fd);
  }
}
