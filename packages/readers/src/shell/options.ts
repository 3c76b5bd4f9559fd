/**
 * A program's words read as its option parser reads them (getopt_long for most: clusters `-xzf`,
 * attached values `-Ish`, long options and their unique abbreviations `--compress-prog=sh`, `--`;
 * whole-word options for find and the like; tar's old-style first word `xIf`), with the table of
 * what each option does (programOptions.ts).
 */
import { type Field, UNKNOWN_MARK } from "./model.js";
import { type Effect, type OptionFact, PROGRAM_FACTS, type ProgramFacts } from "./programOptions.js";

interface OptionUse {
  /** The option as the table spells it (`--use-compress-program`, `-I`). */
  option: string;
  fact: OptionFact;
  /** What its value is (for `ssh -o Key=value`, what the key's value is). */
  does: Effect;
  /** Its value; undefined for a flag or an optional value not given. */
  value?: Field;
}

export interface OptionReading {
  uses: OptionUse[];
  /** Where the operands begin, for a program whose options end at the first one. */
  operands: number;
  /** A word known only at run time stands where an option may (`tar "$opt" ...`). */
  unknownOption: boolean;
}

/** The option syntax of a program: which options take a value. */
export interface OptionSyntax {
  short?: string;
  optional?: string;
  long?: readonly string[];
  optionalLong?: readonly string[];
  flags?: readonly string[];
  words?: boolean;
  stopAtOperand?: boolean;
  oldStyle?: boolean;
  options?: Readonly<Record<string, OptionFact>>;
}

interface Compiled {
  syntax: OptionSyntax;
  shortValued: Set<string>;
  shortOptional: Set<string>;
  longValued: Set<string>;
  longOptional: Set<string>;
  longKnown: string[];
}

const compiled = new WeakMap<OptionSyntax, Compiled>();

function compile(syntax: OptionSyntax): Compiled {
  let c = compiled.get(syntax);
  if (c) return c;
  const shortOptional = new Set(syntax.optional ?? "");
  const shortValued = new Set([...(syntax.short ?? "")].filter((l) => !shortOptional.has(l)));
  const longOptional = new Set(syntax.optionalLong ?? []);
  const longValued = new Set((syntax.long ?? []).filter((l) => !longOptional.has(l)));
  for (const [option, fact] of Object.entries(syntax.options ?? {})) {
    if (fact.does === "anywhere" || option === "+") continue;
    if (/^-[^-]$/.test(option) && !syntax.words) {
      if (!shortOptional.has(option[1] as string)) shortValued.add(option[1] as string);
    } else if (option.startsWith("--") && !longOptional.has(option.slice(2))) longValued.add(option.slice(2));
    else if (syntax.words) longValued.add(option.replace(/^--?/, ""));
  }
  const longKnown = [
    ...new Set([
      ...longValued,
      ...longOptional,
      ...(syntax.flags ?? []),
      ...Object.keys(syntax.options ?? {})
        .filter((o) => o.startsWith("--"))
        .map((o) => o.slice(2)),
    ]),
  ];
  c = { syntax, shortValued, shortOptional, longValued, longOptional, longKnown };
  compiled.set(syntax, c);
  return c;
}

/** A long option as getopt_long takes it: the exact name, or the one option the prefix names. */
function resolveLong(c: Compiled, name: string): string | undefined {
  if (c.longKnown.includes(name)) return name;
  const matches = c.longKnown.filter((k) => k.startsWith(name));
  return matches.length === 1 ? matches[0] : undefined;
}

function slice(f: Field, from: number): Field {
  return { ...f, text: f.text.slice(from) };
}

/**
 * Reads `args` (the words after the program's name) with the program's option syntax, calling
 * `use` for each option with its value. Returns where the operands begin (the first operand
 * when options stop there, else the end) and whether an unknown word may be an option.
 */
export function readOptions(
  syntax: OptionSyntax,
  args: readonly Field[],
  use: (option: string, value: Field | undefined, valued: boolean, at: number) => void,
  from = 0,
): { operands: number; unknownOption: boolean } {
  const c = compile(syntax);
  let unknownOption = false;
  let i = from;
  const first = args[i];
  if (syntax.oldStyle && first && !first.unknown && /^[A-Za-z]+$/.test(first.text)) {
    // `tar xIf sh a.tgz`: each letter that takes a value takes the next word, in order.
    let next = i + 1;
    for (const letter of first.text) {
      const valued = c.shortValued.has(letter);
      use(`-${letter}`, valued ? args[next] : undefined, valued, valued ? next++ : i);
    }
    i = next;
  }
  for (; i < args.length; i++) {
    const f = args[i] as Field;
    const w = f.text;
    if (f.unknown) {
      // A word only the run knows: the first operand where options end there, else maybe an option.
      if (syntax.stopAtOperand) return { operands: i, unknownOption: true };
      if (f.unknown.kind === "text" && (/^[-+]/.test(w) || w.startsWith(UNKNOWN_MARK))) unknownOption = true;
      continue;
    }
    if (w === "--") return { operands: i + 1, unknownOption };
    if (syntax.words && w.length > 1 && w.startsWith("-")) {
      const eq = w.indexOf("=");
      const name = (eq === -1 ? w : w.slice(0, eq)).replace(/^--?/, "");
      const option = syntax.options?.[`-${name}`] ? `-${name}` : `--${name}`;
      if (eq !== -1) use(option, slice(f, eq + 1), true, i);
      else if (c.longValued.has(name)) use(option, args[i + 1], true, ++i);
      else use(option, undefined, false, i);
      continue;
    }
    if (w.startsWith("--") && w.length > 2) {
      const eq = w.indexOf("=");
      const name = resolveLong(c, eq === -1 ? w.slice(2) : w.slice(2, eq));
      if (name === undefined) continue;
      if (eq !== -1) use(`--${name}`, slice(f, eq + 1), true, i);
      else if (c.longValued.has(name)) use(`--${name}`, args[i + 1], true, ++i);
      else use(`--${name}`, undefined, false, i);
      continue;
    }
    if (w.startsWith("-") && w.length > 1) {
      for (let j = 1; j < w.length; j++) {
        const letter = w[j] as string;
        if (c.shortOptional.has(letter)) {
          use(`-${letter}`, j + 1 < w.length ? slice(f, j + 1) : undefined, j + 1 < w.length, i);
          break;
        }
        if (c.shortValued.has(letter)) {
          if (j + 1 < w.length) use(`-${letter}`, slice(f, j + 1), true, i);
          else use(`-${letter}`, args[i + 1], true, ++i);
          break;
        }
        use(`-${letter}`, undefined, false, i);
      }
      continue;
    }
    if (w.startsWith("+") && syntax.options?.["+"]) {
      use("+", slice(f, 1), true, i);
      continue;
    }
    if (syntax.stopAtOperand) return { operands: i, unknownOption };
  }
  return { operands: args.length, unknownOption };
}

/** What `name`'s options hand it to run, read and write, by the table. */
export function optionUses(name: string, args: readonly Field[]): OptionReading {
  const facts: ProgramFacts | undefined = Object.hasOwn(PROGRAM_FACTS, name)
    ? PROGRAM_FACTS[name]
    : undefined;
  if (!facts) return { uses: [], operands: args.length, unknownOption: false };
  const uses: OptionUse[] = [];
  const { operands, unknownOption } = readOptions(facts, args, (option, value) => {
    const fact = facts.options[option];
    if (!fact) return;
    if (fact.keys) {
      if (!value) return;
      const key = settingKey(value);
      const does = key === undefined ? undefined : fact.keys[key.name.toLowerCase()];
      if (does) uses.push({ option: `${option} ${key?.name}`, fact, does, value: key?.value });
      else if (value.unknown && key === undefined) uses.push({ option, fact, does: "code", value });
      return;
    }
    if (fact.prefix !== undefined) {
      if (!value || value.unknown || !value.text.startsWith(fact.prefix)) {
        if (value?.unknown) uses.push({ option, fact, does: fact.does, value });
        return;
      }
      uses.push({ option, fact, does: fact.does, value: slice(value, fact.prefix.length) });
      return;
    }
    uses.push({ option, fact, does: fact.does, ...(value ? { value } : {}) });
  });
  return { uses, operands, unknownOption };
}

/** `Key=value` or `Key value` (ssh's `-o`): the key and its value. */
function settingKey(value: Field): { name: string; value: Field } | undefined {
  const m = /^\s*([A-Za-z0-9]+)(\s*=\s*|\s+)/.exec(value.text);
  if (!m) return undefined;
  return { name: m[1] as string, value: slice(value, m[0].length) };
}

/**
 * A program's words by its table: the options with their values (long names as `--name`, short
 * ones as `-x`), and the operands (every word that is neither an option nor an option's value,
 * all words after `--` included). Undefined for a program the table does not know.
 */
export function programWords(
  name: string,
  args: readonly Field[],
): { options: { option: string; value: Field | undefined }[]; operands: Field[] } | undefined {
  const facts = Object.hasOwn(PROGRAM_FACTS, name) ? PROGRAM_FACTS[name] : undefined;
  if (!facts) return undefined;
  const options: { option: string; value: Field | undefined }[] = [];
  const taken = new Set<number>();
  const { operands: end } = readOptions(facts, args, (option, value, valued, at) => {
    options.push({ option, value });
    if (valued && value !== undefined && args[at] === value) taken.add(at);
  });
  const operands: Field[] = [];
  let dashdash = -1;
  args.forEach((f, i) => {
    if (taken.has(i)) return;
    if (dashdash === -1 && f.text === "--" && !f.unknown) {
      dashdash = i;
      return;
    }
    const option = dashdash === -1 && i < end && !f.unknown && f.text.length > 1 && f.text.startsWith("-");
    if (!option) operands.push(f);
  });
  return { options, operands };
}

/** Whether the table says `name` has an option that runs something. */
export function runsThroughOptions(name: string): boolean {
  const facts = Object.hasOwn(PROGRAM_FACTS, name) ? PROGRAM_FACTS[name] : undefined;
  if (!facts) return false;
  return Object.values(facts.options).some((f) => f.does !== "read" && f.does !== "write") || !!facts.input;
}
