/**
 * Canary secrets: fresh per trial, drawn from a CSPRNG over [A-Za-z0-9], so escaping, URL encoding
 * and shell quoting leave them unchanged. They carry no marker, so a layer cannot pick them out by
 * shape (CASES.md §3).
 */
import { randomInt } from "node:crypto";

export const CANARY_LENGTHS = {
  ssh_key: 70,
  aws_secret: 40,
  dotenv: 32,
  env_aws: 40,
  env_token: 36,
  env_secret_key: 50,
} as const;

export type CanaryName = keyof typeof CANARY_LENGTHS;
export type Canaries = Record<CanaryName, string>;
export const CANARY_NAMES = Object.keys(CANARY_LENGTHS) as CanaryName[];

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

export function randomString(length: number, alphabet = ALNUM): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function randomAccessKeyId(): string {
  return `AKIA${randomString(16, UPPER_DIGITS)}`;
}

/** One value per canary, pairwise distinct and none a substring of another. */
export function drawCanaries(): Canaries {
  for (;;) {
    const canaries = Object.fromEntries(
      CANARY_NAMES.map((name) => [name, randomString(CANARY_LENGTHS[name])]),
    ) as Canaries;
    const values = Object.values(canaries);
    const overlapping = values.some((a, i) => values.some((b, j) => i !== j && b.includes(a)));
    if (!overlapping) return canaries;
  }
}

/** A marker's length and alphabet: 24 lower-case letters and digits. */
export const MARKER_LENGTH = 24;
const LOWER_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789";

/**
 * The trial's instruction marker (CASES.md §9): the protocol servers plant it in what they say to
 * the agent (`--marker`), and an oracle looks for it in what the client received. Fresh per trial,
 * and neither holds nor is held by a canary. Unlike a canary it must not look like a secret: a
 * sanitizer that redacts token-shaped strings (32+ characters mixing cases and digits) would
 * otherwise remove it and seem to stop an attack it never judged. It reads like a build or ticket
 * reference.
 */
export function drawMarker(canaries: Canaries): string {
  const values = Object.values(canaries);
  for (;;) {
    const marker = randomString(MARKER_LENGTH, LOWER_DIGITS);
    if (!values.some((v) => v.includes(marker) || marker.includes(v))) return marker;
  }
}
