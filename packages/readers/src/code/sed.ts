/**
 * sed scripts, read command by command: GNU sed can run a command (`e`, the `e` flag of `s`),
 * read a file (`r`, `R`) and write one (`w`, `W`, the `w` flag of `s`, and `-i` its input files).
 * Files are returned for L1's path checks under every config; running a command is refused where
 * the kernel does not confine programs (C-app), and so is a script sed reads from a file. Options
 * and labels are read as GNU sed reads them; sedDifferential.test.ts holds the reader to GNU sed.
 */
import type { Confinement } from "../confinement.js";
import type { Field } from "../shell/index.js";
import { STANDARD_STREAMS } from "./awk.js";
import { type CodeUse, emptyUse } from "./use.js";

interface SedEffects {
  executes: boolean;
  reads: string[];
  writes: string[];
}

class SedError extends Error {}

/** GNU sed's long options (getopt_long takes any unambiguous prefix), and what value each takes. */
const LONG_OPTIONS: Record<string, "none" | "required" | "optional"> = {
  expression: "required",
  file: "required",
  "in-place": "optional",
  "line-length": "required",
  quiet: "none",
  silent: "none",
  "null-data": "none",
  "zero-terminated": "none",
  separate: "none",
  unbuffered: "none",
  "regexp-extended": "none",
  posix: "none",
  debug: "none",
  sandbox: "none",
  "follow-symlinks": "none",
  binary: "none",
  help: "none",
  version: "none",
};
/** Short options without a value; -e, -f and -l take one, -i an optional one attached. */
const SHORT_FLAGS = new Set(["n", "r", "E", "s", "u", "z", "b"]);

interface SedWords {
  /** The scripts in order, as sed joins them (with newlines); `undefined` for one read from a file. */
  scripts: (Field | undefined)[];
  /** -i's suffix ("" without one), when sed edits its files in place. */
  inPlace?: string;
  /** Why the options cannot be read, if they cannot. */
  problem?: string;
  /** Index of the first operand. */
  operands: number;
}

/** sed's options as getopt_long reads them: clusters (-nE), attached values (-e1d, -fprog), -i's optional suffix, prefixes of long options. */
function readWords(argv: Field[], use: CodeUse): SedWords {
  const w: SedWords = { scripts: [], operands: argv.length };
  let i = 1;
  const script = (field: Field | undefined, index: number) => {
    use.codeOperands.add(index);
    w.scripts.push(field);
  };
  for (; i < argv.length; i++) {
    const f = argv[i] as Field;
    const word = f.text;
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    if (f.unknown) return { ...w, problem: "takes an option known only at run time" };
    if (word.startsWith("--")) {
      const [given = "", value] = word.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const names = Object.keys(LONG_OPTIONS).filter((n) => n.startsWith(given));
      const name = names.includes(given) ? given : names.length === 1 ? names[0] : undefined;
      if (name === undefined)
        return { ...w, problem: `takes the option --${given}, which sed does not know` };
      const kind = LONG_OPTIONS[name];
      const take = (): Field | undefined => (value !== undefined ? { ...f, text: value } : argv[++i]);
      if (name === "expression") script(take(), value !== undefined ? i : i + 1);
      else if (name === "file") {
        take();
        w.scripts.push(undefined);
      } else if (name === "in-place") w.inPlace = value ?? "";
      else if (kind === "required") take();
      continue;
    }
    // A cluster of short options: a value-taking option takes the rest of the word, or the next word.
    for (let k = 1; k < word.length; k++) {
      const c = word[k] as string;
      if (SHORT_FLAGS.has(c)) continue;
      if (c === "i") {
        w.inPlace = word.slice(k + 1);
        break;
      }
      if (c === "e" || c === "f" || c === "l") {
        const rest = word.slice(k + 1);
        const value = rest !== "" ? { ...f, text: rest } : argv[++i];
        if (c === "e") script(value, i);
        else if (c === "f") w.scripts.push(undefined);
        break;
      }
      return { ...w, problem: `takes the option -${c}, which sed does not know` };
    }
  }
  if (w.scripts.length === 0 && argv[i]) {
    script(argv[i], i);
    i++;
  }
  w.operands = i;
  return w;
}

export function sedUse(argv: Field[], confined: Confinement): CodeUse {
  const use = emptyUse();
  const w = readWords(argv, use);
  const strict = !confined.exec;
  if (w.problem) return strict ? { ...use, refusal: `sed ${w.problem}` } : use;
  if (w.inPlace !== undefined) {
    const why = inPlaceFiles(argv.slice(w.operands), w.inPlace, use);
    if (why && !confined.files) return { ...use, refusal: `sed -i ${why}` };
  }
  if (w.scripts.includes(undefined) && strict)
    return { ...use, refusal: "sed reads its script from a file, which is not part of the call" };
  const known = w.scripts.filter((f): f is Field => f !== undefined);
  const unknown = known.find((f) => f.unknown);
  if (unknown?.unknown) {
    return strict
      ? { ...use, refusal: `the sed script holds ${unknown.unknown.origin}, known only at run time` }
      : use;
  }
  let effects: SedEffects;
  try {
    // sed joins its -e scripts with newlines and reads them as one: `-e 'a\' -e 'e id'` appends "e id".
    effects = readSed(known.map((f) => f.text).join("\n"));
  } catch (error) {
    if (!(error instanceof SedError)) throw error;
    return strict ? { ...use, refusal: `the sed script does not parse: ${error.message}` } : use;
  }
  for (const path of effects.reads) use.files.push({ path, access: "read" });
  for (const path of effects.writes)
    if (!STANDARD_STREAMS.has(path)) use.files.push({ path, access: "write" });
  if (effects.executes && strict) return { ...use, refusal: "the sed script runs a command (e)" };
  return use;
}

/**
 * sed -i rewrites each input file, and with a suffix keeps the old one beside it (GNU sed: each
 * `*` of the suffix is the file's name, and a suffix without `/` names a file in the same folder).
 */
function inPlaceFiles(operands: Field[], suffix: string, use: CodeUse): string | undefined {
  for (const f of operands) {
    if (f.unknown) return "edits a file named only at run time";
    if (f.text === "-") continue;
    use.files.push({ path: f.text, access: "write" });
    if (suffix === "") continue;
    const slash = f.text.lastIndexOf("/");
    const [dir, base] = slash === -1 ? ["", f.text] : [f.text.slice(0, slash + 1), f.text.slice(slash + 1)];
    const backup = suffix.includes("*") ? suffix.replaceAll("*", base) : base + suffix;
    use.files.push({ path: backup.includes("/") ? backup : dir + backup, access: "write" });
  }
  return undefined;
}

/** What a sed script does beyond editing its input. */
export function readSed(script: string): SedEffects {
  const effects: SedEffects = { executes: false, reads: [], writes: [] };
  const s = new SedScanner(script);
  for (;;) {
    s.skip(" \t\n;");
    if (s.done()) return effects;
    if (s.peek() === "#") {
      s.toEndOfLine();
      continue;
    }
    if (s.peek() === "}") {
      s.next();
      continue;
    }
    s.address();
    s.skip(" \t");
    if (s.peek() === ",") {
      s.next();
      s.skip(" \t");
      s.address();
    }
    s.skip(" \t");
    while (s.peek() === "!") {
      s.next();
      s.skip(" \t");
    }
    command(s, s.next(), effects);
  }
}

function command(s: SedScanner, cmd: string, effects: SedEffects): void {
  if ("{=dDgGhHnNpPxzF".includes(cmd)) return;
  if (":btT".includes(cmd)) {
    s.label();
    return;
  }
  if ("aic".includes(cmd)) {
    s.text();
    return;
  }
  if ("rR".includes(cmd)) {
    effects.reads.push(s.filename());
    return;
  }
  if ("wW".includes(cmd)) {
    effects.writes.push(s.filename());
    return;
  }
  if (cmd === "e") {
    effects.executes = true;
    s.toEndOfLine();
    return;
  }
  if ("lLqQv".includes(cmd)) {
    s.skip(" \t");
    s.skipWhile(/[0-9.]/);
    return;
  }
  if (cmd === "s") {
    substitute(s, effects);
    return;
  }
  if (cmd === "y") {
    const delim = s.next();
    s.until(delim);
    s.until(delim);
    return;
  }
  throw new SedError(`unknown command ${JSON.stringify(cmd)}`);
}

function substitute(s: SedScanner, effects: SedEffects): void {
  const delim = s.next();
  if (delim === "" || delim === "\n" || delim === "\\") throw new SedError("s has no delimiter");
  s.until(delim);
  s.until(delim);
  for (;;) {
    const flag = s.peek();
    if (flag === "e") {
      effects.executes = true;
      s.next();
    } else if (flag === "w") {
      s.next();
      effects.writes.push(s.filename());
      return;
    } else if (flag !== "" && /[gpiImM0-9]/.test(flag)) s.next();
    else return;
  }
}

class SedScanner {
  #i = 0;
  constructor(readonly src: string) {}

  done(): boolean {
    return this.#i >= this.src.length;
  }
  peek(): string {
    return this.src[this.#i] ?? "";
  }
  next(): string {
    if (this.done()) throw new SedError("the script ends in the middle of a command");
    return this.src[this.#i++] as string;
  }
  skip(chars: string): void {
    while (!this.done() && chars.includes(this.peek())) this.#i++;
  }
  skipWhile(re: RegExp): void {
    while (!this.done() && re.test(this.peek())) this.#i++;
  }
  toEndOfLine(): string {
    const start = this.#i;
    while (!this.done() && this.peek() !== "\n") this.#i++;
    return this.src.slice(start, this.#i);
  }
  /** Text up to an unescaped `delim`, which is consumed. */
  until(delim: string): void {
    for (;;) {
      const ch = this.next();
      if (ch === "\\") this.next();
      else if (ch === delim) return;
      else if (ch === "\n" && delim !== "\n") throw new SedError("a regex or replacement runs past its line");
    }
  }
  address(): void {
    const ch = this.peek();
    if (/[0-9]/.test(ch)) this.skipWhile(/[0-9~]/);
    else if (ch === "$") this.next();
    else if (ch === "+" || ch === "~") {
      this.next();
      this.skipWhile(/[0-9]/);
    } else if (ch === "/" || ch === "\\") {
      if (ch === "\\") this.next();
      const delim = this.next();
      this.until(delim);
      this.skipWhile(/[IM]/);
    }
  }
  /** A label of :, b, t or T: GNU sed ends it at whitespace or `;` (`:x e id` is a label and an e). */
  label(): string {
    this.skip(" \t");
    const start = this.#i;
    while (!this.done() && !"; \t\n".includes(this.peek())) this.#i++;
    return this.src.slice(start, this.#i);
  }
  /** `a text`, `a\` and its lines, with backslash-newline continuing the text. */
  text(): void {
    while (!this.done()) {
      const ch = this.next();
      if (ch === "\\") this.next();
      else if (ch === "\n") return;
    }
  }
  filename(): string {
    this.skip(" \t");
    const name = this.toEndOfLine();
    if (name === "") throw new SedError("r, w or s///w without a file name");
    return name;
  }
}
