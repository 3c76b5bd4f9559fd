/**
 * Parameter expansion: `$x`, `${x:-default}`, `${#x}`, `${x%.*}`, `${x//a/b}`, `${x:1:2}`,
 * `${a[@]}`, `$1`, `$@`. A value is computed when the variable's value is known: assigned a
 * literal earlier in the script, a loop variable over literal words or globs, one of the world's
 * variables (HOME, PWD, TMPDIR), or unset in an environment L1 filtered. Otherwise it is unknown.
 */
import type { ShNode } from "./grammar.js";
import type { Field, Seg, Unknown, Ways } from "./model.js";
import { UNKNOWN_MARK } from "./model.js";
import { type Scope, scalar, UNSET, unknownValue, type Value, waysOf } from "./scope.js";
import { removeAffix, replacePattern } from "./text.js";
import type { Walker } from "./walker.js";
import { literalWord, partsWays } from "./words.js";

const NUMBER_VARIABLES = new Set([
  "?",
  "$",
  "!",
  "#",
  "RANDOM",
  "SRANDOM",
  "LINENO",
  "SECONDS",
  "PPID",
  "UID",
  "EUID",
  "BASHPID",
  "EPOCHSECONDS",
  "OPTIND",
]);
/** Longest value the pattern operators are computed on; a longer one is taken as unknown. */
const MAX_PATTERN_VALUE = 1024;

function text(origin: string): Unknown {
  return { kind: "text", origin };
}

/** The value of a variable as the script has it at this point. */
function lookup(r: Walker, scope: Scope, name: string): Value {
  r.expanded.add(name);
  if (/^\d+$/.test(name)) {
    if (name === "0")
      return scope.arg0 ? scalar(scope.arg0) : unknownValue(text("$0, the name the shell was started with"));
    if (!scope.positional) return unknownValue(text(`the positional parameter $${name}`));
    return scalar(scope.positional[Number(name) - 1] ?? { text: "" });
  }
  if (name === "#" && scope.positional) return scalar({ text: String(scope.positional.length) });
  if (NUMBER_VARIABLES.has(name)) return unknownValue({ kind: "number", origin: `$${name}` });
  const assigned = scope.vars.get(name);
  if (assigned) return assigned;
  if (name === "HOME" && r.ctx.home) return scalar({ text: r.ctx.home });
  if (name === "PWD")
    return scope.cwd && scope.cwdElse === undefined
      ? scalar({ text: scope.cwd })
      : unknownValue(text("the directory a cd went to"));
  if (name === "TMPDIR" && r.ctx.tmp) return scalar({ text: r.ctx.tmp });
  if (name === "IFS") return scalar({ text: " \t\n" });
  if (name === "-" || r.ctx.present?.has(name))
    return unknownValue(text(`the server's environment ($${name})`));
  if (r.ctx.environmentKnown) return UNSET;
  return unknownValue(text(`the environment ($${name})`));
}

function segOf(field: Field, quoted: boolean): Seg {
  const glob = field.pattern || (!quoted && /[*?[]/.test(field.text) && !field.unknown);
  return { text: field.text, unknown: field.unknown, quoted, split: !quoted, glob };
}

function unknownWays(unknown: Unknown, quoted: boolean): Ways {
  return [[{ text: unknown.kind === "number" ? "0" : UNKNOWN_MARK, unknown, quoted, split: !quoted }]];
}

/** Every field `$@`, `$*` or `${a[@]}` makes: quoted, one field each. */
function listWays(elements: Field[] | undefined, what: string, quoted: boolean): Ways {
  if (!elements) return unknownWays(text(what), quoted);
  return [elements.map((field) => ({ ...segOf(field, quoted), boundary: true }))];
}

export function expandParam(r: Walker, pe: ShNode, scope: Scope, quoted: boolean): Ways {
  const name: string = pe.Param?.Value ?? "";
  if (pe.Excl) {
    // `${!x}` and `${!prefix*}`: a variable named by another, or a list of names.
    if (pe.Names) r.listsNames = true;
    else {
      // The variable named by the value of another: that name, or any when it is unknown.
      for (const way of waysOf(lookup(r, scope, name))) {
        if (way.unknown) r.listsNames = true;
        else r.expanded.add(way.text);
        if (way.unknown || way.text.includes("[")) r.subscriptName(`\${!${name}}`);
      }
    }
    // `${!x:=v}` sets the variable x names: any, for the reading.
    const op = pe.Exp ? r.g.ops.param.get(pe.Exp.Op) : undefined;
    if (op === "=" || op === ":=")
      r.dynamics.push({
        what: `assigns the variable \${!${name}} names, which only the shell knows at run time`,
        escapes: ["exec", "files"],
      });
    return unknownWays(text(`an indirect expansion (\${!${name}...})`), quoted);
  }
  if (pe.Index) {
    const all = indexAll(r, pe.Index);
    if (all)
      return pe.Length
        ? countWays(r, scope, name)
        : listWays(elementsOf(r, scope, name), `the array ${name}`, quoted);
  }
  if (name === "@" || name === "*") {
    if (pe.Length) return unknownWays({ kind: "number", origin: "$#" }, quoted);
    return listWays(scope.positional, "the positional parameters", quoted);
  }
  const value = pe.Index ? element(r, scope, name, pe.Index) : lookup(r, scope, name);
  if (pe.Length) return lengthWays(value, quoted);
  let ways = waysOf(value).map((field) => [segOf(field, quoted)]);
  if (pe.Slice) ways = sliceWays(r, scope, ways, pe.Slice, quoted);
  if (pe.Repl) ways = replaceWays(r, scope, ways, pe.Repl, quoted);
  if (pe.Exp) ways = operatorWays(r, scope, pe, value, ways, quoted);
  return ways;
}

function indexAll(r: Walker, index: ShNode): boolean {
  return r.g.type(index) === "Word" && ["@", "*"].includes(literalWord(r, index) ?? "");
}

function elementsOf(r: Walker, scope: Scope, name: string): Field[] | undefined {
  const value = lookup(r, scope, name);
  if (value.kind === "array") return value.elements;
  if (value.kind === "unset") return [];
  return value.ways.length === 1 ? value.ways : undefined;
}

function countWays(r: Walker, scope: Scope, name: string): Ways {
  const elements = elementsOf(r, scope, name);
  if (!elements) return unknownWays({ kind: "number", origin: `the size of ${name}` }, true);
  return [[{ text: String(elements.length), quoted: true }]];
}

function element(r: Walker, scope: Scope, name: string, index: ShNode): Value {
  const elements = elementsOf(r, scope, name);
  const literal = r.g.type(index) === "Word" ? literalWord(r, index) : undefined;
  const unary = r.g.type(index) === "UnaryArithm" ? literalWord(r, index.X) : undefined;
  const n =
    literal !== undefined && /^\d+$/.test(literal)
      ? Number(literal)
      : unary !== undefined && /^\d+$/.test(unary)
        ? -Number(unary)
        : undefined;
  if (n === undefined) r.arithmetic(index, scope);
  if (!elements) return unknownValue(text(`an element of ${name}`));
  if (n === undefined) return elements.length ? scalar(...elements) : UNSET;
  const at = n < 0 ? elements.length + n : n;
  const found = elements[at];
  return found ? scalar(found) : UNSET;
}

function lengthWays(value: Value, quoted: boolean): Ways {
  if (value.kind === "scalar" && value.ways.every((f) => !f.unknown)) {
    return value.ways.map((f) => [{ text: String([...f.text].length), quoted }]);
  }
  if (value.kind === "unset") return [[{ text: "0", quoted }]];
  return unknownWays({ kind: "number", origin: "the length of a value" }, quoted);
}

function mapKnown(ways: Ways, quoted: boolean, f: (text: string) => string | undefined): Ways {
  return ways.map((segs) => {
    const seg = segs[0] as Seg;
    if (segs.length !== 1 || seg.unknown || seg.text.length > MAX_PATTERN_VALUE) {
      return seg?.unknown?.kind === "number"
        ? segs
        : (unknownWays(text("a value computed from an unknown one"), quoted)[0] as Seg[]);
    }
    const out = f(seg.text);
    if (out === undefined) return unknownWays(text("a value the reader cannot compute"), quoted)[0] as Seg[];
    return [{ ...seg, text: out, glob: !quoted && /[*?[]/.test(out) }];
  });
}

/** A word's single literal value (a pattern or replacement), or undefined. */
function literalOf(r: Walker, scope: Scope, word: ShNode | null): string | undefined {
  if (!word) return "";
  const ways = partsWays(r, word.Parts as ShNode[], scope, "double");
  if (ways.length !== 1) return undefined;
  const segs = ways[0] as Seg[];
  if (segs.some((s) => s.unknown)) return undefined;
  return segs.map((s) => s.text).join("");
}

function sliceWays(r: Walker, scope: Scope, ways: Ways, slice: ShNode, quoted: boolean): Ways {
  const offset = arithLiteral(r, slice.Offset);
  const length = slice.Length ? arithLiteral(r, slice.Length) : undefined;
  if (offset === undefined || (slice.Length && length === undefined)) {
    if (slice.Offset) r.arithmetic(slice.Offset, scope);
    if (slice.Length) r.arithmetic(slice.Length, scope);
    return ways.map(() => unknownWays(text("a slice of a value"), quoted)[0] as Seg[]);
  }
  return mapKnown(ways, quoted, (value) => {
    const start = offset < 0 ? Math.max(0, value.length + offset) : offset;
    if (length === undefined) return value.slice(start);
    return length < 0 ? value.slice(start, value.length + length) : value.slice(start, start + length);
  });
}

function arithLiteral(r: Walker, node: ShNode | null): number | undefined {
  if (!node) return undefined;
  const type = r.g.type(node);
  if (type === "Word") {
    const lit = literalWord(r, node);
    return lit !== undefined && /^\d+$/.test(lit) ? Number(lit) : undefined;
  }
  if (type === "UnaryArithm" || type === "ParenArithm") {
    const inner = arithLiteral(r, node.X);
    return inner === undefined ? undefined : type === "UnaryArithm" ? -inner : inner;
  }
  return undefined;
}

function replaceWays(r: Walker, scope: Scope, ways: Ways, repl: ShNode, quoted: boolean): Ways {
  const pattern = literalOf(r, scope, repl.Orig);
  const replacement = literalOf(r, scope, repl.With);
  if (pattern === undefined || replacement === undefined)
    return ways.map(() => unknownWays(text("a replacement in a value"), quoted)[0] as Seg[]);
  return mapKnown(ways, quoted, (value) => replacePattern(value, pattern, replacement, Boolean(repl.All)));
}

function operatorWays(r: Walker, scope: Scope, pe: ShNode, value: Value, ways: Ways, quoted: boolean): Ways {
  const op = r.g.ops.param.get(pe.Exp.Op);
  const word = pe.Exp.Word as ShNode | null;
  const wordWays = (): Ways =>
    word ? partsWays(r, word.Parts as ShNode[], scope, quoted ? "double" : false) : [[]];
  const empty =
    value.kind === "unset" ||
    (value.kind === "scalar" && value.ways.every((f) => f.text === "" && !f.unknown));
  const maybeEmpty = empty || waysOf(value).some((f) => f.unknown || f.text === "");
  const colon = op?.startsWith(":") ?? false;
  const missing = value.kind === "unset" || (colon && empty);
  const mayMiss =
    value.kind === "unset" ||
    (colon ? maybeEmpty : false) ||
    waysOf(value).some((f) => f.unknown?.kind === "text" && r.ctx.environmentKnown !== true);
  switch (op) {
    case "-":
    case ":-":
    case "=":
    case ":=": {
      const result = missing ? wordWays() : mayMiss ? [...ways, ...wordWays()] : ways;
      if ((op === "=" || op === ":=") && (missing || mayMiss)) assignFrom(scope, pe.Param.Value, result);
      return result;
    }
    case "+":
    case ":+":
      return missing ? [[]] : mayMiss ? [[], ...wordWays()] : wordWays();
    case "?":
    case ":?":
      return ways;
    case "#":
    case "##":
    case "%":
    case "%%": {
      const pattern = literalOf(r, scope, word);
      if (pattern === undefined)
        return ways.map(
          () => unknownWays(text("a value cut by a pattern known only at run time"), quoted)[0] as Seg[],
        );
      return mapKnown(ways, quoted, (v) => removeAffix(v, pattern, op.startsWith("%"), op.length === 2));
    }
    case "^":
    case "^^":
      return mapKnown(ways, quoted, (v) =>
        op === "^" ? v.slice(0, 1).toUpperCase() + v.slice(1) : v.toUpperCase(),
      );
    case ",":
    case ",,":
      return mapKnown(ways, quoted, (v) =>
        op === "," ? v.slice(0, 1).toLowerCase() + v.slice(1) : v.toLowerCase(),
      );
    default:
      if (literalOf(r, scope, word) === "P") {
        // bash expands the value as a prompt, which runs the command substitutions in it.
        r.dynamics.push({
          what: `expands $${pe.Param.Value} as a prompt (\${x@P}), which runs the substitutions in it`,
          escapes: ["exec", "files"],
        });
      }
      return ways.map(() => unknownWays(text(`\${${pe.Param.Value}@...}`), quoted)[0] as Seg[]);
  }
}

function assignFrom(scope: Scope, name: string, ways: Ways): void {
  const fields = ways.map((segs) => ({
    text: segs.map((s) => s.text).join(""),
    ...(segs.some((s) => s.unknown) ? { unknown: text("a default assigned by :=") } : {}),
  }));
  scope.vars.set(name, scalar(...fields));
}
