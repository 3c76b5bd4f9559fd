/**
 * Redact secrets, not shapes: the values that look like tokens but are public by what they are.
 * A digest names itself or is named (`sha512-<base64>` in a lockfile, `"integrity": ...`,
 * `checksum = ...`, `"id": ...`); a public key or a certificate says what it is (`ssh-ed25519
 * AAAA...`, `-----BEGIN CERTIFICATE-----`); a base64 blob of plain text is as public as that
 * text; a setting whose value is an obvious placeholder (`replace-me`, `your-api-key-here`,
 * `sk_test_xxx`) holds no secret, nor one whose value is a version range (`^1.2.3`) or a key made
 * to be published (`pk_live_...`); a character set written out (`ABC...xyz0123456789+/`) is a run
 * of consecutive characters, not a token.
 *
 * What stays redacted, because its shape is all there is to go on: a bare base64 string of a
 * digest's length with neither a name nor a prefix (a 32-byte key in base64 looks exactly like a
 * sha256 digest in base64), and base64 of binary data cut into lines of 32 to 100 characters
 * (the lines of a private key without its armour look the same), unless its first bytes are a
 * known file format's (a PNG, a gzip archive), which no key starts with.
 */
import { publicArmour } from "./pem.js";
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
  const named = PREFIX_BEFORE.exec(before)?.[1];
  if (!own && !named) return undefined;
  const fits = (algorithm: string, payload: string) => {
    const bytes = decode(payload)?.length;
    return bytes !== undefined && (DIGEST_BYTES.get(algorithm.toLowerCase()) ?? []).includes(bytes);
  };
  // A digest named before it may itself begin as a prefix would (`sha256=H1-uhMm...` in
  // base64url, whose `H1-` reads as Go's `h1`): either reading with its algorithm's exact size is one.
  return (
    (own !== null && fits(own[1] as string, candidate.slice(own[0].length))) ||
    (named !== undefined && fits(named, candidate))
  );
}

/** A name as words in capitals: `contentHash` -> `CONTENT_HASH`, `request-id` -> `REQUEST_ID`. */
const wordsName = (name: string) => envName(name.replace(CAMEL, "$1_$2"));
const CAMEL = /([a-z0-9])([A-Z])/g;

/**
 * Multihash digests by their code (https://github.com/multiformats/multicodec): the size each
 * algorithm's digest has.
 */
const MULTIHASH_BYTES: ReadonlyMap<number, number> = new Map([
  [0xd5, 16], // md5
  [0x11, 20], // sha1
  [0x12, 32], // sha2-256
  [0x13, 64], // sha2-512
  [0x20, 48], // sha2-384
  [0x1013, 28], // sha2-224
  [0x1015, 32], // sha2-512-256
  [0x1012, 32], // sha2-256-trunc254-padded (Filecoin)
  [0x17, 28], // sha3-224
  [0x16, 32], // sha3-256
  [0x15, 48], // sha3-384
  [0x14, 64], // sha3-512
  [0x1e, 32], // blake3
  [0xb220, 32], // blake2b-256
  [0xb240, 64], // blake2b-512
  [0xb260, 32], // blake2s-256
]);
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** The bytes of base58btc text (Bitcoin's alphabet, as multibase and IPFS use it), or undefined. */
function base58(text: string): Buffer | undefined {
  let value = 0n;
  for (const c of text) {
    const digit = BASE58.indexOf(c);
    if (digit === -1) return undefined;
    value = value * 58n + BigInt(digit);
  }
  let hex = value === 0n ? "" : value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const zeros = /^1*/.exec(text)?.[0].length ?? 0;
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, "hex")]);
}

/** An unsigned varint at `at`: its value and the index after it. */
function varint(bytes: Buffer, at: number): [number, number] | undefined {
  let value = 0;
  for (let k = 0; k < 4 && at + k < bytes.length; k++) {
    const byte = bytes[at + k] as number;
    value += (byte & 0x7f) * 2 ** (7 * k);
    if ((byte & 0x80) === 0) return [value, at + k + 1];
  }
  return undefined;
}

/** Whether `bytes` from `at` to its end is one multihash: a known algorithm's code, its size, the digest. */
function multihashAt(bytes: Buffer, at: number): boolean {
  const code = varint(bytes, at);
  const size = code && varint(bytes, code[1]);
  if (!code || !size) return false;
  return MULTIHASH_BYTES.get(code[0]) === size[0] && size[1] + size[0] === bytes.length;
}

/**
 * A digest in multibase (https://github.com/multiformats/multibase) that says its algorithm: a
 * multihash or a CIDv1 of one (version 1, a content codec, the multihash) in base58btc (`z...`),
 * base64 (`m`, `M`) or base64url (`u`, `U`); or a CIDv0 (`Qm...`, a sha2-256 multihash in
 * base58btc). Lower-case base32 and hex multibase are no token's shape to begin with. A random
 * token passes for one about once in 10^5 (`z...`) to 10^4 (`Qm...` of 46 characters).
 */
function multihash(candidate: string): boolean {
  let bytes: Buffer | undefined;
  const body = candidate.slice(1);
  if (candidate.length === 46 && candidate.startsWith("Qm")) bytes = base58(candidate);
  else if (candidate[0] === "z") bytes = base58(body);
  else if (/^[mM]/.test(candidate) && /^[A-Za-z0-9+/]+={0,2}$/.test(body))
    bytes = Buffer.from(body, "base64");
  else if (/^[uU]/.test(candidate) && /^[A-Za-z0-9_-]+={0,2}$/.test(body))
    bytes = Buffer.from(body, "base64url");
  if (!bytes || bytes.length < 18) return false;
  if (multihashAt(bytes, 0)) return true;
  const codec = bytes[0] === 0x01 ? varint(bytes, 1) : undefined;
  return codec !== undefined && multihashAt(bytes, codec[1]);
}

/** A name that says its value is a digest or an identifier (and not a credential). */
function publicName(name: string): boolean {
  const env = wordsName(name);
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

/**
 * The first bytes of file formats (magic numbers) that a key or a token never starts with: an
 * image, a font, an archive, a document, audio or video, a WebAssembly module. A private key
 * without its armour is DER (0x30) or OpenSSH's `openssh-key-v1`, neither of these.
 */
const FILE_SIGNATURES: readonly Buffer[] = [
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x47, 0x49, 0x46, 0x38], // GIF8
  [0x52, 0x49, 0x46, 0x46], // RIFF: WebP, WAV, AVI
  [0x25, 0x50, 0x44, 0x46, 0x2d], // %PDF-
  [0x50, 0x4b, 0x03, 0x04], // ZIP (jar, docx, xlsx, epub)
  [0x1f, 0x8b, 0x08], // gzip
  [0x42, 0x5a, 0x68], // bzip2
  [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], // xz
  [0x28, 0xb5, 0x2f, 0xfd], // zstd
  [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], // 7z
  [0x00, 0x61, 0x73, 0x6d], // WebAssembly
  [0x00, 0x00, 0x01, 0x00], // ICO
  [0x49, 0x44, 0x33], // MP3 with ID3
  [0x4f, 0x67, 0x67, 0x53], // Ogg
  [0x66, 0x4c, 0x61, 0x43], // FLAC
  [0x77, 0x4f, 0x46, 0x46], // WOFF
  [0x77, 0x4f, 0x46, 0x32], // WOFF2
  [0x00, 0x01, 0x00, 0x00, 0x00], // TrueType
  [0x4f, 0x54, 0x54, 0x4f], // OpenType
].map((bytes) => Buffer.from(bytes));

/** Whether base64 `text` starts a file of a known format (its first 16 characters decoded). */
function encodedFile(text: string): boolean {
  const head = text.slice(0, 16);
  if (head.length < 16 || !/^[A-Za-z0-9+/]+$/.test(head)) return false;
  const bytes = Buffer.from(head, "base64");
  return FILE_SIGNATURES.some((signature) => bytes.subarray(0, signature.length).equals(signature));
}

/** A line of base64 (a MIME or PEM body's line, or a whole blob). */
const BASE64_LINE = /^[A-Za-z0-9+/]{16,}={0,2}\r?$/;
/** A line that may continue such a block (its last line may be short). */
const BASE64_MORE = /^[A-Za-z0-9+/]+={0,2}\r?$/;

/**
 * Blocks of base64 lines that encode a file of a known format (an image pasted into a document, a
 * `.b64` of an archive): each of their lines is token-shaped, and none is a secret. An encoder
 * wraps at one width, so the block goes on while lines have the first one's length, and ends with
 * the first shorter one: lines of another width after it (a key's, say) are not part of it.
 */
function encodedFileBlocks(text: string): [number, number][] {
  const blocks: [number, number][] = [];
  let at = 0;
  let block: [number, number] | undefined;
  let width = 0;
  for (const line of text.split("\n")) {
    const end = at + line.length;
    if (block && line.length <= width && BASE64_MORE.test(line)) {
      block[1] = end;
      if (line.length < width) block = undefined;
    } else {
      block = BASE64_LINE.test(line) && encodedFile(line) ? [at, end] : undefined;
      width = line.length;
      if (block) blocks.push(block);
    }
    at = end + 1;
  }
  return blocks;
}

/**
 * Runs of base64 lines wrapped at one width (a PEM or MIME body without its armour, a `.b64` file):
 * two or more lines of the first one's length, the last one possibly shorter. Whatever they encode,
 * each line is a slice of one encoded blob, so a `/` in it separates no path's segments.
 */
export function wrappedBase64(text: string): [number, number][] {
  const runs: [number, number][] = [];
  let at = 0;
  let run: { start: number; end: number; width: number; lines: number } | undefined;
  const close = () => {
    if (run && run.lines >= 2) runs.push([run.start, run.end]);
    run = undefined;
  };
  for (const line of text.split("\n")) {
    const end = at + line.length;
    if (run && line.length <= run.width && BASE64_MORE.test(line)) {
      run.end = end;
      run.lines++;
      if (line.length < run.width) close();
    } else {
      close();
      if (BASE64_LINE.test(line) && line.length >= 40) run = { start: at, end, width: line.length, lines: 1 };
    }
    at = end + 1;
  }
  close();
  return runs;
}

/** A data URI's base64, right before a candidate: `data:image/png;base64,`. */
const DATA_URI_BEFORE = /data:[\w.+-]+\/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,$/i;

/**
 * The [start, end) ranges of a text's public blocks: armoured public keys, certificates, chains,
 * parameters and signatures whose data is what their label says (`pem.ts`), and base64 lines that
 * encode a file of a known format.
 */
export function publicBlocks(text: string): [number, number][] {
  const blocks = /^[A-Za-z0-9+/]{16}/m.test(text) ? encodedFileBlocks(text) : [];
  return text.includes("BEGIN ") ? [...blocks, ...publicArmour(text)] : blocks;
}

/**
 * Whether a token-shaped `candidate` is public: a digest that names its algorithm, an SSH public
 * key, or the value of a name that says it is a digest or an identifier (`field`: the JSON field
 * holding it, or the name written right before it in `before`, the text that precedes it).
 */
export function publicToken(candidate: string, before: string, field?: string): boolean {
  if (sshPublicKey(candidate, before)) return true;
  // A file in a data URI (an image in Markdown or HTML): its format's first bytes say what it is.
  if (DATA_URI_BEFORE.test(before) && encodedFile(candidate)) return true;
  if (multihash(candidate)) return true;
  // A digest that names its algorithm is judged by that algorithm's size alone.
  const prefixed = prefixedDigest(candidate, before);
  if (prefixed !== undefined) return prefixed;
  const name = field ?? NAME_BEFORE.exec(before)?.[1];
  if (name === undefined || !publicName(name)) return false;
  // An identifier may have any shape; a value named a digest must have a digest's size.
  return /(?:^|_)(?:ID|UUID|GUID|OID|COMMIT|REV|REVISION|ETAG)$/.test(wordsName(name))
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
  /^(?:replace|change|changeme|changeit|your|here|example|sample|dummy|fake|placeholder|todo|tbd|fixme|insert|enter|paste|redacted|none|empty|x{3,})$/;
/** Words a placeholder may also hold: what it stands for, and where or when it is filled in. */
const PLACEHOLDER_WORD =
  /^(?:me|my|the|a|an|it|this|to|of|and|or|with|in|for|goes|put|set|real|actual|own|new|key|keys|api|secret|token|password|passwd|pass|value|string|access|app|auth|client|id|private|public|publishable|db|database|user|name|smtp|aws|stripe|github|jwt|session|signing|live|test|prod|production|dev|development|local|staging|long|random|strong|secure|unique)$/;
/** A whole value that stands for one: `<token>`, `{{ token }}`, `${TOKEN}`, `%TOKEN%`, `***`, `...`. */
const PLACEHOLDER_FORM =
  /^(?:<[^<>]*>|\{\{[^{}]*\}\}|\$\{[^{}]*\}|%[A-Za-z_]+%|[*x.\u2022\u2026]{3,}|\u2026)$/i;
/**
 * One character over and over (`XXXXXXXX`, `00000000`, `********`), after a prefix of one or two
 * short words if any (`whsec_xxxxxxxx`, `xoxb-XXXXXXXX`).
 */
const REPEATED = /^(?:[A-Za-z0-9]{1,12}[-_.]){0,2}(.)\1{2,}$/s;
/**
 * The prefixes of the key formats the sanitizer knows (`sk_live_`, `ghp_`, `xoxb-`, `AKIA`, ...):
 * documentation writes a key as its prefix and a placeholder (`sk_test_xxx`, `ghp_XXXX...`).
 */
const KEY_PREFIX =
  /^(?:(?:sk|rk|pk)_(?:live|test)_|gh[pousr]_|github_pat_|xox[abposr]-|glpat-|npm_|hf_|AKIA|ASIA|AIza)/;

/**
 * A value that only says a secret goes here: `replace-me`, `changeme`, `your-api-key-here`,
 * `<token>`, `xxxx`, `example`, `dummy`, or a key format's prefix followed by one (`sk_test_xxx`,
 * `ghp_XXXXXXXX`, `sk_live_...`). It is made of placeholder words (with at least one that marks it
 * as such) or one character repeated, so it holds nothing a reader could not guess.
 */
export function placeholder(value: string): boolean {
  const prefix = KEY_PREFIX.exec(value)?.[0];
  const rest = prefix ? value.slice(prefix.length).replace(/^[-_.]/, "") : value;
  if (prefix && rest === "") return true;
  if (PLACEHOLDER_FORM.test(rest) || documentedExample(rest) || REPEATED.test(rest)) return true;
  const words = rest
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter(Boolean);
  return (
    words.length > 0 &&
    words.some((w) => PLACEHOLDER_MARK.test(w)) &&
    words.every((w) => PLACEHOLDER_MARK.test(w) || PLACEHOLDER_WORD.test(w))
  );
}

/**
 * Keys made to be published, by their prefix: Stripe's and Clerk's publishable keys (`pk_live_`,
 * `pk_test_`), Mapbox's public tokens (`pk.eyJ...`), Supabase's publishable keys
 * (`sb_publishable_`), PostHog's project keys (`phc_`). Each service gives them out to be put in
 * web pages and apps; their secret counterparts (`sk_live_`, `sk.`, `sb_secret_`, `phx_`) are
 * others.
 */
const PUBLISHABLE = /^(?:pk_(?:live|test)_|pk\.eyJ|sb_publishable_|phc_)[A-Za-z0-9_.-]+$/;

/** A key with a publishable prefix ({@link PUBLISHABLE}). */
export function publishable(value: string): boolean {
  return PUBLISHABLE.test(value);
}

/** A version in a range: dotted (`1.2.3`, `2.x`, `1.2.3-beta.1+build.5`) or any after an operator. */
const VERSION_TAIL = String.raw`(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?`;
const DOTTED = String.raw`v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){1,3}${VERSION_TAIL}`;
const ANY_VERSION = String.raw`v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,3}${VERSION_TAIL}`;
const COMPARATOR = String.raw`(?:(?:\^|~>?|[<>]=?|={1,3}|!=|~=)[ \t]*${ANY_VERSION}|${DOTTED}|[xX*])`;
const SEPARATOR = String.raw`(?:[ \t]*(?:\|\||,)[ \t]*|[ \t]+-[ \t]+|[ \t]+)`;
/**
 * A version or a range of versions as package managers write them: npm and Cargo
 * (`^1.2.3 || >=2.0.0-beta.1`, `~0.7.1`, `1.x`), PEP 440 (`>=3.8,<4`, `~=2.1`), Ruby (`~> 7.0`),
 * an npm alias's (`npm:pkg@^1.2.3`) or a workspace's (`workspace:^`).
 */
const VERSION_RANGE = new RegExp(
  String.raw`^(?:npm:(?:@[\w.-]+\/)?[\w.-]+@|workspace:)?(?:${COMPARATOR}(?:${SEPARATOR}${COMPARATOR})*|[\^~*])$`,
);

/** A version or a version range ({@link VERSION_RANGE}): a dependency's, whatever it is named. */
export function versionRange(value: string): boolean {
  return value.length <= 200 && VERSION_RANGE.test(value);
}

/**
 * A character set written out: runs of consecutive characters
 * (`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/`, base58's and Crockford's
 * alphabets, a hex table: at least 16 characters, three in four of which come one or two code
 * points after the one before; a random token's characters do so about once in 32 each), or a
 * shuffled one (nanoid's `useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict`: 40
 * characters or more, none of them twice; a random token of 40 over [A-Za-z0-9] is so about once
 * in 2 * 10^7, one of 48 once in 3 * 10^11).
 */
export function alphabet(value: string): boolean {
  if (value.length < 16) return false;
  let steps = 0;
  for (let k = 1; k < value.length; k++) {
    const step = value.charCodeAt(k) - value.charCodeAt(k - 1);
    if (step === 1 || step === 2) steps++;
  }
  if (steps >= 0.75 * (value.length - 1)) return true;
  return value.length >= 40 && new Set(value).size === value.length;
}
