/**
 * The sanitizer on real files (test/fixtures/real-files, see its SOURCES.md): what holds no secret
 * comes back byte for byte, as a text and as the content of a JSON text (in the spellings servers
 * write: pretty-printed, or with non-ASCII and "/" escaped); a secret planted in it is the only
 * change, its span replaced by the marker.
 */
import { createHash, generateKeyPairSync, randomInt } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { sanitizeResult } from "../src/index.ts";

const DIR = join(import.meta.dirname, "fixtures", "real-files");
const REPO = join(import.meta.dirname, "..", "..", "..");
const TOKEN = "[REDACTED token]";
const PRIVATE = "[REDACTED private-key]";

function fixture(name: string): string {
  const bytes = readFileSync(join(DIR, name));
  return (name.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
function canary(length: number): string {
  for (;;) {
    const value = Array.from({ length }, () => ALNUM[randomInt(ALNUM.length)]).join("");
    if (/[A-Z]/.test(value) && /[a-z]/.test(value) && /[0-9]/.test(value)) return value;
  }
}

const textResult = (text: string) => ({ content: [{ type: "text", text }] });
const sanitized = (text: string) =>
  (sanitizeResult(textResult(text), { secretValues: [] }).result as { content: { text: string }[] })
    .content[0]?.text as string;

/** JSON of a read_file answer as servers write it: Node's, pretty-printed, or Python's (ASCII, "\/" as PHP). */
function spellings(path: string, content: string): string[] {
  const compact = JSON.stringify({ path, content });
  const ascii = (text: string) =>
    text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return [
    compact,
    JSON.stringify({ path, content, size: Buffer.byteLength(content) }, null, 2),
    ascii(JSON.stringify({ path, content }, null, 1)).replaceAll("/", "\\/"),
  ];
}

/** The text, and the text inside JSON in every spelling, come back as the very same string. */
function untouched(name: string, text: string): void {
  for (const input of [text, ...spellings(name, text)]) {
    const result = textResult(input);
    const out = sanitizeResult(result, { secretValues: [] });
    expect(out.redactions, `${name}: ${out.redactions}`).toEqual([]);
    expect(out.result).toBe(result);
  }
}

/** With `secret` in it, the text (and JSON of it) comes back with that span, and only it, replaced. */
function onlyRedacted(name: string, text: string, secret: string, marker = TOKEN): void {
  expect(text).toContain(secret);
  expect(sanitized(text), name).toBe(text.split(secret).join(marker));
  for (const json of spellings(name, text)) {
    const out = sanitized(json);
    expect(out).not.toContain(secret);
    const expected = JSON.parse(json);
    expected.content = text.split(secret).join(marker);
    expect(JSON.parse(out)).toEqual(expected);
    // Byte for byte: the spelling of the JSON around the marker is the server's.
    const literal = JSON.stringify(secret).slice(1, -1);
    if (json.includes(literal)) expect(out).toBe(json.split(literal).join(marker));
  }
}

describe("lockfiles come back byte for byte, semver ranges and digests included", () => {
  it.each([
    ["npm package-lock.json (4,027 lines)", "package-lock.json.gz"],
    ["yarn.lock (v1)", "yarn.lock.gz"],
    ["Cargo.lock", "Cargo.lock"],
    ["poetry.lock", "poetry.lock"],
    ["a wheel's RECORD (sha256 in base64url)", "RECORD"],
  ])("%s", (_, name) => {
    untouched(name, fixture(name));
  });

  it("this repository's pnpm-lock.yaml", () => {
    untouched("pnpm-lock.yaml", readFileSync(join(REPO, "pnpm-lock.yaml"), "utf8"));
  });

  it("a package-lock.json is the text it was, not minified, with a token in a resolved URL redacted", () => {
    const lock = fixture("package-lock.json.gz");
    // The reviewer's case: ranges of dependencies whose names read as secrets' names.
    for (const range of ['"path-key": "^3.1.0"', '"cookie": "^0.7.1"', '"cookie-signature": "^1.2.1"'])
      expect(lock).toContain(range);
    expect(sanitized(lock)).toBe(lock);
    const token = `ghp_${canary(36)}`;
    const planted = lock.replace(
      '"version": "0.1.0",\n',
      `"version": "0.1.0",\n      "resolved": "git+https://${token}@github.com/example-org/private-pkg.git#${createHash("sha1").update(token).digest("hex")}",\n`,
    );
    onlyRedacted("package-lock.json", planted, token);
  });

  it("semver ranges of dependencies named like secrets, in every manifest", () => {
    const ranges = [
      "^1.2.3 || >=2.0.0-beta.1",
      "~0.7.1",
      ">=2.0.0-beta.1",
      "1.x",
      "^4.5.4",
      "npm:jsonwebtoken@^9.0.2",
    ];
    for (const range of ranges) {
      untouched(
        "package.json",
        JSON.stringify({ dependencies: { cookie: range, keyv: range, "js-tokens": range } }, null, 2),
      );
      untouched("pyproject.toml", `[tool.poetry.dependencies]\nkeyring = "${range}"\n`);
      untouched("Cargo.toml", `[dependencies]\nsecrecy = "${range}"\n`);
    }
    untouched("requirements", 'keyring = ">=24.3,<25"\npassword-strength = "~=0.0.3"\n');
  });

  it("digests in every common algorithm and encoding", () => {
    const hash = (algorithm: string, text: string) => createHash(algorithm).update(text).digest();
    const base58 = (bytes: Buffer) => {
      let n = BigInt(`0x${bytes.toString("hex")}`);
      let out = "";
      while (n > 0n) {
        out = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"[Number(n % 58n)] + out;
        n /= 58n;
      }
      return out;
    };
    for (let i = 0; i < 10; i++) {
      const text = canary(20);
      const lines = [
        ...["sha1", "sha256", "sha384", "sha512"].flatMap((a) => [
          `${a}  ${hash(a, text).toString("hex")}  file.tar.gz`,
          `"integrity": "${a}-${hash(a, text).toString("base64")}"`,
          `${a}=${hash(a, text).toString("base64url")}`,
          `${a}:${hash(a, text).toString("base64")}`,
        ]),
        `sha512-${hash("sha512", text).toString("base64")}`,
        `image@sha256:${hash("sha256", text).toString("hex")}`,
        `github.com/x/y v1.2.3 h1:${hash("sha256", text).toString("base64")}`,
        `github.com/x/y v1.2.3/go.mod h1:${hash("sha256", `${text}mod`).toString("base64")}`,
        `"narHash": "sha256-${hash("sha256", text).toString("base64")}"`,
        `outputHash = "sha256-${hash("sha256", text).toString("base64")}";`,
        `commit ${hash("sha1", text).toString("hex")}`,
        `"contentHash": "${hash("sha512", text).toString("base64")}"`,
        `cid: ${base58(Buffer.concat([Buffer.from([0x12, 0x20]), hash("sha256", text)]))}`,
        `multihash: z${base58(Buffer.concat([Buffer.from([0x12, 0x20]), hash("sha256", text)]))}`,
        `cidv1: z${base58(Buffer.concat([Buffer.from([0x01, 0x55, 0x13, 0x40]), hash("sha512", text)]))}`,
        `sri: m${Buffer.concat([Buffer.from([0x12, 0x20]), hash("sha256", text)])
          .toString("base64")
          .replace(/=+$/, "")}`,
        `blake3: u${Buffer.concat([Buffer.from([0x1e, 0x20]), hash("sha256", text)]).toString("base64url")}`,
      ];
      untouched("digests", lines.join("\n"));
    }
  });
});

describe("a minified bundle comes back byte for byte", () => {
  it.each([
    ["lru-cache's (s.key=t,...)", "lru-cache.min.js.gz"],
    ["react's (h.key===c.key)", "react.production.min.js.gz"],
    ["node-forge's (base64 and base58 alphabets, t.key=null,...)", "forge.min.js.gz"],
  ])("%s", (_, name) => {
    untouched(name, fixture(name));
  });

  it("with a secret inside, the secret is the only change", () => {
    const bundle = fixture("lru-cache.min.js.gz");
    const key = `sk_live_${canary(24)}`;
    const at = bundle.indexOf(";") + 1;
    onlyRedacted("bundle.min.js", `${bundle.slice(0, at)}var k="${key}";${bundle.slice(at)}`, key);
  });
});

describe("PEM: public keys, certificates and chains come back byte for byte; private keys do not", () => {
  it.each(readdirSync(join(DIR, "pem")))("%s", (name) => {
    untouched(name, fixture(join("pem", name)));
  });

  it("every root certificate Node.js ships, and Debian's /etc/ssl/certs", () => {
    untouched("roots.pem", rootCertificates.join("\n"));
    const certs = "/etc/ssl/certs";
    if (!existsSync(certs)) return;
    for (const name of readdirSync(certs)
      .filter((n) => n.endsWith(".pem"))
      .slice(0, 400))
      untouched(name, readFileSync(join(certs, name), "utf8"));
  });

  it("a private key in a .pem is removed, and nothing else of the file", () => {
    const chain = fixture("pem/chain.pem");
    const keys = [
      generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }),
      generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }),
      generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "sec1", format: "pem" }),
      generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }),
    ].map((k) => String(k).trimEnd());
    for (const key of keys) {
      onlyRedacted("server.pem", `${chain}${key}\n`, key, PRIVATE);
      onlyRedacted("server.pem", `${key}\n${chain}`, key, PRIVATE);
    }
  });
});

describe("example env files come back byte for byte, real keys in them do not", () => {
  it(".env.example: publishable keys and documented placeholders", () => {
    untouched(".env.example", fixture(".env.example"));
  });

  it("an sk_live_ key, a GitHub token and a password in the same file are the only changes", () => {
    const example = fixture(".env.example");
    for (const [line, secret] of [
      ["STRIPE_SECRET_KEY=sk_test_xxx", `sk_live_${canary(24)}`],
      ["GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", `ghp_${canary(36)}`],
      ["ADMIN_PASSWORD=changeme", canary(16)],
    ] as const) {
      const name = line.slice(0, line.indexOf("=") + 1);
      onlyRedacted(".env", example.replace(line, `${name}${secret}`), secret);
    }
  });
});

describe("character-set constants in code come back byte for byte", () => {
  it("base64, base64url, base32, base58, Crockford, hex tables and shuffled alphabets", () => {
    for (const alphabet of [
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=",
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
      "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
      "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
      "0123456789ABCDEFGHJKMNPQRSTVWXYZ",
      "0123456789abcdef0123456789ABCDEF",
      "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict",
    ]) {
      untouched(
        "alphabet.ts",
        `const ALPHABET = "${alphabet}";\nexport const SECRET_CHARS = '${alphabet}';\n`,
      );
      untouched("alphabet.py", `B64_ALPHABET = b"${alphabet}"\n`);
    }
  });
});
