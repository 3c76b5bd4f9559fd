/**
 * sed scripts, read command by command: GNU sed can run a command (`e`, the `e` flag of `s`),
 * read a file (`r`, `R`) and write one (`w`, `W`, the `w` flag of `s`). Files are returned for
 * L1's path checks under every config; running a command is refused where the kernel does not
 * confine programs (C-app), and so is a script sed reads from a file.
 */
import type { Confinement } from "../confinement.js";
import type { Field } from "../shell/index.js";
import { STANDARD_STREAMS } from "./awk.js";
import { type CodeUse, emptyUse } from "./index.js";

interface SedEffects {
  executes: boolean;
  reads: string[];
  writes: string[];
}

class SedError extends Error {}

export function sedUse(argv: Field[], confined: Confinement): CodeUse {
  const use = emptyUse();
  const scripts: Field[] = [];
  let fromFile = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const word = (argv[i] as Field).text;
    if (word === "--") {
      i++;
      break;
    }
    if (word === "-e" || word === "--expression") {
      use.codeOperands.add(i + 1);
      if (argv[i + 1]) scripts.push(argv[i + 1] as Field);
      i++;
    } else if (word.startsWith("--expression=")) {
      use.codeOperands.add(i);
      scripts.push({ ...(argv[i] as Field), text: word.slice(13) });
    } else if (word === "-f" || word === "--file" || word.startsWith("--file=")) {
      fromFile = true;
      if (word === "-f" || word === "--file") i++;
    } else if (word === "-l" || word === "--line-length") i++;
    else if (/^-[nrEsuzi]*e$/.test(word)) {
      use.codeOperands.add(i + 1);
      if (argv[i + 1]) scripts.push(argv[i + 1] as Field);
      i++;
    } else if (!word.startsWith("-") || word === "-") break;
  }
  if (scripts.length === 0 && !fromFile && argv[i]) {
    use.codeOperands.add(i);
    scripts.push(argv[i] as Field);
  }
  const strict = !confined.exec;
  if (fromFile && strict)
    return { ...use, refusal: "sed reads its script from a file, which is not part of the call" };
  for (const script of scripts) {
    if (script.unknown) {
      if (strict)
        return { ...use, refusal: `the sed script holds ${script.unknown.origin}, known only at run time` };
      continue;
    }
    let effects: SedEffects;
    try {
      effects = readSed(script.text);
    } catch (error) {
      if (!(error instanceof SedError)) throw error;
      if (strict) return { ...use, refusal: `the sed script does not parse: ${error.message}` };
      continue;
    }
    for (const path of effects.reads) use.files.push({ path, access: "read" });
    for (const path of effects.writes)
      if (!STANDARD_STREAMS.has(path)) use.files.push({ path, access: "write" });
    if (effects.executes && strict) return { ...use, refusal: "the sed script runs a command (e)" };
  }
  return use;
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
  label(): string {
    this.skip(" \t");
    const start = this.#i;
    while (!this.done() && !";\n".includes(this.peek())) this.#i++;
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
