/**
 * Words as the shell expands them: quoting, tilde, parameters, arithmetic, command and process
 * substitution, field splitting and glob patterns. A word gives one or more *ways* (the values it
 * may take: a loop variable over three words gives three, `$'...'` gives bash's and dash's), each
 * a list of fields. What only the shell knows at run time stays in the field as an {@link Unknown}.
 */
import type { ShNode } from "./grammar.js";
import { NestedParseError } from "./limits.js";
import type { Field, Seg, Unknown, Ways } from "./model.js";
import { UNKNOWN_MARK } from "./model.js";
import { MAX_WAYS, type Scope, waysOf } from "./scope.js";
import { decodeAnsiC, doubleQuoted, expandBraces, MAX_BRACE_WORDS, unquoted } from "./text.js";
import type { Walker } from "./walker.js";

/** A piece of a word before fields are made of it. */

/**
 * How a word is quoted: not (`false`), inside double quotes, the body of an expanding
 * here-document, or taken as it stands (a here-document whose delimiter is quoted).
 */
export type Quote = false | "double" | "heredoc" | "raw";

const TOO_MANY: Unknown = { kind: "text", origin: "a word with too many possible values" };

/** Every way `word` may expand, each a list of fields. */
export function expandWord(r: Walker, word: ShNode, scope: Scope): Field[][] {
  const braces = braceWays(r, word, scope);
  if (braces) return braces;
  const ways = partsWays(r, word.Parts as ShNode[], scope, false);
  return ways.map((segs) => toFields(segs, ifsOf(scope)));
}

/** The single-field value of a word in a place where the shell makes no fields (assignment, redirect, case). */
export function wordValues(r: Walker, word: ShNode, scope: Scope, quote: Quote = false): Field[] {
  const ways = partsWays(r, word.Parts as ShNode[], scope, quote);
  return ways.map((segs) => joinSegs(segs));
}

/** The text of a word made only of literal parts and quotes, or undefined. */
export function literalWord(r: Walker, word: ShNode | null | undefined): string | undefined {
  if (!word || r.g.type(word) !== "Word") return undefined;
  let out = "";
  for (const part of word.Parts as ShNode[]) {
    const type = r.g.type(part);
    if (type === "Lit") out += unquoted(part.Value).text;
    else if (type === "SglQuoted" && !part.Dollar) out += part.Value;
    else if (type === "DblQuoted" && !part.Dollar) {
      for (const inner of part.Parts as ShNode[]) {
        if (r.g.type(inner) !== "Lit") return undefined;
        out += doubleQuoted(inner.Value, false);
      }
    } else return undefined;
  }
  return out;
}

function ifsOf(scope: Scope): string {
  const value = scope.vars.get("IFS");
  if (value?.kind === "scalar" && value.ways.length === 1 && !value.ways[0]?.unknown) {
    return value.ways[0]?.text ?? " \t\n";
  }
  return " \t\n";
}

/**
 * bash's brace expansion, done on the word's text before anything else: each unquoted literal
 * part with a `{a,b}` or `{1..3}` takes each of its values, and the word becomes one word per
 * combination (`{a,}''` is `a` and an empty word; a plain `{a,}` only `a`, the empty one making no
 * field). dash has none: its way is the word as it stands. A brace that spans quoted parts
 * (`{a,"b c"}`) is not followed: bash's way is unknown.
 */
function braceWays(r: Walker, word: ShNode, scope: Scope): Field[][] | undefined {
  const parts = word.Parts as ShNode[];
  const lits = parts.map((p) => (r.g.type(p) === "Lit" ? (p.Value as string) : undefined));
  if (!lits.some((raw) => raw?.includes("{"))) return undefined;
  const values = lits.map((raw) => (raw === undefined ? undefined : expandBraces(raw)));
  const changes = values.some((v, i) => lits[i] !== undefined && !(v?.length === 1 && v[0] === lits[i]));
  const spans = parts.length > 1 && bracesSpan(lits);
  if (!changes && !spans) return undefined;
  const ifs = ifsOf(scope);
  let bash: Field[][] | undefined;
  const combos = values.reduce((n, v) => n * (v?.length ?? 1), 1);
  if (!spans && values.every((v, i) => lits[i] === undefined || v) && combos <= MAX_BRACE_WORDS) {
    // Every combination of the literal parts' values, each read as a word of its own.
    let choices: Map<number, string>[] = [new Map()];
    values.forEach((v, i) => {
      if (!v) return;
      choices = choices.flatMap((c) => v.map((text) => new Map([...c, [i, text]])));
    });
    const words = choices.map((override) =>
      partsWays(r, parts, scope, false, override).map((segs) => toFields(segs, ifs)),
    );
    const count = words[0]?.length ?? 0;
    if (words.every((w) => w.length === count))
      bash = [...Array(count).keys()].map((k) => words.flatMap((w) => w[k] as Field[]));
  }
  bash ??= [[{ text: UNKNOWN_MARK, unknown: { kind: "text", origin: "a brace expansion bash makes" } }]];
  if (scope.dialect === "bash") return bash;
  const dash = partsWays(r, parts, scope, false).map((segs) => toFields(segs, ifs));
  return [...dash, ...bash];
}

/**
 * A redirection's word as bash reads it: brace expansion too, the file where it makes one word
 * (`> {a,}x` names ax or x, an error; `>> {a,}` names a).
 */
export function braceTargets(r: Walker, word: ShNode, scope: Scope): Field[] {
  return (braceWays(r, word, scope) ?? []).filter((way) => way.length === 1).map((way) => way[0] as Field);
}

/** Whether a `{` of one literal part may close in a later one, across quoted parts. */
function bracesSpan(lits: readonly (string | undefined)[]): boolean {
  let open = 0;
  for (const raw of lits) {
    if (raw === undefined) continue;
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] === "\\") i++;
      else if (raw[i] === "{") open++;
      else if (raw[i] === "}" && open > 0) {
        open--;
        if (open === 0 && !raw.slice(0, i).includes("{")) return true;
      }
    }
  }
  return false;
}

/** The ways of a list of parts: the cross product of each part's ways, at most {@link MAX_WAYS}. */
export function partsWays(
  r: Walker,
  parts: ShNode[],
  scope: Scope,
  quote: Quote,
  /** Literal parts read with another text (a value of bash's brace expansion). */
  override?: ReadonlyMap<number, string>,
): Ways {
  let ways: Ways = [[]];
  const quoted = quote !== false;
  parts.forEach((part, i) => {
    const text = override?.get(i);
    const options =
      text === undefined
        ? partWays(r, part, scope, quote, i === 0, i === parts.length - 1)
        : [litSegs(r, text, scope, quote, i === 0, i === parts.length - 1)];
    if (options.length === 1) {
      // One way (most parts): appended to each way in place, so a word of many parts costs its
      // length, not its length squared (the ways are this function's own arrays).
      const option = options[0] as Ways[number];
      for (const way of ways) for (const seg of option) way.push(seg);
      return;
    }
    const next: Ways = [];
    for (const way of ways) for (const option of options) next.push([...way, ...option]);
    ways = next.length > MAX_WAYS ? [[{ text: UNKNOWN_MARK, unknown: TOO_MANY, quoted }]] : next;
  });
  return ways;
}

function partWays(r: Walker, part: ShNode, scope: Scope, quote: Quote, first: boolean, last = true): Ways {
  r.step();
  const quoted = quote !== false;
  switch (r.g.type(part)) {
    case "Lit":
      return [litSegs(r, part.Value, scope, quote, first, last)];
    case "SglQuoted":
      return sglQuoted(part, scope);
    case "DblQuoted": {
      const inner = partsWays(r, part.Parts as ShNode[], scope, "double");
      const ways = inner.map((segs) => (segs.length === 0 ? [{ text: "", quoted: true }] : segs));
      if (!part.Dollar || scope.dialect === "bash") return ways;
      // dash reads `$"..."` as a `$` and a double-quoted string.
      return [...ways, ...ways.map((segs) => [{ text: "$", quoted: true }, ...segs])];
    }
    case "ParamExp":
      return r.param(part, scope, quoted);
    case "CmdSubst": {
      const unknown = r.substitution(part.Stmts as ShNode[], scope);
      return [[{ text: unknown.kind === "number" ? "0" : UNKNOWN_MARK, unknown, quoted, split: !quoted }]];
    }
    case "ArithmExp":
      r.arithmetic(part.X, scope);
      return [[{ text: "0", unknown: { kind: "number", origin: "arithmetic" }, quoted }]];
    case "ProcSubst": {
      const producers = r.processSubstitution(part.Stmts as ShNode[], scope);
      const unknown: Unknown = { kind: "stream", origin: "a process substitution", producers };
      return [[{ text: "/dev/fd/63", quoted: true, unknown }]];
    }
    case "ExtGlob":
      return [[{ text: `@(${part.Pattern?.Value ?? ""})`, quoted, glob: true }]];
    default:
      return [
        [
          {
            text: UNKNOWN_MARK,
            unknown: { kind: "text", origin: "an expansion the reader does not know" },
            quoted,
          },
        ],
      ];
  }
}

function sglQuoted(part: ShNode, scope: Scope): Ways {
  const raw = part.Value as string;
  if (!part.Dollar) return [[{ text: raw, quoted: true }]];
  // In dash `$'a\'b'` is `$`, `'a\'` and the start of another quoted string: the rest of the line
  // is not the one bash reads.
  if (scope.dialect === "posix" && /(?:^|[^\\])(?:\\\\)*\\'/.test(raw))
    throw new NestedParseError(
      "$'...' holds \\', which ends the string in dash: the line reads otherwise there",
    );
  const bash: Seg[] = [{ text: decodeAnsiC(raw), quoted: true }];
  if (scope.dialect === "bash") return [bash];
  // dash has no ANSI-C quoting: `$'\x2f'` is a `$` and the four characters `\x2f`.
  return [bash, [{ text: `$${raw}`, quoted: true }]];
}

function litSegs(r: Walker, raw: string, scope: Scope, quote: Quote, first: boolean, last: boolean): Seg[] {
  if (quote === "raw") return [{ text: raw, quoted: true }];
  if (quote !== false) return [{ text: doubleQuoted(raw, quote === "heredoc"), quoted: true }];
  // A tilde prefix runs to the first slash and is all unquoted literal text: `~"x"`, `~$v` and
  // `~\/` stay as they are.
  const slash = raw.indexOf("/");
  const prefix = slash === -1 ? raw : raw.slice(0, slash);
  if (first && raw.startsWith("~") && !prefix.includes("\\") && (slash !== -1 || last)) {
    const user = slash === -1 ? raw.slice(1) : raw.slice(1, slash);
    const rest = unquoted(slash === -1 ? "" : raw.slice(slash));
    const home = tildeValue(r, user, scope);
    return [home, { text: rest.text, quoted: false, glob: rest.glob }];
  }
  const u = unquoted(raw);
  return [{ text: u.text, quoted: false, glob: u.glob }];
}

function tildeValue(r: Walker, user: string, scope: Scope): Seg {
  // `~` is HOME as the line has it: its own assignment (`HOME=/etc; cat ~/passwd`) when it made one.
  const assigned = scope.vars.get("HOME");
  if (user === "" && assigned) {
    const ways = waysOf(assigned);
    const only = ways.length === 1 ? ways[0] : undefined;
    if (only && !only.unknown && !only.pattern && only.text.startsWith("/"))
      return { text: only.text, quoted: true };
    return {
      text: UNKNOWN_MARK,
      quoted: true,
      unknown: { kind: "text", origin: "HOME as the line sets it" },
    };
  }
  if (user === "" && r.ctx.home) return { text: r.ctx.home, quoted: true };
  if (user === "+" && scope.cwd && scope.cwdElse === undefined) return { text: scope.cwd, quoted: true };
  return {
    text: UNKNOWN_MARK,
    quoted: true,
    unknown: { kind: "text", origin: user ? `the home directory of ${user}` : "HOME, which is not set" },
  };
}

/** Fields of one way: unquoted expansions split on IFS; an empty unquoted expansion makes no field. */
function toFields(segs: readonly Seg[], ifs: string): Field[] {
  const fields: Field[] = [];
  let cur: Field | undefined;
  const push = () => {
    if (cur) fields.push(cur);
    cur = undefined;
  };
  for (const seg of segs) {
    if (seg.boundary) push();
    if (seg.split && !seg.unknown) {
      for (const ch of seg.text) {
        if (ifs.includes(ch)) push();
        else cur = append(cur, { text: ch, quoted: false, glob: seg.glob });
      }
      continue;
    }
    if (seg.text === "" && !seg.quoted && !seg.unknown) continue;
    cur = append(cur, seg);
  }
  push();
  return fields;
}

function joinSegs(segs: readonly Seg[]): Field {
  let cur: Field = { text: "" };
  for (const seg of segs) cur = append(cur, seg);
  return cur;
}

function append(cur: Field | undefined, seg: Seg): Field {
  const field: Field = cur ? { ...cur } : { text: "" };
  const before = field.text;
  field.text += seg.text;
  if (seg.glob) field.pattern = true;
  if (seg.unknown || field.unknown) field.unknown = combine(field.unknown, seg, before);
  return field;
}

/** What is known of a field after appending `seg` to text `before`. */
function combine(have: Unknown | undefined, seg: Seg, before: string): Unknown {
  const next = seg.unknown;
  if (have && next) {
    if (have.kind === "number" && next.kind === "number") return have;
    return textUnknown(have, next);
  }
  if (next) {
    if (next.kind === "number") return next;
    if ((next.kind === "within" || next.kind === "stream") && before === "") return next;
    return textUnknown(next);
  }
  const known = have as Unknown;
  // Digits never change a directory; a name in a directory stays in it unless a `..` follows.
  if (known.kind === "number") return known;
  if (known.kind === "within" && !seg.text.includes("..")) return known;
  return textUnknown(known);
}

function textUnknown(a: Unknown, b?: Unknown): Unknown {
  const producers = [...(a.producers ?? []), ...(b?.producers ?? [])];
  return {
    kind: "text",
    origin: a.kind === "text" ? a.origin : (b?.origin ?? a.origin),
    ...(producers.length ? { producers } : {}),
  };
}
