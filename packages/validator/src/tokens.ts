/**
 * `l2.result.token`: tokens in result text. Three kinds: well-known formats (Stripe, GitHub,
 * Slack, Google, GitLab, npm, Hugging Face, JWT, `Bearer`) unless written as a placeholder
 * (`sk_test_xxx`), values assigned to a secret-looking name (`NAME=value`, `"name": "value"`,
 * `name: value`) unless the value is a placeholder, a version range, a publishable key, a character
 * set or code, and generic token-shaped strings of 32 to 100 characters that mix upper case, lower
 * case and digits. A generic candidate that is hexadecimal (hashes), a UUID, part of an e-mail
 * address, a path, an identifier made of words, a character set, a publishable key, a digest that
 * names its algorithm or is named a digest, the value of an identifier, or base64 of text that
 * holds no secret is left alone (`public.ts`).
 */
import {
  alphabet,
  documentedExample,
  encodedText,
  placeholder,
  publicBlocks,
  publicToken,
  publishable,
  versionRange,
  wrappedBase64,
} from "./public.js";
import { secretLooking } from "./secrets.js";

export const TOKEN_MARK = "[REDACTED token]";

/**
 * Each but a JWT is a whole token: never right after or right before a word character or a `-`,
 * which would make it part of a longer run (base64url, whose alphabet has both: `...sz_-hf_1DCA...`
 * or `sha512=hf_DHj0..._lar8...` in a digest), a run the generic rule judges whole.
 */
const KNOWN: readonly RegExp[] = [
  /(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,}(?![\w-])/g,
  /(?<![\w-])gh[pousr]_[A-Za-z0-9]{30,}(?![\w-])/g,
  /(?<![\w-])github_pat_[A-Za-z0-9_]{30,}(?![\w-])/g,
  /(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}(?![\w-])/g,
  /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g,
  /(?<![\w-])glpat-[A-Za-z0-9_-]{20,}(?![\w-])/g,
  /(?<![\w-])npm_[A-Za-z0-9]{36}(?![\w-])/g,
  /(?<![\w-])hf_[A-Za-z0-9]{30,}(?![\w-])/g,
  // A JWT's dots are in no digest, and the generic rule stops at a dot: after a `-` it is still one.
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];
/** Every known format starts with one of these: a text without any skips the nine patterns. */
const KNOWN_ANCHOR = /[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abposr]-|AIza|glpat-|npm_|hf_|eyJ/;
const BEARER = /\b(Bearer[ \t]+)[A-Za-z0-9._~+/-]{16,}=*/gi;
/** `name=value`; never a comparison (`==`, `===`) or an arrow (`=>`). */
const ASSIGNMENT =
  /(?<![\w.-])((?:export[ \t]+)?[A-Za-z_][\w.-]*)([ \t]*=(?![=>])[ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s"'`;&|]+)/g;
const QUOTED_PAIR = /(["'])([A-Za-z_][\w.-]*)\1([ \t]*:[ \t]*)(["'])((?:\\.|(?!\4)[^\\\n])*)\4/g;
const YAML_PAIR = /^([ \t]*(?:- )?)([A-Za-z_][\w.-]*)(:[ \t]+)(\S+)[ \t]*$/gm;
const GENERIC = /(?<![A-Za-z0-9+/_.@~-])[A-Za-z0-9+/_-]{32,100}={0,2}(?![A-Za-z0-9+/=_@-])(?!\.[A-Za-z0-9])/g;

const PLACEHOLDER =
  /^(?:true|false|null|none|nil|undefined|enabled|disabled|required|optional|changeme|\*+|x+|\d+(?:\.\d+)?|<[^>]*>|\$\{?\w+\}?)$/i;
/**
 * Code, not a value: a call, an index, a block, or a member path whose members are written as code
 * is (`config.secret`, `config.apiKey,`, `process.env.API_KEY;`). A capital followed by small letters
 * (`prod.Hunter2`) reads as a password, not a member.
 */
const CODE = /[()[\]{}]|^[a-z_$][\w$]*(?:\.(?:[a-z_$][\w$]*|[A-Z][A-Z0-9_]*))+[,;]?$/;
const HEX = /^[0-9a-fA-F-]+$/;
const DIGIT_RUNS = /[0-9]+/g;
const LETTERS = /[A-Za-z]/g;
/** Capitalised or lower-case words of three letters or more (an acronym's last capital starts the next word). */
const WORDS = /[A-Z]?[a-z]{3,}/g;
const VOWEL = /[aeiouy]/;
/** A field named "key" holds a setting's name (`{"key": "app.name", "value": ...}`), not a secret. */
const NAME_FIELD = /^key$/i;
const WHITESPACE = /\s/;
const BASE64_SIGNS = /[+/=]/;
const UPPER = /[A-Z]/;
const LOWER = /[a-z]/;
const DIGIT = /[0-9]/;
const WORD_SEGMENT = /^[A-Za-z]?[a-z]{2,}[0-9]*$/;
const QUOTED = /^(["']).*\1$/;

/** A name whose value is a secret. */
export function secretField(name: string): boolean {
  return secretLooking(name) && !NAME_FIELD.test(name);
}

/** A minifier's name (one or two characters) or a keyword that starts an expression. */
const CODE_ATOM = /^(?:[A-Za-z_$][\w$]?|null|undefined|true|false|void|this|function|new|typeof|None|nil)$/;

/**
 * Minified code where a value would be (`s.key=t,i!==void 0`, `t.key=null,function`,
 * `o.key=t?r.C0.ESC+`, `r.key=n:r.value=n`): what comes before its first comma, `?` or `:` is code or
 * a minifier's short name. A password does not start with one or two characters and a comma.
 */
function codeList(value: string): boolean {
  const end = value.search(/[,?:]/);
  if (end <= 0) return false;
  const head = value.slice(0, end);
  return CODE_ATOM.test(head) || CODE.test(head);
}

/** An expression made of names: `password`, `extra?.authInfo`, `exports.OAuthError`, `!this.done`. */
const NAME_EXPRESSION = /^!*[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*$/;
/** Keywords that start an expression (`helper = function (receiver) {`, `x = yield* y`). */
const EXPRESSION_KEYWORD = /^(?:function|async|class|new|await|yield\*?|typeof|void|this)$/;
/** What goes on after a name in an expression: right after it a `;` or `,`; after spaces an operator. */
const GOES_ON = /^(?:[;,]|[ \t]*(?:[?:)\]}+\-*/%&|!<>]|=[^=]|==))/;
/** An `=` with spaces on both sides, as code writes it and no shell assignment can. */
const SPACED_EQUALS = /^[ \t]+=[ \t]+$/;

/**
 * An assignment in code, not a setting: `=` with spaces around it, and as its value a keyword that
 * starts an expression, or a name (a member path) that the expression goes on after
 * (`this.password = password;`, `exports.token = token;`, `const secret = isPublic ? a : b`). A
 * setting's value is a literal: in a shell, an env file or a config it ends its line or its
 * command, and a quoted one is judged as ever.
 */
function codeAssignment(eq: string, value: string, after: string): boolean {
  if (!SPACED_EQUALS.test(eq)) return false;
  return EXPRESSION_KEYWORD.test(value) || (NAME_EXPRESSION.test(value) && GOES_ON.test(after));
}

/**
 * A member of an object literal in code (`authInfo: extra?.authInfo,`, `token: token,`): a name, not
 * quoted, and the comma that lists the next member.
 */
const codeMember = (value: string) => value.endsWith(",") && NAME_EXPRESSION.test(value.slice(0, -1));

/**
 * A value worth hiding when its name says it is secret: not empty, a placeholder, a version range
 * (a dependency named `path-key` or `cookie` in a lockfile), a publishable key, a character set or
 * code.
 */
export function secretValue(value: string): boolean {
  return (
    value.length >= 6 &&
    !WHITESPACE.test(value) &&
    !value.startsWith("[REDACTED") &&
    !PLACEHOLDER.test(value) &&
    !placeholder(value) &&
    !CODE.test(value) &&
    !codeList(value) &&
    !versionRange(value) &&
    !publishable(value) &&
    !alphabet(value)
  );
}

/** A path: rooted, or with a segment that is a word; never ending in base64's padding. */
function pathLike(candidate: string): boolean {
  return (
    candidate.includes("/") &&
    // Base64 padding: a key that happens to start with "/" is no path.
    !candidate.endsWith("=") &&
    (candidate.startsWith("/") || candidate.split("/").some((s) => WORD_SEGMENT.test(s)))
  );
}

/**
 * An identifier made of words (`SomeLongCamelCaseName2024`, `test_case_name`): at most two runs of
 * digits, and most letters in words of three or more letters with a vowel. A random token of 32
 * characters over [A-Za-z0-9] passes for one about once in a thousand, one of 40 about once in
 * six thousand, one of 50 or more almost never.
 */
function wordy(candidate: string): boolean {
  if (BASE64_SIGNS.test(candidate) || (candidate.match(DIGIT_RUNS) ?? []).length > 2) return false;
  const letters = (candidate.match(LETTERS) ?? []).length;
  const inWords = (candidate.match(WORDS) ?? [])
    .filter((w) => VOWEL.test(w))
    .reduce((sum, w) => sum + w.length, 0);
  return inWords >= 0.6 * letters;
}

/** `wrapped`: the candidate is a line of wrapped base64 (see wrappedBase64), never a path. */
function generic(candidate: string, wrapped: boolean): boolean {
  return (
    UPPER.test(candidate) &&
    LOWER.test(candidate) &&
    DIGIT.test(candidate) &&
    !HEX.test(candidate) &&
    (wrapped || !pathLike(candidate)) &&
    !wordy(candidate)
  );
}

const unquote = (value: string) => (QUOTED.test(value) ? value.slice(1, -1) : value);
/** The marker in place of a value, inside the value's quotes if it had them. */
const requote = (value: string) =>
  value[0] === '"' || value[0] === "'" ? `${value[0]}${TOKEN_MARK}${value[0]}` : TOKEN_MARK;

export interface TokenContext {
  /** The JSON field the text is the value of: a digest's or an identifier's name makes it public. */
  field?: string;
  /** Whether text found base64-encoded holds nothing to redact (all the sanitizer's rules). */
  clean?: (decoded: string) => boolean;
}

/** How far back the name of a value is looked for (`"integrity": "`, `checksum = `). */
const LOOK_BACK = 64;

/** Whether a generic candidate at `offset` of `text` is a token to redact. */
function genericToken(
  candidate: string,
  offset: number,
  text: string,
  ctx: TokenContext,
  wrapped: boolean,
): boolean {
  if (!generic(candidate, wrapped) || documentedExample(candidate)) return false;
  if (alphabet(candidate) || publishable(candidate)) return false;
  const whole = offset === 0 && candidate.length === text.length;
  const before = text.slice(Math.max(0, offset - LOOK_BACK), offset);
  if (publicToken(candidate, before, whole ? ctx.field : undefined)) return false;
  const decoded = ctx.clean ? encodedText(candidate) : undefined;
  return decoded === undefined || !ctx.clean?.(decoded);
}

/**
 * The text with every token replaced by {@link TOKEN_MARK}. A pattern runs only where the text has
 * what it cannot match without (its prefix, an `=`, a `:`, 32 characters), which keeps the common
 * case of a short result with nothing to hide cheap.
 */
export function redactTokens(text: string, ctx: TokenContext = {}): string {
  let out = text;
  if (KNOWN_ANCHOR.test(out))
    for (const pattern of KNOWN) out = out.replace(pattern, (key) => (placeholder(key) ? key : TOKEN_MARK));
  out = out.replace(BEARER, (_, prefix: string) => `${prefix}${TOKEN_MARK}`);
  if (out.includes("=")) {
    out = out.replace(
      ASSIGNMENT,
      (match, name: string, eq: string, value: string, offset: number, whole: string) =>
        secretField(name) &&
        secretValue(unquote(value)) &&
        !codeAssignment(eq, value, whole.slice(offset + match.length, offset + match.length + 8))
          ? `${name}${eq}${requote(value)}`
          : match,
    );
  }
  if (out.includes(":")) {
    out = out.replace(
      QUOTED_PAIR,
      (match, q: string, name: string, sep: string, vq: string, value: string) =>
        secretField(name) && secretValue(value) ? `${q}${name}${q}${sep}${vq}${TOKEN_MARK}${vq}` : match,
    );
    out = out.replace(YAML_PAIR, (match, indent: string, name: string, sep: string, value: string) =>
      secretField(name) && secretValue(unquote(value)) && !codeMember(value)
        ? `${indent}${name}${sep}${TOKEN_MARK}`
        : match,
    );
  }
  if (out.length < 32) return out;
  const blocks = publicBlocks(out);
  const wrapped = out.includes("\n") ? wrappedBase64(out) : [];
  const inside = (ranges: [number, number][], offset: number) =>
    ranges.some(([start, end]) => offset >= start && offset < end);
  return out.replace(GENERIC, (candidate: string, offset: number, whole: string) =>
    !inside(blocks, offset) && genericToken(candidate, offset, whole, ctx, inside(wrapped, offset))
      ? TOKEN_MARK
      : candidate,
  );
}
