/**
 * Text a server hands the agent or the user outside tool results, judged as text for the agent
 * (agentText.ts):
 *
 * - the `instructions` of its `initialize` result (clients put them in the model's context):
 *   every class, as for a listing (`l2.listing.*`);
 * - the messages of a prompt it serves (`prompts/get`): they are instructions by design, so only
 *   what no honest prompt holds counts, hidden text, orders over the user's head, fetching secrets
 *   (`l2.prompt.*`); other tools may be named, since prompts orchestrate them;
 * - `sampling/createMessage`: the messages and system prompt it asks the client's model to
 *   complete, judged like a prompt (`l2.request.*`); a flagged text is replaced by a notice and
 *   the request goes on, for the user to see and decide;
 * - `elicitation/create`: a form shown to the user. The MCP specification forbids asking for
 *   sensitive information in a form, so a form that asks for a credential (by a field's name,
 *   title or description) is refused (`l2.request.credentials`), and so is a message that a
 *   class flags: a form cannot be shown in part.
 */
import { type AgentTextClass, type NameSet, scanAgentText } from "./agentText.js";
import { NOTICE_PREFIX } from "./listing.js";

export interface TextFinding {
  rule: string;
  reason: string;
  /** Where in the message: `messages[0].content.text`, `requestedSchema.properties.password`. */
  at: string;
}

export interface ScannedText<T> {
  value: T;
  findings: TextFinding[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const PROMPT_CLASSES: ReadonlySet<AgentTextClass> = new Set(["hidden", "injection", "secrets"]);

function textNotice(rule: string, reason: string): string {
  return `${NOTICE_PREFIX}text withheld: it ${reason} (${rule})]`;
}

/** A text judged for a surface; the notice that stands in for it when flagged. */
function judge(
  text: string,
  at: string,
  prefix: string,
  options: {
    classes?: ReadonlySet<AgentTextClass>;
    metadata: boolean;
    disabled?: ReadonlySet<string>;
    foreignNames?: NameSet;
    namesKnown?: boolean;
  },
  findings: TextFinding[],
): string {
  const classes = new Set(
    [...(options.classes ?? ["hidden", "injection", "secrets", "shadowing"])].filter(
      (c) => !options.disabled?.has(`${prefix}.${c}`),
    ),
  ) as Set<AgentTextClass>;
  const found = scanAgentText(text, {
    classes,
    metadata: options.metadata,
    foreignNames: options.foreignNames,
    namesKnown: options.namesKnown,
  });
  if (!found) return text;
  const rule = `${prefix}.${found.class}`;
  findings.push({ rule, reason: found.reason, at });
  return textNotice(rule, found.reason);
}

/**
 * A content block (or an array of them) of a prompt or sampling message: its text, and the text of
 * an embedded resource, judged; anything else kept.
 */
function content(value: unknown, at: string, judgeText: (text: string, at: string) => string): unknown {
  if (Array.isArray(value)) {
    // One level: a message's content is a block or a list of blocks, never a list of lists.
    let changed = false;
    const next = value.map((item, i) => {
      const out = Array.isArray(item) ? item : content(item, `${at}[${i}]`, judgeText);
      if (out !== item) changed = true;
      return out;
    });
    return changed ? next : value;
  }
  if (!isRecord(value)) return value;
  if (value.type === "text" && typeof value.text === "string") {
    const text = judgeText(value.text, `${at}.text`);
    return text === value.text ? value : { ...value, text };
  }
  const resource = value.resource;
  if (value.type === "resource" && isRecord(resource) && typeof resource.text === "string") {
    const text = judgeText(resource.text, `${at}.resource.text`);
    return text === resource.text ? value : { ...value, resource: { ...resource, text } };
  }
  return value;
}

/** Messages (`{role, content}`) with their content judged. */
function messages(value: unknown, judgeText: (text: string, at: string) => string): unknown {
  if (!Array.isArray(value)) return value;
  let changed = false;
  const next = value.map((message, i) => {
    if (!isRecord(message)) return message;
    const body = content(message.content, `messages[${i}].content`, judgeText);
    if (body === message.content) return message;
    changed = true;
    return { ...message, content: body };
  });
  return changed ? next : value;
}

/**
 * The `initialize` result with its `instructions` judged as listing text. They come before any
 * listing, so a tool they name may be the server's own: only names other servers pinned
 * (`foreignNames`) count as another's.
 */
export function scanInstructions(
  result: Record<string, unknown>,
  disabled?: ReadonlySet<string>,
  foreignNames?: NameSet,
): ScannedText<Record<string, unknown>> {
  const findings: TextFinding[] = [];
  if (typeof result.instructions !== "string") return { value: result, findings };
  const text = judge(
    result.instructions,
    "instructions",
    "l2.listing",
    { metadata: true, disabled, foreignNames, namesKnown: false },
    findings,
  );
  return { value: text === result.instructions ? result : { ...result, instructions: text }, findings };
}

/** A `prompts/get` result with its description and messages judged. */
export function scanPrompt(
  result: Record<string, unknown>,
  disabled?: ReadonlySet<string>,
): ScannedText<Record<string, unknown>> {
  const findings: TextFinding[] = [];
  const judgeText = (text: string, at: string) =>
    judge(text, at, "l2.prompt", { classes: PROMPT_CLASSES, metadata: false, disabled }, findings);
  let next = result;
  if (typeof result.description === "string") {
    const description = judgeText(result.description, "description");
    if (description !== result.description) next = { ...next, description };
  }
  const body = messages(result.messages, judgeText);
  if (body !== result.messages) next = { ...next, messages: body };
  return { value: next, findings };
}

/** The params of a `sampling/createMessage` request with its messages and system prompt judged. */
export function scanSampling(
  params: Record<string, unknown>,
  disabled?: ReadonlySet<string>,
): ScannedText<Record<string, unknown>> {
  const findings: TextFinding[] = [];
  const judgeText = (text: string, at: string) =>
    judge(text, at, "l2.request", { classes: PROMPT_CLASSES, metadata: false, disabled }, findings);
  let next = params;
  if (typeof params.systemPrompt === "string") {
    const systemPrompt = judgeText(params.systemPrompt, "systemPrompt");
    if (systemPrompt !== params.systemPrompt) next = { ...next, systemPrompt };
  }
  const body = messages(params.messages, judgeText);
  if (body !== params.messages) next = { ...next, messages: body };
  return { value: next, findings };
}

/** Words that name a credential in a form field's name (`api_key`, `githubToken`, `otp`). */
const CREDENTIAL_WORD =
  /^(?:password|passwd|passphrase|passcode|pwd|pin|secret|secrets|apikey|credential|credentials|privatekey|otp|totp|mfa|2fa|cvv|cvc|ssn|cookie|seed|mnemonic)$/;
const TOKEN_COUNT = /(?:max|min|num|count|limit)$/;
/** A credential asked for in a field's title or description. */
const CREDENTIAL_TEXT =
  /\b(?:passwords?|passphrases?|passcodes?|pin code|api[ _-]?keys?|(?:access|auth(?:entication)?|bearer|personal access|session|refresh|oauth|api|github|gitlab|slack|npm) tokens?|secret keys?|client secrets?|private keys?|credentials|one[- ]time (?:codes?|passwords?)|2fa codes?|mfa codes?|verification codes?|security codes?|seed phrases?|recovery (?:phrases?|codes?)|mnemonic|credit card|card numbers?|cvv|cvc|social security numbers?|bank account numbers?)\b/i;

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether a form field asks for a credential. */
export function credentialField(name: string, field: unknown): boolean {
  const parts = words(name);
  const joined = parts.join("");
  if (parts.some((w) => CREDENTIAL_WORD.test(w)) || /apikey|privatekey|accesskey|secretkey/.test(joined))
    return true;
  const token = parts.indexOf("token") >= 0 ? parts.indexOf("token") : parts.indexOf("tokens");
  if (token >= 0 && !TOKEN_COUNT.test(parts[token - 1] ?? "")) return true;
  if (!isRecord(field)) return false;
  return [field.title, field.description].some((t) => typeof t === "string" && CREDENTIAL_TEXT.test(t));
}

/** What makes an `elicitation/create` request unfit to show: every finding refuses it. */
export function scanElicitation(
  params: Record<string, unknown>,
  disabled?: ReadonlySet<string>,
): TextFinding[] {
  const findings: TextFinding[] = [];
  if (typeof params.message === "string")
    judge(
      params.message,
      "message",
      "l2.request",
      { classes: PROMPT_CLASSES, metadata: true, disabled },
      findings,
    );
  const schema = params.requestedSchema;
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  for (const [name, field] of Object.entries(properties)) {
    if (!disabled?.has("l2.request.credentials") && credentialField(name, field)) {
      findings.push({
        rule: "l2.request.credentials",
        reason: `asks the user for a credential in a form (field ${JSON.stringify(name.slice(0, 40))}), which MCP forbids`,
        at: `requestedSchema.properties.${name}`,
      });
    }
    if (!isRecord(field)) continue;
    for (const key of ["title", "description"] as const) {
      const text = field[key];
      if (typeof text === "string")
        judge(
          text,
          `requestedSchema.properties.${name}.${key}`,
          "l2.request",
          { classes: PROMPT_CLASSES, metadata: true, disabled },
          findings,
        );
    }
  }
  return findings;
}
