/**
 * Text a server writes for the agent rather than for a person: tool, prompt and resource
 * listings, the server's `instructions`, the prompts it serves and the requests it makes of the
 * client's model. An honest server describes what its tools do and how to call them, and may give
 * orders about that ("always call list_tables first", "the password is never stored"). What no
 * honest listing does, by class:
 *
 * - `hidden`: text a person cannot see (hidden.ts);
 * - `injection`: addresses the agent over the user's head: override markers (injection.ts), keeping
 *   something from the user, standing orders for later turns, text addressed to "the AI";
 * - `secrets`: directs the agent to fetch or hand over secret material: a file or store that holds
 *   credentials, the environment, the conversation, or every secret at once;
 * - `shadowing`: tells the agent how to use other tools or servers (or names one of theirs while
 *   giving orders), or where to redirect what other tools send.
 *
 * A text is read as the model reads it: in NFKC, without the characters that render as nothing
 * (default-ignorable code points: format characters, variation selectors, tag characters) and with
 * text smuggled in tag characters or variation selectors decoded (hidden.ts); with look-alike
 * letters read as the Latin letters they pass for (names.ts: `rеаd` with Cyrillic е and а is
 * `read`); and with every base64, hex, percent-encoded or escaped run decoded beside it
 * (encoded.ts). So neither full-width letters, zero-width splits, tag characters, a variation
 * selector after every letter, Cyrillic look-alikes nor an encoding hides a phrase. The classes are
 * read in English and in the ten languages most used after it (languages.ts). Each class is a
 * grammar of phrases, not a list of known attack strings.
 */
import { decodedText } from "./encoded.js";
import { describeHidden, findHidden, readable } from "./hidden.js";
import { addressesAgent, hasInjectionMarker } from "./injection.js";
import { languageFinding } from "./languages.js";
import { foldLookalikes } from "./names.js";
import { fold } from "./unicode.js";

export type AgentTextClass = "hidden" | "injection" | "secrets" | "shadowing";

export interface AgentTextFinding {
  class: AgentTextClass;
  /** One sentence, quoting no more than a short phrase of the text. */
  reason: string;
}

/** A set of names, as far as a scan needs one: whether it holds a name. */
export interface NameSet {
  has(name: string): boolean;
}

export interface AgentTextContext {
  /** The names this server offers (tools, prompts, their arguments): referring to them is its business. */
  ownNames?: NameSet;
  /** Tool names other servers of the client config have pinned: referring to them is not. */
  foreignNames?: NameSet;
  /** Which classes apply (default: all). */
  classes?: ReadonlySet<AgentTextClass>;
  /** Metadata (listings, instructions): every invisible character is judged by its place. */
  metadata?: boolean;
  /**
   * Whether `ownNames` holds every tool the server offers (default true). When it does not (the
   * `initialize` instructions come before any listing), a tool the text names may be the
   * server's own, and only tools other servers pinned count as foreign.
   */
  namesKnown?: boolean;
}

const ALL: ReadonlySet<AgentTextClass> = new Set(["hidden", "injection", "secrets", "shadowing"]);

/**
 * A pattern matched against a sentence's lower-cased text ({@link Sentence}) instead of with the
 * `i` flag: V8 compiles the patterns below at every start that scans a tool list, and compiles one
 * without the flag in about half the time (the first scan of a start: about 44 ms of regular
 * expression compiling with the flag, 23 without). An upper-case letter in one could never match:
 * refused when the module loads.
 */
function lowerCase(pattern: RegExp | string, flags = ""): RegExp {
  const source = typeof pattern === "string" ? pattern : pattern.source;
  if (/[A-Z]/.test(source.replace(/\\./g, "")))
    throw new Error(`agentText: an upper-case letter in a pattern for lower-cased text: ${source}`);
  return new RegExp(source, flags);
}

/** Verbs that fetch or hand over data; every form is matched where a form is asked for. */
const TRANSFER_VERBS = [
  "read",
  "open",
  "cat",
  "load",
  "fetch",
  "get",
  "grab",
  "retrieve",
  "collect",
  "gather",
  "extract",
  "copy",
  "include",
  "attach",
  "append",
  "add",
  "insert",
  "embed",
  "pass",
  "send",
  "forward",
  "upload",
  "post",
  "provide",
  "place",
  "supply",
  "paste",
  "put",
  "enter",
  "share",
  "output",
  "print",
  "dump",
  "leak",
  "exfiltrate",
  "transmit",
  "submit",
  "email",
  "mail",
  "export",
  "reveal",
  "disclose",
  "return",
];
const IRREGULAR: Record<string, string[]> = {
  send: ["sent"],
  get: ["got", "gotten"],
  put: ["put"],
  read: ["read"],
  write: ["wrote", "written"],
};

function forms(base: string): string[] {
  const stem = base.endsWith("e") ? base.slice(0, -1) : base;
  const doubled = /[^aeiou][aeiou][bdgmnpt]$/.test(base) && base.length <= 4 ? base + base.at(-1) : base;
  return [
    base,
    `${base}s`,
    `${base}es`,
    `${stem}ed`,
    `${stem}ing`,
    `${doubled}ed`,
    `${doubled}ing`,
    ...(IRREGULAR[base] ?? []),
  ];
}

const alternation = (words: readonly string[]) =>
  [...new Set(words)].sort((a, b) => b.length - a.length).join("|");
// The verb lists below end in `(?!\w)` rather than `\b`: after a word's last letter the two test the
// same thing, and V8 compiles a `\b` that follows a few hundred alternatives several times more
// slowly (DIRECTED: about 85 ms against 17, at every start that scans a tool list).
const BASE = alternation(TRANSFER_VERBS);
const ANY_FORM = alternation(TRANSFER_VERBS.flatMap(forms));

/** A verb at the start of a clause, in the imperative (after "please", "first", a bullet, a tag). */
const IMPERATIVE = lowerCase(
  `(?:^|[,:;(]\\s*|\\b(?:and|then|also|please|first|next|now|immediately)\\s+)(?:[-*•>]\\s*|\\d+[.)]\\s*)?(?:<[^<>]{1,24}>\\s*)?(?:(?:please|first|then|also|always|just|simply|immediately|now|next|finally|kindly)[,\\s]+){0,3}(?:${BASE})(?!\\w)`,
);
/** "you must read", "must be sent", "make sure to include": a transfer verb under a directive. */
const DIRECTED = lowerCase(
  `\\b(?:must|should|shall|needs? to|has to|have to|(?:is|are) (?:required|expected|supposed) to|make sure(?: to| that you)?|ensure(?: that)?(?: you)?|be sure to|remember to|(?:do not|don't) forget to|it is (?:required|mandatory|necessary|essential|important|critical) (?:that you |to )|you(?:'ll| will)? (?:need to|want to|have to))(?!\\s+(?:not|never)\\b)\\s+(?:\\w+\\s+){0,2}?(?:be\\s+|also\\s+|first\\s+|always\\s+)?(?:${ANY_FORM})(?!\\w)`,
);

/** Every form of the transfer verbs, and of those that hand data over (not merely read it). */
const TRANSFER_FORMS: ReadonlySet<string> = new Set(TRANSFER_VERBS.flatMap(forms));
const HAND_OVER_FORMS: ReadonlySet<string> = new Set(
  TRANSFER_VERBS.filter(
    (v) =>
      ![
        "read",
        "open",
        "cat",
        "load",
        "fetch",
        "get",
        "grab",
        "retrieve",
        "collect",
        "gather",
        "extract",
      ].includes(v),
  ).flatMap(forms),
);
/**
 * The agent named as the one who does it ("the assistant first opens ... and copies ..."): the
 * word after it is matched against a set of verb forms, which costs nothing to compile.
 */
const AGENT_SUBJECT =
  /\b(?:the|your|an?)\s+(?:ai|assistant|agent|model|llm|chatbot)(?:\s+(?:first|then|also|always|now|should|will|must|can|needs to|has to))*\s+([a-z]+)/g;
const agentDoes = (lower: string) => {
  for (const match of lower.matchAll(AGENT_SUBJECT)) if (TRANSFER_FORMS.has(match[1] as string)) return true;
  return false;
};
const handsOver = (lower: string) => lower.split(/[^a-z]+/).some((word) => HAND_OVER_FORMS.has(word));
/** Where secret material goes, said without a verb: "... are expected here", "... belongs in the memo field". */
const DESTINATION = lowerCase(
  /\b(?:(?:is|are|be)\s+(?:expected|required|needed|wanted|welcome)\s+(?:here|in|as)\b|belongs?\s+(?:here|in)\b|go(?:es)?\s+(?:here|in|into)\b)/,
);
/**
 * An environment variable the text points at (`{{env.X}}`, `process.env.X`, `os.environ`, `%X%`,
 * `getenv`, "the X environment variable"): handing its value over is an order about secrets, as a
 * server reads its own environment itself.
 */
const ENV_VARIABLE =
  /\{\{\s*env\.\w+\s*\}\}|\bprocess\.env\b|\bos\.environ\b|\bgetenv\b|%[A-Z][A-Z0-9_]{2,}%|\b[A-Z][A-Z0-9_]+\s+env(?:ironment)?(?:al)?\s+var(?:iable)?\b|\benv(?:ironment)?(?:al)?\s+var(?:iable)?\s+(?:named\s+|called\s+)?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/;

/**
 * Files and stores that hold credentials, the environment, and the conversation itself, by kind;
 * read in lower case, but for the ones marked "as written".
 */
const SECRET_LOCATIONS: readonly (readonly [RegExp, string, "as written"?])[] = [
  [
    lowerCase(
      /(?:^|[\s"'\x60(~/$])\.(?:ssh|aws|gnupg|kube|docker|azure|netrc|npmrc|pypirc|pgpass|git-credentials|vault-token|config\/gcloud|config\/gh)(?![\w-])|(?:^|[\s"'\x60(~/$])\.env(?![\w.-]|\.(?:example|sample|template))|\bid_(?:rsa|dsa|ecdsa|ed25519)\b/,
      "g",
    ),
    "a credentials file",
  ],
  [
    lowerCase(
      /(?:^|[\s"'\x60(~/$])\.(?:cursor|claude|codeium)(?![\w-])|\b(?:mcp|claude_desktop_config|mcp_config|mcp_settings)\.json\b/,
      "g",
    ),
    "an AI client's configuration",
  ],
  [
    lowerCase(/\/etc\/(?:passwd|shadow|sudoers)\b|\/proc\/(?:self|\d+)\/environ\b/, "g"),
    "a system secrets file",
  ],
  [
    lowerCase(
      /\b(?:all|every|the values? of|the contents? of|the (?:current|host|system|process|server's|user's)) (?:of (?:the |your )?)?env(?:ironment)?(?:al)? var(?:iable)?s?\b|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b|\b(?:read|dump|print|list|collect|gather|extract|copy|leak|include|attach|send|output)\s+(?:out\s+)?(?:the\s+)?env(?:ironment)?(?:al)?\s+var(?:iable)?s\b/,
      "g",
    ),
    "the environment",
  ],
  [
    /\$?\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:API_?KEY|TOKEN|SECRET(?:_KEY)?|PASSWORD|PASSWD|CREDENTIALS?)\b/g,
    "a secret variable",
    "as written",
  ],
  [
    lowerCase(
      /\b(?:keychain|keyring|password manager|credential (?:store|manager|helper)|browser (?:cookies|passwords|history)|cookie jar|wallet file|seed phrase|recovery phrase|mnemonic phrase)\b/,
      "g",
    ),
    "a secret store",
  ],
  [
    lowerCase(
      /\b(?:conversation|chat|message) history\b|\b(?:previous|prior|earlier) messages\b|\bsystem prompt\b|\b(?:the )?conversation so far\b/,
      "g",
    ),
    "the conversation",
  ],
];
/** A path to a location names it, and what goes into one is stored there: neither hands it over. */
const NOT_TAKEN = lowerCase(
  /(?:\b(?:path|paths|filename|file name|location|name)\s+(?:to|of)|\b(?:to|into))\s+(?:the\s+|your\s+|a\s+|an\s+)?[~$/]?$/,
);
const SECRET_NOUN = lowerCase(
  /\b(?:passwords?|passphrases?|api[ _-]?keys?|api tokens?|access (?:tokens?|keys?)|auth(?:entication)? tokens?|bearer tokens?|oauth tokens?|refresh tokens?|secret keys?|private keys?|ssh keys?|credentials|session cookies|secrets|tokens?)\b/,
);
/** A variable named for a secret, as environments name them: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN. */
const SECRET_VARIABLE =
  /(?<![\w$])\$?\{?[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:SECRET|TOKEN|KEY|PASSWORD|PASSWD|PASS|CREDENTIALS?|PAT)(?:_[A-Z0-9]+)*\}?(?![\w])/;
const SECRET_SOURCE = lowerCase(
  /\b(?:from|in|inside|under|stored in|saved in|found in|kept in|of)\s+(?:the\s+|your\s+|the user's\s+|this\s+)?(?:environment|env|system|machine|computer|host|disk|file ?system|home(?: directory| folder)?|config(?:uration)?(?: files?)?|dotfiles|keychain|browser|clipboard|shell history|memory|context|conversation)\b|\bthe user'?s\s+(?:\w+\s+)?(?:passwords?|api[ _-]?keys?|tokens?|credentials|secrets|private keys?|cookies)\b|\b(?:all|every|any)\s+(?:of\s+)?(?:the\s+)?(?:stored\s+|saved\s+|available\s+|local\s+)?(?:passwords|api[ _-]?keys|tokens|secrets|credentials|private keys)\b/,
);

/** Keeping something from the user, beyond the override markers of injection.ts. */
const CONCEALMENT = lowerCase(
  [
    String.raw`\b(?:do not|don't|never|must not|mustn't|should not|shouldn't)\s+(?:ever\s+)?(?:tell|mention|inform|reveal|show|alert|notify|disclose|report|bring up|say|explain|acknowledge)\s+(?:(?:this|that|it|these|those|anything|any of (?:this|these|it)|about (?:this|it|that|these))\b[^.!?\n]{0,90}?\b(?:the|your|any) (?:user|human|operator)s?\b|(?:(?:this|that|it|anything)\s+)?(?:to\s+)?(?:the|your|any) (?:user|human|operator)s?\b)`,
    String.raw`\b(?:hide|conceal|keep)\b[^.!?\n]{0,50}?\b(?:from|secret from|away from|hidden from)\s+(?:the|your) (?:user|human)\b`,
    String.raw`\b(?:the|your) (?:user|human)\s+(?:must|should|need|may|will|can)\s*(?:not|never|n't)\s+(?:\w+\s+)?(?:know|see|notice|find out|learn|be told|be informed|be aware)\b`,
    String.raw`\b(?:secretly|covertly|discreetly|surreptitiously|stealthily|silently|quietly)\s+(?:also\s+)?(?:${BASE}|call|invoke|use|run|execute)\b`,
  ].join("|"),
);
/**
 * An override said without the words of injection.ts's markers: "forget what you were told
 * before", "disregard the earlier guidance".
 */
const OVERRIDE = lowerCase(
  /\b(?:forget|ignore|disregard|set aside)\b[^.!?\n]{0,30}?\b(?:(?:everything|anything|all|what(?:ever)?)\s+(?:(?:you|we)\s+(?:were|have been|'ve been|had been|was)\s+)?(?:told|given|instructed|asked|said)\b|(?:the\s+|your\s+|any\s+)?(?:earlier|previous|prior|above|original|initial|system)\s+(?:guidance|guidelines|directions|orders|constraints|restrictions|rules|instructions|prompt)\b)/,
);
/** Orders meant to outlive the request: "from now on", "in all future responses". */
const PERSISTENCE = lowerCase(
  /\bfrom now on\b|\bin (?:all|every|each) (?:future|subsequent|following|later) (?:responses?|replies|messages|answers|turns|conversations|sessions)\b|\bfor (?:all|every) (?:future|subsequent) (?:responses?|replies|requests?|messages|conversations?)\b|\bfor the rest of (?:the|this|our) (?:conversation|chat|session)\b/,
);
/** An order, anywhere in a sentence (for `shadowing`). */
const ORDER = lowerCase(
  /\b(?:must|should|shall|needs? to|has to|have to|(?:is|are) required to|make sure|ensure|always|never|do not|don't|instead|immediately|only ever|be sure to|it is (?:required|mandatory|essential|critical|important) (?:that|to))\b/,
);

/** Other tools or servers, named generically, in the constructions that steer them. */
const FOREIGN_GENERIC = lowerCase(
  [
    String.raw`\b(?:when(?:ever)?|if|every time|each time|before|after)\s+(?:you\s+)?(?:use|call|invoke|run|using|calling|invoking|running)\s+(?:(?:any|all|every)(?:\s+other)?|another|other|the other)\s+(?:(?:mcp|connected|available|installed)\s+)?(?:tools?|servers?|functions?)\b[^.!?\n]{0,200}\b(?:must|should|always|never|instead|include|add|set|send|pass|cc|bcc)\b`,
    String.raw`\b(?:other|another|all other|every other|the other)\s+(?:(?:mcp|connected|available|installed)\s+)?(?:tools?|servers?|functions?)\s+(?:must|should|shall|need to|have to|will have to|are required to)\b`,
    String.raw`\b(?:for|with|to|in|on)\s+(?:all|any|every)\s+(?:other\s+)?(?:tool calls?|function calls?|tools|servers)\b[^.!?\n]{0,200}\b(?:must|should|always|never)\b`,
    String.raw`\bside[- ]effects?\s+on\s+(?:the\s+)?(?:\w+\s+){0,3}(?:tools?|servers?|functions?)\b`,
    String.raw`\binstead of\s+(?:any|the|another|other|all)\s+(?:other\s+)?(?:(?:mcp|built-in|builtin|available)\s+)?(?:tools?|servers?|functions?)\b`,
  ].join("|"),
);
/** A tool named specifically: an identifier next to "tool", after "call"/"invoke", or after "instead of". */
// Anchored at the start of a word: a match never starts inside one, so a long word costs its length once.
const IDENTIFIER = String.raw`\x60?(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\x60?`;
const NAMED_TOOL = new RegExp(
  [
    `${IDENTIFIER}\\s+(?:tool|function)s?\\b`,
    `\\b(?:tool|function)\\s+${IDENTIFIER}`,
    `\\b(?:call(?:ing|s)?|invok(?:e|es|ing)|instead of)\\s+(?:the\\s+)?${IDENTIFIER}`,
    // A plain word names a tool only in code quotes and next to "tool": `analyze` tool, call `analyze`.
    "\x60([A-Za-z][\\w-]*)\x60\\s+(?:tool|function)s?\\b",
    "\\b(?:call(?:ing|s)?|invok(?:e|es|ing)|instead of)\\s+(?:the\\s+)?\x60([A-Za-z][\\w-]*)\x60",
  ].join("|"),
  "g",
);
/** A name shaped like an identifier, not like a word of prose (`read_file`, `sendEmail`). */
const IDENTIFIER_SHAPED = /[_.]|[a-z][A-Z]/;
/** Data sent to an address spelled out in the text: where "send all emails to ..." points. */
const ADDRESS = String.raw`(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?:\/\/\S+)`;
const REDIRECT = lowerCase(
  [
    // "send all results to x@y", "forward every message to https://..."
    String.raw`\b(?:send|forward|bcc|cc|copy|redirect|route|deliver|email|mail|post|upload|report)\b[^.!?\n]{0,60}?\b(?:all|every|each|any|a copy of)\b[^.!?\n]{0,60}?\bto\s+${ADDRESS}`,
    // A recipient added by the text itself: "add bcc: x@y", "cc x@y on", "forward it to x@y".
    String.raw`\b(?:bcc|cc)\b[\s:=]*(?:to\s+)?${ADDRESS}`,
    String.raw`\b(?:forward|redirect)\b[^.!?\n]{0,60}?\bto\s+${ADDRESS}`,
  ].join("|"),
);

/** A mail-like address or a URL. */
const ADDRESS_IN_TEXT = new RegExp(ADDRESS);
/** What other tools send, all of it: "any message", "every email the agent sends", "all results". */
const MESSAGE_SCOPE = lowerCase(
  /\b(?:any|every|all|each)\s+(?:[\w-]+\s+){0,3}?(?:messages?|e-?mails?|mails?|requests?|repl(?:y|ies)|responses?|results?|invit(?:ation|e)s?)\b/,
);
/** A recipient or a delivery: "blind-copy recipient", "bcc", "should also reach". */
const DELIVERY = lowerCase(
  /\b(?:bcc|cc|blind[- ]?(?:carbon[- ]?)?cop(?:y|ies)|carbon[- ]?cop(?:y|ies)|recipients?|reach(?:es)?|be (?:sent|copied|forwarded|delivered) to|go(?:es)? to)\b/,
);
const ADDED = lowerCase(
  /\b(?:add|adds|added|adding|include[sd]?|including|insert(?:s|ed)?|append(?:s|ed)?|copied|forwarded|redirected|routed|mirrored|also)\b/,
);

/** A Markdown image or link: whether it is an image, and its URL. */
const MARKDOWN_URL = /(!?)\[[^\]\n]{0,300}\]\(\s*<?([^\s)>]{1,2000})/g;
const BARE_URL = /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s<>"'\x60)\]]{1,2000}/gi;
/** A placeholder the agent is to fill in: `{x}`, `{{x}}`, `${X}`, `$X`, `%X%`, `<x>`. */
const PLACEHOLDER =
  /\{\{[^{}]{1,80}\}\}|\$\{[^{}]{1,80}\}|\{[^{}]{1,80}\}|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|<[^<>]{1,80}>/g;
/** A placeholder for the environment: `$HOME`, `${TOKEN}`, `{{env.X}}`, `%USERPROFILE%`, `process.env`. */
const ENV_PLACEHOLDER =
  /^(?:\$\{?[A-Z][A-Z0-9_]*\}?|\{\{\s*(?:env|process\.env|secrets?)\b|%[A-Z][A-Z0-9_]*%)|process\.env|os\.environ/;
/** What the conversation holds that the server should not get. */
const CONVERSATION_WORDS = /conversation|history|chat|prompt|context|memory|summary|messages|transcript/i;
/** What a secret is called. */
const SECRET_WORDS =
  /secret|token|api_?key|apikey|private_?key|passw|pwd|credential|cookie|session|ssh|auth/i;

/**
 * A URL the agent is to fill in with data the server should not get: a Markdown image with a
 * placeholder in its query (the client fetches an image when it shows it, so the data leaves without
 * a click), a Markdown image or link with a placeholder for a secret, and any URL with one for the
 * conversation or the environment (`{conversation_summary}`, `$HOME`, `{{env.X}}`). An API's
 * documented URL template (`/repos/{owner}/{repo}`, `?appid={API_KEY}` in plain text) is neither.
 */
function exfiltratingUrl(text: string): AgentTextFinding | undefined {
  if (!/[{$%<]/.test(text)) return undefined;
  const asks = (url: string, image: boolean, link: boolean) => {
    const query = url.search(/[?#]/);
    for (const { 0: placeholder, index } of url.matchAll(PLACEHOLDER)) {
      if (ENV_PLACEHOLDER.test(placeholder) || CONVERSATION_WORDS.test(placeholder)) return true;
      if ((image || link) && SECRET_WORDS.test(placeholder)) return true;
      // An image's query filled in by the agent: data sent on display (`/{size}/{id}.png` is a path).
      if (image && query >= 0 && index > query) return true;
    }
    return false;
  };
  for (const [, bang, url] of text.matchAll(MARKDOWN_URL)) {
    if (url && asks(url, bang === "!", true))
      return {
        class: "secrets",
        reason:
          bang === "!"
            ? "asks the agent to fill in an image URL that the client fetches when it shows it"
            : "asks the agent to put secret material or the conversation into a link",
      };
  }
  for (const [url] of text.matchAll(BARE_URL)) {
    if (asks(url, false, false))
      return {
        class: "secrets",
        reason: "asks the agent to put the conversation or the environment into a URL",
      };
  }
  return undefined;
}

const SENTENCE = /(?<=[.!?])\s+|(?<=[\u3002\uFF01\uFF1F\uFF61\u0964\u0965\u061F\u06D4])\s*|\n+|;\s+/;

/** A sentence as written (variables and tool names keep their case) and lower-cased ({@link lowerCase}). */
interface Sentence {
  text: string;
  lower: string;
}

function sentences(text: string): Sentence[] {
  return text
    .split(SENTENCE)
    .map((s) =>
      s
        .replace(/[*_]{2,}|[*]/g, "")
        .replace(/[ \t]+/g, " ")
        .trim(),
    )
    .filter(Boolean)
    .map((s) => ({ text: s, lower: s.toLowerCase() }));
}

/** The kind of secret material a sentence hands over: a location that is not merely named or written to. */
function secretMaterial(sentence: Sentence): string | undefined {
  for (const [pattern, kind, asWritten] of SECRET_LOCATIONS) {
    const text = asWritten ? sentence.text : sentence.lower;
    for (const match of text.matchAll(pattern)) {
      const start = match.index + (match[0].length - match[0].trimStart().length);
      if (NOT_TAKEN.test(text.slice(Math.max(0, start - 40), start).toLowerCase())) continue;
      return kind;
    }
  }
  if (SECRET_VARIABLE.test(sentence.text)) return "a secret's variable";
  return SECRET_NOUN.test(sentence.lower) && SECRET_SOURCE.test(sentence.lower)
    ? "secrets by name"
    : undefined;
}

/**
 * An order to fetch or hand over secret material: an imperative, a directive ("you must read") or
 * the agent named as the one who does it ("the assistant opens ... and copies"), or the material
 * given a destination without a verb ("... are expected here"). An environment variable's value
 * counts when it is to be handed over, not merely read (a server reads its own environment).
 */
function secrets(parts: readonly Sentence[]): AgentTextFinding | undefined {
  for (const sentence of parts) {
    const { lower } = sentence;
    const order = IMPERATIVE.test(lower) || DIRECTED.test(lower) || agentDoes(lower);
    const destination = DESTINATION.test(lower);
    if (!order && !destination) continue;
    const material =
      secretMaterial(sentence) ??
      (ENV_VARIABLE.test(sentence.text) && (destination || handsOver(lower))
        ? "an environment variable"
        : undefined);
    if (material) {
      return {
        class: "secrets",
        reason: `directs the agent to fetch or hand over secret material (${material})`,
      };
    }
  }
  return undefined;
}

function injection(plain: string, parts: readonly Sentence[]): AgentTextFinding | undefined {
  if (hasInjectionMarker(plain))
    return { class: "injection", reason: "carries a prompt-injection marker that addresses the agent" };
  for (const { lower } of parts) {
    if (OVERRIDE.test(lower))
      return { class: "injection", reason: "carries a prompt-injection marker that addresses the agent" };
    if (CONCEALMENT.test(lower))
      return { class: "injection", reason: "tells the agent to keep something from the user" };
    if (PERSISTENCE.test(lower))
      return { class: "injection", reason: "gives the agent standing orders for later turns" };
  }
  return addressesAgent(plain)
    ? { class: "injection", reason: "gives orders addressed to the AI that reads it" }
    : undefined;
}

/** The names of tools a sentence refers to specifically. */
function namedTools(sentence: string): string[] {
  const names: string[] = [];
  for (const match of sentence.matchAll(NAMED_TOOL)) {
    const name = match.slice(1).find((g) => g !== undefined);
    if (name) names.push(name);
  }
  return names;
}

function shadowing(parts: readonly Sentence[], ctx: AgentTextContext): AgentTextFinding | undefined {
  const own: NameSet = ctx.ownNames ?? new Set<string>();
  const foreign: NameSet = ctx.foreignNames ?? new Set<string>();
  const isOwn = (name: string) => own.has(name) || own.has(name.split(".").at(-1) ?? name);
  for (const { text, lower } of parts) {
    if (FOREIGN_GENERIC.test(lower))
      return { class: "shadowing", reason: "tells the agent how to use other tools or servers" };
    if (REDIRECT.test(lower) && ORDER.test(lower))
      return { class: "shadowing", reason: "redirects what is sent to an address of its own" };
    // "any message the agent sends ... gets x@y added as a blind-copy recipient": no verb of
    // sending in the order, but every message gains a recipient of the server's.
    if (MESSAGE_SCOPE.test(lower) && DELIVERY.test(lower) && ADDED.test(lower) && ADDRESS_IN_TEXT.test(lower))
      return { class: "shadowing", reason: "redirects what is sent to an address of its own" };
    // A name another server pinned counts where it reads as a name: "analyze" in prose is a word.
    const words = text.split(/[^\w-]+/);
    const pinned = words.find((w) => foreign.has(w) && IDENTIFIER_SHAPED.test(w) && !isOwn(w));
    const named = ctx.namesKnown === false ? undefined : namedTools(text).find((name) => !isOwn(name));
    const other = pinned ?? named;
    if (other && ORDER.test(lower))
      return { class: "shadowing", reason: "gives orders about a tool it does not offer" };
  }
  return undefined;
}

/** What the rules of the other languages find (languages.ts), the secret material named as in English. */
function otherLanguages(text: string, classes: ReadonlySet<AgentTextClass>): AgentTextFinding | undefined {
  const found = languageFinding(text, classes, (raw) =>
    secretMaterial({ text: raw, lower: raw.toLowerCase() }),
  );
  return found ? { class: found.class, reason: found.reason } : undefined;
}

/** The first class a text falls in, or undefined for text an honest server writes. */
export function scanAgentText(text: string, ctx: AgentTextContext = {}): AgentTextFinding | undefined {
  const classes = ctx.classes ?? ALL;
  if (classes.has("hidden")) {
    const hidden = findHidden(text, ctx.metadata !== false);
    if (hidden) return { class: "hidden", reason: describeHidden(hidden) };
  }
  // As the model reads it: NFKC, nothing that renders as nothing, smuggled text decoded; then
  // look-alike letters as Latin ones, and every encoded run decoded beside the text.
  const plain = readable(fold(text));
  const latin = foldLookalikes(plain);
  const decoded = decodedText(latin);
  const reading = decoded ? `${latin}\n${decoded}` : latin;
  const parts = sentences(reading);
  return (
    (classes.has("injection") ? injection(reading, parts) : undefined) ??
    (classes.has("injection") || classes.has("secrets")
      ? otherLanguages(decoded ? `${plain}\n${decoded}` : plain, classes)
      : undefined) ??
    (classes.has("secrets") ? (secrets(parts) ?? exfiltratingUrl(reading)) : undefined) ??
    (classes.has("shadowing") ? shadowing(parts, ctx) : undefined)
  );
}
