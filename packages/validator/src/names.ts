/**
 * Names as people compare them. A tool's name is compared with the names pinned for its server
 * and for the other servers of a client config (proxy pins.ts), and named tools in a listing's
 * text are compared with both: a person reading `send_emaіl` (Cyrillic і), `ｓｅｎｄ_email`
 * (full-width), `send_email` in NFD, `Send_Email` or `send_emai\u200Bl` reads `send_email`.
 *
 * Two names are the same name when one of their keys is equal ({@link nameKeys}): the key is the
 * name without default-ignorable code points (variation selectors, tag characters, ZWJ/ZWNJ, the
 * rest of Unicode's Default_Ignorable_Code_Point), in NFKC, then its confusable skeleton (Unicode
 * Technical Standard #39: each character replaced by the prototype of its class of look-alikes,
 * from Unicode's confusables.txt, data/README.md), with case folded before the skeleton (so that
 * `Send_Email` is `send_email`) in one key and after it in the other (so that a capital I and a
 * small l, which the skeleton joins and folding case would part, stay one).
 *
 * The same data folds look-alike letters in text for the agent ({@link foldLookalikes}): a word
 * that mixes Latin with Cyrillic or Greek letters shaped like Latin ones is read as the Latin word.
 */
import { CONFUSABLES } from "./confusablesData.js";

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const NON_ASCII = /[\u0080-\u{10FFFF}]/u;

let prototypes: Map<number, string> | undefined;

/** The confusables table, read from its compact form once (about 6,500 entries). */
function table(): Map<number, string> {
  if (prototypes) return prototypes;
  const map = new Map<number, string>();
  for (const entry of CONFUSABLES.split(",")) {
    const [from, to] = entry.split(">") as [string, string];
    map.set(
      Number.parseInt(from, 16),
      String.fromCodePoint(...to.split(".").map((hex) => Number.parseInt(hex, 16))),
    );
  }
  prototypes = map;
  return map;
}

/** The text without default-ignorable code points (they render as nothing). */
function withoutIgnorables(text: string): string {
  return text.replace(IGNORABLE, "");
}

/**
 * The confusable skeleton of UTS #39: default-ignorable code points removed, NFD, every code point
 * replaced by its prototype, NFD again. Two strings with one skeleton look alike; a skeleton is
 * for comparing, never for showing (`m` becomes `rn`).
 */
export function skeleton(text: string): string {
  const map = table();
  let out = "";
  for (const ch of withoutIgnorables(text).normalize("NFD"))
    out += map.get(ch.codePointAt(0) as number) ?? ch;
  return out.normalize("NFD");
}

/** Case folded: upper then lower case, so that `ß` and `SS`, `ς` and `Σ` fold alike. */
const folded = (text: string) => text.toUpperCase().toLowerCase();

/**
 * The two keys of a name (see the module's comment): equal on either, two names read as one.
 * Without default-ignorables and in NFKC, then folded and skeletoned, or skeletoned and folded.
 */
export function nameKeys(name: string): readonly [string, string] {
  const plain = withoutIgnorables(name).normalize("NFKC");
  return [folded(skeleton(folded(plain))), folded(skeleton(plain))];
}

/** Whether two names read as one. */
export function sameName(a: string, b: string): boolean {
  const [a1, a2] = nameKeys(a);
  const [b1, b2] = nameKeys(b);
  return a1 === b1 || a2 === b2;
}

/** Values kept by name, found by any name that reads as theirs; the first value of a key stays. */
export class NameIndex<T> {
  readonly #byKey = new Map<string, T>();
  readonly #byShape = new Map<string, T>();
  #size = 0;

  constructor(entries: Iterable<readonly [string, T]> = []) {
    for (const [name, value] of entries) this.set(name, value);
  }

  get size(): number {
    return this.#size;
  }

  set(name: string, value: T): void {
    const [key, shape] = nameKeys(name);
    if (!this.#byKey.has(key)) this.#byKey.set(key, value);
    if (!this.#byShape.has(shape)) this.#byShape.set(shape, value);
    this.#size += 1;
  }

  /** The value of a name that reads as `name`, if any. */
  find(name: string): T | undefined {
    const [key, shape] = nameKeys(name);
    return this.#byKey.get(key) ?? this.#byShape.get(shape);
  }

  has(name: string): boolean {
    return this.find(name) !== undefined;
  }
}

/** A set of names that holds every name that reads as one of its own (a NameSet for scans). */
export class NameKeys {
  readonly #index: NameIndex<true>;

  constructor(names: Iterable<string> = []) {
    this.#index = new NameIndex([...names].map((name) => [name, true] as const));
  }

  add(name: string): void {
    this.#index.set(name, true);
  }

  has(name: string): boolean {
    return this.#index.has(name);
  }

  get size(): number {
    return this.#index.size;
  }
}

/** ASCII punctuation a look-alike may stand for in a path or an address. */
const PATH_SYNTAX = /^[/\\.~_$@:-]$/;
let lookalikes: Map<number, string> | undefined;

/**
 * Non-ASCII code points that look like an ASCII letter (or path syntax), with that letter: from the
 * prototypes, choosing among the ASCII members of a class the one of the same case (Cyrillic `І`
 * is `I`, its small `і` is `i`, though both classes' prototype is `l` and `i`).
 */
function lookalikeTable(): Map<number, string> {
  if (lookalikes) return lookalikes;
  const map = table();
  const members = new Map<string, string[]>();
  const add = (prototype: string, ch: string) => {
    const list = members.get(prototype) ?? [];
    if (!list.includes(ch)) list.push(ch);
    members.set(prototype, list);
  };
  for (const [cp, prototype] of map) {
    if (/^[A-Za-z]$/.test(prototype) || PATH_SYNTAX.test(prototype)) add(prototype, prototype);
    if (cp < 0x80 && /^[A-Za-z]$/.test(String.fromCharCode(cp))) add(prototype, String.fromCharCode(cp));
  }
  const result = new Map<number, string>();
  for (const [cp, prototype] of map) {
    if (cp < 0x80) continue;
    const ascii = members.get(prototype);
    if (!ascii) continue;
    const ch = String.fromCodePoint(cp);
    const upper = ch !== ch.toLowerCase();
    const letters = ascii.filter((m) => /^[A-Za-z]$/.test(m));
    const pick =
      letters.find((m) => (m !== m.toLowerCase()) === upper) ??
      letters[0] ??
      ascii.find((m) => PATH_SYNTAX.test(m));
    if (pick) result.set(cp, pick);
  }
  lookalikes = result;
  return result;
}

const WORD = /[\p{L}\p{M}]+|[^\p{L}\p{M}\p{N}\s\p{ASCII}]/gu;
const LETTER = /\p{L}/u;
const ASCII_LETTERS = /^[A-Za-z]+$/;
/** Whether a code point is a letter, remembered (a long text repeats few of them). */
const letters = new Map<number, boolean>();
function isLetter(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  let known = letters.get(cp);
  if (known === undefined) {
    known = LETTER.test(String.fromCodePoint(cp));
    if (letters.size < 65_536) letters.set(cp, known);
  }
  return known;
}

/**
 * The text with look-alike letters read as the Latin letters they pass for, in every word that
 * holds a Latin letter or is made of look-alikes only (`rеаd` with Cyrillic е and а, `ехес`), and
 * look-alikes of path syntax (`∕` for `/`) everywhere. A word of Russian or Greek that holds a
 * letter unlike any Latin one stays as written.
 */
export function foldLookalikes(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  const map = lookalikeTable();
  return text.replace(WORD, (word) => {
    if (!NON_ASCII.test(word)) return word;
    const first = word.codePointAt(0) as number;
    if (word.length <= 2 && String.fromCodePoint(first) === word && !isLetter(first)) {
      const ascii = map.get(first);
      return ascii && PATH_SYNTAX.test(ascii) ? ascii : word;
    }
    let count = 0;
    let mapped = 0;
    let latin = false;
    for (const ch of word) {
      const cp = ch.codePointAt(0) as number;
      if (!isLetter(cp)) continue;
      count += 1;
      if (cp < 0x80) latin = true;
      else if (ASCII_LETTERS.test(map.get(cp) ?? "")) mapped += 1;
    }
    if (mapped === 0 || !(latin || mapped === count)) return word;
    let out = "";
    for (const ch of word) {
      const ascii = map.get(ch.codePointAt(0) as number);
      out += ascii && ASCII_LETTERS.test(ascii) ? ascii : ch;
    }
    return out;
  });
}
