/**
 * The server's environment at spawn: the variables that describe the world stay, the ones the
 * policy declares stay, and everything else is withheld. The values withheld are remembered, so the
 * result sanitizer can remove them should the server find them some other way.
 */

import { TRUST_VARIABLES } from "@mcpguard/protocol";

/**
 * Variables that describe the world rather than hold secrets (DESIGN.md, L1). PWD is the server's
 * working directory, which it can read with getcwd() anyway.
 */
export const WORLD_VARIABLES = [
  "HOME",
  "PATH",
  "TMPDIR",
  "LANG",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "TZ",
  "PWD",
];

export interface FilteredEnvironment {
  env: Record<string, string>;
  /** Names of the variables the server does not get. */
  withheld: string[];
  /** Values of withheld variables that look secret: by name, or by being token-shaped. */
  secretValues: string[];
}

/** `AUTH` but not `AUTHOR` (`GIT_AUTHOR_NAME` is no secret; `AUTHORIZATION` is). */
const SECRET_NAME =
  /(SECRET|TOKEN|PASSW(OR)?D|PASSPHRASE|(^|_)PASS(_|$)|PRIVATE|CREDENTIAL|API_?KEY|ACCESS_?KEY|AUTH(?!OR(?!I[SZ]ATION))|COOKIE|_KEY$|^KEY$)/i;

/** An absolute path of plain names with at least one word among them (`/Users/Alice/work`). */
const PATH_OF_NAMES = /^(?:\/[\w.@-]+)+\/?$/;
const WORD_SEGMENT = /^[A-Za-z]?[a-z]{2,}[0-9]*$/;

/**
 * A value long and varied enough to be a key or token rather than a word or a path. A path stays
 * a path whatever the case of its names; base64 with `+` or `=` is never taken for one.
 */
export function tokenShaped(value: string): boolean {
  if (value.length < 16 || /\s/.test(value)) return false;
  if (PATH_OF_NAMES.test(value) && value.split("/").some((s) => WORD_SEGMENT.test(s))) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((re) => re.test(value)).length;
  return classes >= 2 && !/^[a-z0-9/._-]+$/.test(value);
}

/**
 * The last word of a name says what its value is (`PASSWORD_MIN_LENGTH` is a length, `TOKEN_TTL` a
 * duration, `AUTH_URL` a place): these words make a name that mentions a secret one whose value is
 * about the secret, not the secret. Paths and files (`PRIVATE_KEY_PATH`) are left out: they point
 * at one.
 */
const ABOUT_A_SECRET = new Set(
  (
    "MIN MAX MINIMUM MAXIMUM LEN LENGTH SIZE BITS COUNT LIMIT TTL TIMEOUT EXPIRY EXPIRES EXPIRATION " +
    "LIFETIME AGE DAYS HOURS MINUTES SECONDS MS ROUNDS ITERATIONS ATTEMPTS RETRIES POLICY RULE RULES " +
    "COMPLEXITY STRENGTH REQUIRED ENABLED DISABLED ENFORCED ALGORITHM ALG FORMAT TYPE KIND MODE " +
    "METHOD SCHEME PROVIDER URL URI ENDPOINT HOST PORT DOMAIN ISSUER AUDIENCE SCOPE SCOPES HEADER " +
    "PARAM NAME LABEL DESCRIPTION"
  ).split(" "),
);
/** Word boundaries: anything but a letter or digit, and a capital after a small letter or digit. */
const WORD_BREAK = /[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/;

/** Whether a name's last word says its value describes a secret rather than holds one (above). */
export function aboutASecret(name: string): boolean {
  const words = name.split(WORD_BREAK).filter(Boolean);
  return words.length > 1 && ABOUT_A_SECRET.has((words.at(-1) as string).toUpperCase());
}

/** A variable or setting whose value is a secret, by its name. */
export function secretName(name: string): boolean {
  return SECRET_NAME.test(name) && !aboutASecret(name);
}

export function filterEnvironment(env: NodeJS.ProcessEnv, keep: ReadonlySet<string>): FilteredEnvironment {
  const out: Record<string, string> = {};
  const withheld: string[] = [];
  const secretValues: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (
      WORLD_VARIABLES.includes(name) ||
      TRUST_VARIABLES.includes(name) ||
      name.startsWith("LC_") ||
      keep.has(name)
    ) {
      out[name] = value;
      continue;
    }
    withheld.push(name);
    if (value.length >= 8 && (secretName(name) || tokenShaped(value))) secretValues.push(value);
  }
  return { env: out, withheld: withheld.sort(), secretValues };
}
