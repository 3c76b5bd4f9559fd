/**
 * Python programs for the differential test of the Python reader (test/pythonDifferential.test.ts):
 * a few statements each, from imports of pure and impure modules, dynamic code (exec, eval,
 * compile, __import__, getattr on the builtins, vars and globals), opens of literal and computed
 * paths, pathlib and sqlite3, attribute chains through what pure modules hold (pathlib.os,
 * random._os, traceback.linecache), and plain computing; each spelled in ways CPython reads alike:
 * identifiers in ASCII, full-width or mathematical letters (NFKC), strings with every prefix, every
 * escape (\x, \ooo, \u, \U, \N{...}), implicit concatenation over line continuations, statements
 * inside blocks, decorators, match statements, walrus and lambda defaults, comments, \r\n and \r
 * line ends. What they run is harmless: `true`, a socket made and closed, files in the scratch
 * folder, /etc/hostname read.
 */
import fc from "fast-check";

type Pick = <T>(items: readonly T[]) => T;
type Chance = (percent: number) => boolean;

/** Math letter blocks whose NFKC form is ASCII, complete for a-z and A-Z (no holes). */
const LETTER_STYLES: [number, number][] = [
  [0xff41, 0xff21], // full-width
  [0x1d41a, 0x1d400], // mathematical bold
  [0x1d5ba, 0x1d5a0], // sans-serif
  [0x1d68a, 0x1d670], // monospace
  [0x1d586, 0x1d56c], // bold fraktur
];

/** Names of characters for \N{...}. */
const CHAR_NAMES: Record<string, string> = {
  "/": "SOLIDUS",
  ".": "FULL STOP",
  _: "LOW LINE",
  " ": "SPACE",
  "(": "LEFT PARENTHESIS",
  ")": "RIGHT PARENTHESIS",
  "=": "EQUALS SIGN",
  "'": "APOSTROPHE",
  '"': "QUOTATION MARK",
  ",": "COMMA",
  "+": "PLUS SIGN",
  "-": "HYPHEN-MINUS",
};

class Writer {
  constructor(
    private readonly pick: Pick,
    private readonly chance: Chance,
  ) {}

  /** An identifier CPython reads as `name` (NFKC), spelled letter by letter in some style. */
  id(name: string): string {
    if (this.chance(45)) return name;
    const style = this.chance(50) ? this.pick(LETTER_STYLES) : undefined;
    return [...name]
      .map((c) => {
        const [lower, upper] = style ?? this.pick(LETTER_STYLES);
        if (this.chance(20)) return c;
        if (c >= "a" && c <= "z") return String.fromCodePoint(lower + c.charCodeAt(0) - 97);
        if (c >= "A" && c <= "Z") return String.fromCodePoint(upper + c.charCodeAt(0) - 65);
        return c;
      })
      .join("");
  }

  /** A literal CPython reads as the text `value` (bytes where `bytes`), in one or more pieces. */
  str(value: string, bytes = false): string {
    const pieces: string[] = [];
    let rest = value;
    while (rest.length > 0) {
      const n = this.chance(60) ? rest.length : 1 + Math.floor(rest.length / 2);
      pieces.push(rest.slice(0, n));
      rest = rest.slice(n);
    }
    if (pieces.length === 0) pieces.push("");
    const written = pieces.map((p) => this.piece(p, bytes));
    if (written.length === 1) return written[0] as string;
    const joiner = this.pick([" ", "", " \\\n    ", "\\\n"]);
    return this.chance(50) ? written.join(joiner) : `(${written.join(this.pick([" ", "\n    "]))})`;
  }

  private piece(value: string, bytes: boolean): string {
    const quote = this.pick(["'", '"', "'''", '"""']);
    const formatted = !bytes && this.chance(25);
    // A raw string cannot spell its own quote or a backslash at its end.
    const raw = this.chance(25) && !/[\\'"{}\n\r]/.test(value);
    const letters = [
      bytes ? this.pick(["b", "B"]) : "",
      raw ? this.pick(["r", "R"]) : "",
      formatted ? this.pick(["f", "F"]) : "",
    ];
    if (!bytes && !raw && !formatted && this.chance(20)) letters.push(this.pick(["u", "U"]));
    const prefix = (this.chance(50) ? letters : letters.reverse()).join("");
    const body = raw ? value : [...value].map((c) => this.char(c, bytes, quote, formatted)).join("");
    return `${prefix}${quote}${body}${quote}`;
  }

  private char(c: string, bytes: boolean, quote: string, formatted: boolean): string {
    const code = c.charCodeAt(0);
    const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
    const ways = [
      () => (c === "\\" || quote.includes(c) ? `\\${c}` : formatted && (c === "{" || c === "}") ? c + c : c),
      () => `\\x${hex(code, 2)}`,
      () => `\\${code.toString(8).padStart(3, "0")}`,
    ];
    if (!bytes) {
      ways.push(
        () => `\\u${hex(code, 4)}`,
        () => `\\U${hex(code, 8)}`,
      );
      const name =
        CHAR_NAMES[c] ??
        (c >= "a" && c <= "z"
          ? `LATIN SMALL LETTER ${c.toUpperCase()}`
          : c >= "A" && c <= "Z"
            ? `LATIN CAPITAL LETTER ${c}`
            : c >= "0" && c <= "9"
              ? `DIGIT ${["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"][code - 48]}`
              : undefined);
      if (name) ways.push(() => `\\N{${this.chance(20) ? name.toLowerCase() : name}}`);
    }
    return this.chance(50) ? (ways[0] as () => string)() : this.pick(ways)();
  }

  /** A path expression: a literal (spelled any way), or one computed at run time. */
  path(value: string): string {
    if (this.chance(65)) return this.str(value, this.chance(15));
    const cut = 1 + Math.floor(value.length / 2);
    return this.pick([
      () => `''.join([${this.str(value.slice(0, cut))}, ${this.str(value.slice(cut))}])`,
      () => `${this.id("str")}(${this.str(value)})`,
      () => `(lambda: ${this.str(value)})()`,
      () => `${this.str(value)}[:]`,
      () =>
        `${this.str(value.slice(0, cut))} + ${this.id("chr")}(${value.charCodeAt(cut)}) + ${this.str(value.slice(cut + 1))}`,
    ])();
  }

  code(): string {
    return this.pick(["x = 1", "1 + 1", "print('hi')", "import os", "y = [1, 2]"]);
  }

  /** One statement, possibly over several lines (with the imports it needs). */
  statement(): string[] {
    const I = (name: string) => this.id(name);
    const S = (value: string) => this.str(value, false);
    const readable = this.pick(["data.txt", "./data.txt", "/etc/hostname", "sub/../data.txt"]);
    const templates: (() => string[])[] = [
      // Imports, pure and not.
      () => [`import ${I(this.pick(MODULES))}`],
      () => [`import ${I(this.pick(MODULES))} as ${I("m")}`],
      () => {
        const [module, name] = this.pick(FROM);
        return [`from ${I(module)} import ${I(name)}${this.chance(30) ? ` as ${I("n")}` : ""}`];
      },
      () => [`from . import ${I("helper")}`],
      // Dynamic code.
      () => [`${I(this.pick(["exec", "eval"]))}(${S(this.code())})`],
      () => [`${I("compile")}(${S("1")}, ${S("f")}, ${S("eval")})`],
      () => [`${I("__import__")}(${S(this.pick(["os", "json", "subprocess"]))})`],
      () => [`${I("getattr")}(${I("__builtins__")}, ${S("ex")} + ${S("ec")})(${S(this.code())})`],
      () => [`${I(this.pick(["vars", "globals", "locals"]))}()`],
      () => [`(${I("e")} := ${I("exec")})(${S(this.code())})`],
      () => [`(lambda ${I("e")}=${I("exec")}: ${I("e")}(${S(this.code())}))()`],
      () => [`@(lambda f: ${I("exec")}(${S(this.code())}) or f)`, `def ${I("g")}(): pass`],
      () => [`print(f'''{${I("exec")}(${JSON.stringify(this.code())})}''')`],
      // Files.
      () => [`${I("open")}(${this.path(readable)}).close()`],
      () => [`${I("open")}(${this.path("out.txt")}, ${S(this.pick(["w", "a", "r+"]))}).close()`],
      () => [`${I("open")}(file=${this.path(readable)}, mode=${S("rb")}).close()`],
      () => [`${I("o")} = ${I("open")}`, `${I("o")}(${this.path(readable)}).close()`],
      () => [`from pathlib import Path as ${I("P")}`, `${I("P")}(${this.path(readable)}).exists()`],
      () => [`import pathlib`, `(${I("pathlib")}.Path(${S(".")}) / ${this.path(readable)}).read_text()`],
      () => [
        `import sqlite3`,
        `${I("sqlite3")}.connect(${this.path(this.pick(["db.sqlite", ":memory:"]))}).close()`,
      ],
      () => [`from sqlite3 import connect`, `${I("connect")}(${this.path("db.sqlite")}).close()`],
      () => [`import gzip`, `${I("gzip")}.open(${this.path("out.gz")}, ${S("wb")}).close()`],
      // What pure modules hold.
      () => [`import pathlib`, `${I("pathlib")}.${I("os")}.${I("system")}(${S("true")})`],
      () => [`import shlex`, `${I("shlex")}.${I("os")}.${I("listdir")}(${S(".")})`],
      () => [`import random`, `${I("random")}.${I("_os")}.${I("getpid")}()`],
      () => [
        `import traceback`,
        `${I("traceback")}.${I("linecache")}.${I("getline")}(${this.path("/etc/hostname")}, 1)`,
      ],
      () => [`import enum`, `${I("enum")}.${I("bltns")}.${I("exec")}(${S(this.code())})`],
      () => [`import json`, `${I("json")}.${I("codecs")}.${I("open")}(${this.path(readable)}).close()`],
      () => [`import sys`, `${I("m")} = ${I("sys")}`, `${I("m")}.${I("_getframe")}()`],
      () => [`import timeit`, `${I("timeit")}.${I("timeit")}(${S(this.code())}, number=1)`],
      () => [
        `import typing`,
        `def ${I("h")}(x: ${S("__import__('os').getpid()")}): pass`,
        `${I("typing")}.${I("get_type_hints")}(${I("h")})`,
      ],
      () => [
        `import warnings`,
        `${I("warnings")}.${I("warn_explicit")}(${S("w")}, UserWarning, ${this.path("/etc/hostname")}, 1)`,
      ],
      // Processes and the network.
      () => [`import os`, `${I("os")}.${I("system")}(${S("true")})`],
      () => [`import subprocess`, `${I("subprocess")}.${I("run")}([${S("true")}])`],
      () => [`import socket`, `${I("socket")}.${I("socket")}().close()`],
      // Computing.
      () => [`print(${S("hi")}, ${I("len")}([1, 2]))`],
      () => [`${I("xs")} = [${I("i")} * 2 for ${I("i")} in range(3)]`],
      () => [`import json`, `${I("json")}.${I("dumps")}({${S("a")}: 1})`],
      () => [`import re`, `${I("re")}.${I("compile")}(${S("a+")})`],
      () => [`import math, statistics`, `${I("statistics")}.${I("median")}([${I("math")}.pi, 1])`],
    ];
    return this.pick(templates)();
  }

  /** The statement's lines, as they are or inside a block. */
  wrapped(): string[] {
    const lines = this.statement();
    const indent = (block: string[]) => block.map((l) => `    ${l}`);
    const comment = () => `# ${this.id("exec")}(${this.str("x")}) ${this.pick(["", "\\", "'", '"""'])}`;
    const way = this.pick(["plain", "plain", "if", "def", "try", "match", "with", "class"]);
    let out: string[];
    if (way === "if") out = ["if True:", ...indent(lines)];
    else if (way === "def") out = [`def ${this.id("run")}():`, ...indent(lines), `${this.id("run")}()`];
    else if (way === "try") out = ["try:", ...indent(lines), "except Exception:", "    pass"];
    else if (way === "match") out = ["match 0:", "    case _:", ...indent(indent(lines))];
    else if (way === "with") out = ["with open('data.txt') as _f:", ...indent(lines)];
    else if (way === "class") out = [`class ${this.id("K")}:`, ...indent(lines)];
    else out = lines;
    if (this.chance(20)) out = [comment(), ...out];
    return out;
  }

  program(): string {
    const count = 1 + Math.floor(this.pick([0, 0, 1, 1, 2, 3]));
    const lines: string[] = [];
    for (let i = 0; i < count; i++) lines.push(...this.wrapped());
    const end = this.pick(["\n", "\n", "\n", "\r\n", "\r"]);
    return lines.join(end) + (this.chance(50) ? end : "");
  }
}

const MODULES = [
  "json",
  "math",
  "re",
  "pathlib",
  "sqlite3",
  "random",
  "traceback",
  "gzip",
  "operator",
  "typing",
  "os",
  "subprocess",
  "socket",
  "importlib",
  "shutil",
  "ctypes",
  "glob",
  "tempfile",
  "linecache",
  "codecs",
  "inspect",
  "timeit",
  "pickle",
  "urllib.request",
] as const;

const FROM: [string, string][] = [
  ["os", "system"],
  ["os", "getpid"],
  ["pathlib", "Path"],
  ["sqlite3", "connect"],
  ["traceback", "linecache"],
  ["pathlib", "os"],
  ["json", "dumps"],
  ["collections", "Counter"],
  ["sys", "modules"],
  ["sys", "argv"],
  ["importlib", "import_module"],
  ["typing", "get_type_hints"],
];

/** Programs of one to four statements. */
export const pythonProgram = fc.gen().map((g) => {
  const pick: Pick = (items) => g(fc.constantFrom, ...items);
  const chance: Chance = (percent) => g(fc.integer, { min: 0, max: 99 }) < percent;
  return new Writer(pick, chance).program();
});
