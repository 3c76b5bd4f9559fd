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
