/**
 * Redact secrets, not shapes: the values that look like tokens but are public by what they are.
 * A digest names itself or is named (`sha512-<base64>` in a lockfile, `"integrity": ...`,
 * `checksum = ...`, `"id": ...`); a public key or a certificate says what it is (`ssh-ed25519
 * AAAA...`, `-----BEGIN CERTIFICATE-----`); a base64 blob of plain text is as public as that
 * text; a setting whose value is an obvious placeholder (`replace-me`, `your-api-key-here`) holds
 * no secret.
 *
 * What stays redacted, because its shape is all there is to go on: a bare base64 string of a
 * digest's length with neither a name nor a prefix (a 32-byte key in base64 looks exactly like a
 * sha256 digest in base64), and base64 of binary data cut into lines of 32 to 100 characters
 * (the lines of a private key without its armour look the same).
 */
import { envName, secretLooking } from "./secrets.js";

/** Digest sizes in bytes, by the name an algorithm goes by in a prefix (`sha512-`, `sha256:`, `h1:`). */
const DIGEST_BYTES: ReadonlyMap<string, readonly number[]> = new Map([
  ["md5", [16]],
  ["sha1", [20]],
  ["sha224", [28]],
  ["sha256", [32]],
  ["sha384", [48]],
  ["sha512", [64]],
  ["sha3-256", [32]],
  ["sha3-384", [48]],
  ["sha3-512", [64]],
  ["blake2b", [32, 64]],
  ["blake2s", [32]],
  ["blake3", [32]],
  // go.sum: `h1:` is a sha256 in base64.
  ["h1", [32]],
]);
const ALGORITHM =
  "(md5|sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512|blake2b|blake2s|blake3|h1)";
/** A candidate that starts with its algorithm: `sha512-<base64>` (SRI, npm, yarn, pnpm, Nix). */
const PREFIXED = new RegExp(`^${ALGORITHM}[-_]`, "i");
/** An algorithm just before the candidate: `sha256:<digest>`, `--hash=sha256:...`, `h1:...`. */
const PREFIX_BEFORE = new RegExp(`(?:^|[^A-Za-z0-9])${ALGORITHM}[:=]$`, "i");
const ALL_DIGEST_SIZES = new Set([16, 20, 28, 32, 48, 64]);

/** Names whose value is a digest or an identifier: what such a value identifies is no secret. */
const PUBLIC_NAME =
  /(?:^|_)(?:INTEGRITY|DIGEST|CHECKSUMS?|SHASUM|HASH|SHA(?:1|224|256|384|512)?|MD5|ETAG|FINGERPRINT|COMMIT|OID|REV|REVISION|ID|UUID|GUID)$/;
/** Identifiers that are credentials all the same. */
const CREDENTIAL_NAME = /SESSION|CSRF|XSRF|NONCE|OTP/;
/** The name of a `name: value`, `name = value` or `"name": "value"` right before a value. */
const NAME_BEFORE = /([A-Za-z_][\w.-]*)["']?[ \t]*[:=][ \t]*["']?$/;

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$|^[A-Za-z0-9_-]+={0,2}$/;
/** Text: no control characters but tab and line breaks, and no replacement character (bad UTF-8). */
function plainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f || code === 0xfffd)
      return false;
  }
  return true;
}

/** The bytes a hex or base64 string encodes, or undefined when it is neither. */
function decode(payload: string): Buffer | undefined {
  if (HEX.test(payload) && payload.length % 2 === 0) return Buffer.from(payload, "hex");
  if (!BASE64.test(payload) || payload.length % 4 === 1) return undefined;
  return Buffer.from(payload, /[-_]/.test(payload) ? "base64url" : "base64");
}

/**
 * For a candidate that says which algorithm made it (`sha512-...`, `sha256:...`), whether it has
 * exactly that algorithm's size; undefined for a candidate that names no algorithm.
 */
function prefixedDigest(candidate: string, before: string): boolean | undefined {
  const own = PREFIXED.exec(candidate);
  const algorithm = (own?.[1] ?? PREFIX_BEFORE.exec(before)?.[1])?.toLowerCase();
  if (!algorithm) return undefined;
  const payload = own ? candidate.slice(own[0].length) : candidate;
  const bytes = decode(payload)?.length;
  return bytes !== undefined && (DIGEST_BYTES.get(algorithm) ?? []).includes(bytes);
}

/** A name that says its value is a digest or an identifier (and not a credential). */
export function publicName(name: string): boolean {
  const env = envName(name);
  return PUBLIC_NAME.test(env) && !CREDENTIAL_NAME.test(env) && !secretLooking(name);
}

/** An OpenSSH public key's type, right before its base64 (`ssh-ed25519 AAAAC3Nza...`). */
const SSH_KEY_TYPE =
  /(?:^|\s)(ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-[a-z0-9-]+@openssh\.com)[ \t]+$/;

/** An SSH public key: its blob starts with the key type it follows, as the wire format has it. */
function sshPublicKey(candidate: string, before: string): boolean {
  const type = SSH_KEY_TYPE.exec(before)?.[1];
  if (!type) return false;
  const blob = decode(candidate);
  return (
    blob !== undefined &&
    blob.length > 4 + type.length &&
    blob.subarray(4, 4 + type.length).toString() === type
  );
}

/** Armoured blocks of public material: public keys and certificates (never PRIVATE KEY). */
const PUBLIC_BLOCK =
  /-----BEGIN ((?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|X509 CRL)(?: BLOCK)?)-----[\s\S]*?-----END \1-----/g;

/**
 * Whether an armoured block holds what its label says: DER (an ASN.1 SEQUENCE, 0x30) for keys and
 * certificates, OpenPGP packets (first byte with its high bit set) for a PGP block. Header lines
 * (`Version: ...`) and the PGP checksum line (`=abcd`) are not data.
 */
function armouredData(block: string, label: string): boolean {
  const body = block
    .split("\n")
    .slice(1, -1)
    .filter((line) => line.trim() !== "" && !line.includes(":") && !line.startsWith("="))
    .join("");
  const first = decode(body.replace(/\s/g, ""))?.[0];
  if (first === undefined) return false;
  return label.startsWith("PGP") ? (first & 0x80) !== 0 : first === 0x30;
}

/** The [start, end) ranges of the public armoured blocks of a text (none without "-----BEGIN"). */
export function publicBlocks(text: string): [number, number][] {
  if (!text.includes("-----BEGIN")) return [];
  return [...text.matchAll(PUBLIC_BLOCK)]
    .filter((m) => armouredData(m[0], m[1] ?? ""))
    .map((m) => [m.index, m.index + m[0].length]);
}

/**
 * Whether a token-shaped `candidate` is public: a digest that names its algorithm, an SSH public
 * key, or the value of a name that says it is a digest or an identifier (`field`: the JSON field
 * holding it, or the name written right before it in `before`, the text that precedes it).
 */
export function publicToken(candidate: string, before: string, field?: string): boolean {
  if (sshPublicKey(candidate, before)) return true;
  // A digest that names its algorithm is judged by that algorithm's size alone.
  const prefixed = prefixedDigest(candidate, before);
  if (prefixed !== undefined) return prefixed;
  const name = field ?? NAME_BEFORE.exec(before)?.[1];
  if (name === undefined || !publicName(name)) return false;
  // An identifier may have any shape; a value named a digest must have a digest's size.
  return /(?:^|_)(?:ID|UUID|GUID|OID|COMMIT|REV|REVISION|ETAG)$/.test(envName(name))
    ? true
    : ALL_DIGEST_SIZES.has(decode(candidate)?.length ?? -1);
}

/**
 * The text a base64 `candidate` encodes, when it encodes UTF-8 text (a random token almost never
 * does: 24 random bytes are all printable once in about 10^10); undefined otherwise.
 */
export function encodedText(candidate: string): string | undefined {
  if (HEX.test(candidate)) return undefined;
  const bytes = decode(candidate);
  if (!bytes || bytes.length < 8) return undefined;
  const text = bytes.toString("utf8");
  return plainText(text) ? text : undefined;
}

/**
 * What strict base64 `value` encodes: its UTF-8 text, or the bytes of data that is not text (an
 * image, an archive); undefined when `value` is not base64.
 */
export function decodeBase64(value: string): { text: string } | { bytes: Buffer } | undefined {
  if (!strictBase64(value)) return undefined;
  const bytes = Buffer.from(value, "base64");
  // A control byte is the common answer for binary data, found before any string is made of it.
  for (const byte of bytes)
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) || byte === 0x7f) return { bytes };
  const text = bytes.toString("utf8");
  return plainText(text) ? { text } : { bytes };
}

/**
 * Standard base64 with its padding: whole groups of four, `=` only at the end. Checked without a
 * repeated group in a pattern, which V8 matches by recursion: a few MB of base64 (an image) ran
 * out of stack there.
 */
function strictBase64(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  const end = value.endsWith("==") ? 2 : value.endsWith("=") ? 1 : 0;
  return !NOT_BASE64.test(end ? value.slice(0, -end) : value);
}
const NOT_BASE64 = /[^A-Za-z0-9+/]/;

/**
 * A key written as documentation's example: it ends in "EXAMPLE" or "EXAMPLEKEY" in capitals, as
 * AWS writes its sample keys (`AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`)
 * and others follow. A random key of base64 or base32 ends so by chance about once in 10^10.
 */
export function documentedExample(value: string): boolean {
  return DOCUMENTED_EXAMPLE.test(value);
}
const DOCUMENTED_EXAMPLE = /EXAMPLE(?:KEY)?$/;

/** Words that make a value an obvious placeholder. */
const PLACEHOLDER_MARK =
  /^(?:replace|change|changeme|changeit|your|here|example|sample|dummy|fake|placeholder|todo|tbd|fixme|insert|enter|redacted|none|empty|x{3,})$/;
/** Words a placeholder may also hold: what it stands for. */
const PLACEHOLDER_WORD =
  /^(?:me|my|the|a|an|it|this|to|of|and|or|with|goes|put|set|real|actual|own|new|key|keys|api|secret|token|password|passwd|pass|value|string|access|app|auth|client|id|private|public|db|database|user|name|smtp|aws|stripe|github|jwt|session|signing)$/;
/** A whole value that stands for one: `<token>`, `{{ token }}`, `${TOKEN}`, `%TOKEN%`, `***`, `...`. */
const PLACEHOLDER_FORM =
  /^(?:<[^<>]*>|\{\{[^{}]*\}\}|\$\{[^{}]*\}|%[A-Za-z_]+%|[*x.\u2022\u2026]{3,}|\u2026)$/i;

/**
 * A value that only says a secret goes here: `replace-me`, `changeme`, `your-api-key-here`,
 * `<token>`, `xxxx`, `example`, `dummy`. It is made of placeholder words (with at least one that
 * marks it as such), so it holds nothing a reader could not guess.
 */
export function placeholder(value: string): boolean {
  if (PLACEHOLDER_FORM.test(value) || documentedExample(value)) return true;
  const words = value
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter(Boolean);
  return (
    words.length > 0 &&
    words.some((w) => PLACEHOLDER_MARK.test(w)) &&
    words.every((w) => PLACEHOLDER_MARK.test(w) || PLACEHOLDER_WORD.test(w))
  );
}
