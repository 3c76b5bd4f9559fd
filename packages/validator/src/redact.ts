/**
 * The sanitizer's rules on one string, in order: private key blocks, values the proxy withheld
 * from the server, AWS keys, tokens, then paragraphs that address the agent. Each replacement is
 * a visible marker, so the agent and the user see that something was removed and why.
 */
import { findHidden } from "./hidden.js";
import { INJECTION_NOTICE, removeInjectedParagraphs, replaceParagraphs } from "./injection.js";
import { documentedExample, placeholder } from "./public.js";
import { redactTokens, TOKEN_MARK } from "./tokens.js";

const PRIVATE_KEY =
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g;
const AWS_KEY_ID = /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g;
const AWS_SECRET = /(aws_secret_access_key["']?[ \t]*[:=][ \t]*["']?)([A-Za-z0-9/+=]{16,})/gi;

const HIDDEN_NOTICE = "[mcpguard removed text hidden in invisible characters]";
const PRIVATE_KEY_MARK = "[REDACTED private-key]";
const WITHHELD_MARK = "[REDACTED withheld]";
const AWS_KEY_MARK = "[REDACTED aws-key]";
/** Every text the rules put in place of what they remove. */
export const MARKERS: readonly string[] = [
  PRIVATE_KEY_MARK,
  WITHHELD_MARK,
  AWS_KEY_MARK,
  TOKEN_MARK,
  HIDDEN_NOTICE,
  INJECTION_NOTICE,
];

export interface Secrets {
  /** Values withheld from the server's environment (length >= 8). */
  withheld: readonly string[];
  /** Rule ids an operator override turned off (`l2.result.token`, ...). */
  disabled?: ReadonlySet<string>;
}

type TextRule = [rule: string, apply: (text: string, secrets: Secrets, field?: string) => string];

/** Text found base64-encoded is judged by every rule, as if it had been sent plain. */
const clean = (secrets: Secrets) => (decoded: string) => redactText(decoded, secrets, new Set()) === decoded;

const RULES: readonly TextRule[] = [
  [
    "l2.result.private-key",
    (text) => (text.includes("PRIVATE KEY") ? text.replace(PRIVATE_KEY, PRIVATE_KEY_MARK) : text),
  ],
  [
    "l2.result.withheld",
    (text, { withheld }) =>
      withheld.reduce((t, value) => (t.includes(value) ? t.split(value).join(WITHHELD_MARK) : t), text),
  ],
  [
    "l2.result.aws-key",
    (text) =>
      text
        .replace(AWS_KEY_ID, (id: string) => (placeholder(id) ? id : AWS_KEY_MARK))
        .replace(AWS_SECRET, (whole: string, prefix: string, value: string) =>
          documentedExample(value) ? whole : `${prefix}${AWS_KEY_MARK}`,
        ),
  ],
  ["l2.result.token", (text, secrets, field) => redactTokens(text, { field, clean: clean(secrets) })],
  [
    "l2.result.hidden",
    (text) => replaceParagraphs(text, (p) => findHidden(p, false) !== undefined, HIDDEN_NOTICE),
  ],
  ["l2.result.injection", removeInjectedParagraphs],
];

/**
 * The string with every rule applied but those turned off; the ids of the rules that changed it
 * go into `applied`. `field` is the JSON field the string is the value of, when it is one.
 */
export function redactText(text: string, secrets: Secrets, applied: Set<string>, field?: string): string {
  let out = text;
  for (const [rule, apply] of RULES) {
    if (secrets.disabled?.has(rule)) continue;
    const next = apply(out, secrets, field);
    if (next !== out) {
      applied.add(rule);
      out = next;
    }
  }
  return out;
}
