import { describe, expect, it } from "vitest";
import { awkRules, tokenizeAwk } from "../src/code/awk.ts";
import { readJavaScript } from "../src/code/javascript.ts";
import { readPython } from "../src/code/python.ts";
import { readSed } from "../src/code/sed.ts";
import { emptyUse } from "../src/code/use.ts";

function python(code: string): { why: string | undefined; files: string[] } {
  const use = emptyUse();
  const why = readPython(code, use);
  return { why, files: use.files.map((f) => `${f.access}:${f.path}`) };
}

function node(code: string): { why: string | undefined; files: string[] } {
  const use = emptyUse();
  const why = readJavaScript(code, false, use);
  return { why, files: use.files.map((f) => `${f.access}:${f.path}`) };
}

describe("python3 code under C-app", () => {
  it.each([
    "import statistics; print(statistics.median([3, 1, 4, 1, 5]))",
    "import json\nwith open('data/config.json') as f:\n    cfg = json.load(f)\nprint(cfg['name'])",
    "import csv; rows = list(csv.DictReader(open('data/sales.csv'))); print(max(rows, key=lambda r: int(r['units']))['region'])",
    "import hashlib; print(hashlib.sha256(open('readme.txt', 'rb').read()).hexdigest())",
    "from collections import Counter\nwords = open('readme.txt').read().split()\nprint(Counter(words).most_common(1))",
    "import sys; print('noise'); sys.stderr.write('more\\n')",
    "import pathlib; p = pathlib.Path('output'); p.mkdir(exist_ok=True); (p / 'summary.txt').write_text('x')",
    "import sqlite3; c = sqlite3.connect('app.db'); print(c.execute('SELECT count(*) FROM t').fetchone())",
    "x = 3\nprint(f'{x * 2:>5} {\"a\".upper()!r}')",
    "import re, math, itertools, functools, datetime, decimal, fractions, string, textwrap, base64, uuid\nprint(1)",
    "if __name__ == '__main__':\n    print('/'.join(['a', 'b']))",
  ])("computes: %s", (code) => {
    expect(python(code).why).toBeUndefined();
  });

  it("returns the files it opens by literal name, with how", () => {
    expect(
      python("print(open('a.txt').read()); open('b.txt', 'w').write('x'); open('c', mode='a')").files,
    ).toEqual(["read:a.txt", "write:b.txt", "write:c"]);
    expect(python("import pathlib; print((pathlib.Path('.') / '/etc/passwd').read_text())").files).toContain(
      "touch:/etc/passwd",
    );
  });

  it.each([
    ["import os; os.system('id')", /imports os, which reaches processes/],
    ["import subprocess", /imports subprocess/],
    ["from os import path", /imports os/],
    ["import socket", /network/],
    ["import urllib.request", /network/],
    ["import ctypes", /native code/],
    ["import importlib; importlib.import_module('o'+'s')", /importlib/],
    ["__import__('o'+'s').system('id')", /__import__/],
    ["getattr(__builtins__, 'op'+'en')('/etc/passwd')", /getattr/],
    ["eval(chr(111)+chr(115))", /evaluates code/],
    ["exec(bytes([105, 100]))", /executes code/],
    ["compile('1', 'x', 'exec')", /compiles code/],
    ["print(().__class__.__base__.__subclasses__())", /internals/],
    ["import sys; print(sys.modules['os'])", /sys\.modules/],
    ["from sys import modules", /takes modules from sys/],
    ["o = open; o('/etc/passwd')", /open other than by calling it/],
    ["name = input(); print(open(name).read())", /path known only when it runs/],
    ["print(open(f'{x}').read())", /path known only when it runs/],
    ["import pathlib; print(pathlib.Path.home())", /home directory/],
    ["import pathlib; p = pathlib.Path('.') / name", /joins a path/],
    ["import sqlite3; sqlite3.connect('a.db').execute(\"ATTACH DATABASE '/etc/x' AS x\")", /ATTACH/],
    ["from . import helper", /module of the workspace/],
    ["import mylib", /not known to only compute/],
    ["print(globals())", /global names/],
    ["print(f'{__import__(\"os\").getcwd()}')", /__import__/],
    ["print('unterminated)", /does not parse as Python: SyntaxError: unterminated string literal/],
    ["import sys as s; s._getframe().f_globals", /sys\._getframe/],
  ])("refuses %s", (code, why) => {
    expect(python(code).why).toMatch(why);
  });
});

/**
 * Spellings of the language a reader that knows only some of them lets through: each was allowed
 * (or read to another file) by the token reader that came before CPython's own grammar.
 */
describe("python3 code under C-app: the bypass classes", () => {
  const shadow = 'print(open("/etc/shadow").read())';
  it.each([
    // Identifiers are NFKC-normalized: full-width and mathematical letters are the ASCII names.
    [`\uff45\uff58\uff45\uff43('${shadow}')`, /executes code built at run time \(exec\)/],
    [`\u212f\u{1d4cd}\u212f\u{1d4b8}('${shadow}')`, /\(exec\)/],
    [`\u1d49val('1')`, /\(eval\)/],
    ["__\uff49\uff4d\uff50\uff4f\uff52\uff54__('os').system('id')", /\(__import__\)/],
    ['\uff47\uff45\uff54\uff41\uff54\uff54\uff52(__builtins__, "ex" + "ec")("1")', /\(getattr\)/],
    ["print(\uff56\uff41\uff52\uff53()['__builtins__'])", /\(vars\)/],
    ["print(\uff47\uff4c\uff4f\uff42\uff41\uff4c\uff53())", /\(globals\)/],
    ["import \uff4f\uff53; \uff4f\uff53.system('id')", /imports os, which reaches processes/],
    ["import sys; print(sys.\uff4d\uff4f\uff44\uff55\uff4c\uff45\uff53['os'])", /sys\.modules/],
    ["print(().__\uff43\uff4c\uff41\uff53\uff53__)", /internals through \.__class__/],
    // Where the code goes on: decorators, match statements, walrus, lambda defaults, f-strings.
    ["@\uff45\uff58\uff45\uff43\ndef f(): pass", /\(exec\)/],
    ["@(lambda f: \uff45\uff56\uff41\uff4c('1'))\ndef g(): pass", /\(eval\)/],
    ["match 1:\n    case _:\n        \uff45\uff58\uff45\uff43('1')", /\(exec\)/],
    ["match print:\n    case object(__globals__=g):\n        pass", /__globals__/],
    ["(e := \uff45\uff58\uff45\uff43)('1')", /\(exec\)/],
    ["(lambda e=\uff45\uff58\uff45\uff43: e('1'))()", /\(exec\)/],
    ["print(f'{\uff45\uff58\uff45\uff43(\"1\")}')", /\(exec\)/],
    // A carriage return ends a line for CPython, so what follows is no longer part of the import.
    ["import json\rexec('1')", /\(exec\)/],
    ["import json\r\nexec('1')", /\(exec\)/],
    // Escapes CPython decodes in SQL text.
    [
      "import sqlite3; sqlite3.connect('a.db').execute('\\N{LATIN CAPITAL LETTER A}TTACH DATABASE \"/etc/x\" AS x')",
      /ATTACH/,
    ],
    // Names a pure module hands on: a module that is not one, or a computed path by another name.
    ["import pathlib; pathlib.os.system('id')", /os/],
    ["import random; random._os.system('id')", /_os/],
    ["import traceback; print(traceback.linecache.getline('/etc/shadow', 1))", /linecache/],
    ["from sqlite3 import connect; connect(input())", /path known only when it runs/],
    ["import sys as s; m = s; print(m.modules)", /sys/],
    ["import timeit; timeit.timeit(\"__import__('os').system('id')\", number=1)", /timeit/],
    // What else a pure module holds that reaches files or code by a name computed at run time.
    ["import sqlite3; sqlite3.dbapi2.connect(input())", /path known only when it runs/],
    ["import gzip as g; h = g; h.open(input())", /uses the module gzip other than by its attributes/],
    ["import pathlib; P = pathlib.Path; print(P(input()).read_text())", /other than by calling it/],
    [
      "import argparse; argparse.ArgumentParser(fromfile_prefix_chars='@').parse_args(['@/etc/shadow'])",
      /fromfile_prefix_chars/,
    ],
    [
      "import argparse; p = argparse.ArgumentParser(); p.add_argument('f', type=argparse.FileType('r'))",
      /FileType/,
    ],
    [
      "import types; types.FunctionType(types.CodeType(0, 0, 0, 0, 0, 0, b'', (), (), (), '', '', '', 0, b'', b''), {})()",
      /code/,
    ],
    [
      "import shlex; s = shlex.shlex('source /etc/shadow', posix=True); s.source = 'source'; print(list(s))",
      /shlex\.shlex/,
    ],
    ["import zoneinfo; zoneinfo.reset_tzpath(to=['/etc'])", /time zone files/],
    ["import operator; print(operator.attrgetter('__class__')(1))", /attrgetter/],
    ["import typing\nclass A:\n    x: 'os'\nprint(typing.get_type_hints(A))", /get_type_hints/],
    [
      "import functools\n@functools.singledispatch\ndef f(x): pass\n@f.register\ndef _(x: \"__import__('os')\"): pass",
      /singledispatch/,
    ],
  ])("refuses %s", (code, why) => {
    expect(python(code).why).toMatch(why);
  });

  it.each([
    // The file a literal names is the one CPython decodes, whatever escape spells it.
    ["print(\uff4f\uff50\uff45\uff4e('/etc/shadow').read())", "read:/etc/shadow"],
    ["print(open('\\N{SOLIDUS}etc\\N{SOLIDUS}shadow').read())", "read:/etc/shadow"],
    ["print(open('\\x2fetc\\u002fshadow').read())", "read:/etc/shadow"],
    ["print(open('/etc/' 'shadow').read())", "read:/etc/shadow"],
    ["print(open(b'/etc/\\163hadow').read())", "read:/etc/shadow"],
    ["from pathlib import Path as P; print(P('/etc/shadow').read_text())", "touch:/etc/shadow"],
    ["import sqlite3; sqlite3.Connection('/etc/x.db')", "touch:/etc/x.db"],
  ])("reads the file of %s", (code, file) => {
    const got = python(code);
    expect(got.why).toBeUndefined();
    expect(got.files).toContain(file);
  });

  it.each([
    "# \uff45\uff58\uff45\uff43('1') in a comment\nprint('exec(1) in a string')",
    "caf\u00e9 = 1\nprint(caf\u00e9)",
    "import functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(20))",
    "import json\nmatch json.loads('[1, 2]'):\n    case [a, b]:\n        print(a + b)\n    case {'k': v}:\n        print(v)",
    "import re\nif (m := re.match(r'(\\d+)', '42x')):\n    print(m.group(1))",
    "xs = [1, 2]\nprint(f\"{xs!r:>10} {'a' 'b'} {len(xs)=}\")",
    "s = 'a' \\\n    'b'\nprint(s, rb'\\x', Rb'y', fR'{s}', u'z', BR'w')",
    "import pathlib\ndef f(p: pathlib.Path) -> pathlib.Path:\n    return p\nprint(isinstance(f(pathlib.Path('a')), (pathlib.Path, str)))",
    "from operator import attrgetter\nxs = sorted([1j, 2j], key=attrgetter('imag'))\nprint(xs)",
    "import shlex, sys\nprint(shlex.split('a b'), shlex.quote('x y'), sys.stdout.encoding)",
  ])("computes: %s", (code) => {
    expect(python(code).why).toBeUndefined();
  });
});

describe("node code under C-app", () => {
  it.each([
    "console.log(require('./data/config.json').features.join('+'))",
    "const c = require('crypto'); console.log(c.createHash('sha256').update('x').digest('hex'))",
    "require('fs').mkdirSync('output', {recursive: true}); require('fs').writeFileSync('output/r.json', JSON.stringify({ok: true}))",
    "const fs = require('node:fs'); const lines = fs.readFileSync('a.txt', 'utf8').split('\\n'); const u = {}; for (const l of lines) u[l] = (u[l] || 0) + 1; console.log(Object.keys(u).length)",
    "const { readFileSync } = require('fs'); console.log(readFileSync('x', 'utf8'))",
    "process.stdout.write([1, 2, 3].map((n) => n * 2).join(','))",
    "const path = require('path'); console.log(path.join('a', 'b'), process.argv.length)",
  ])("computes: %s", (code) => {
    expect(node(code).why).toBeUndefined();
  });

  it("returns the files fs opens by literal name", () => {
    expect(
      node("const fs = require('fs'); fs.copyFileSync('a', 'b'); require('./x.json')").files.sort(),
    ).toEqual(["read:./x.json", "read:a", "write:b"]);
  });

  it.each([
    ["require('child_process').execSync('id')", /child_process, which reaches processes/],
    ["require('ch' + 'ild_process')", /named only at run time/],
    ["const m = 'net'; require(m)", /named only at run time/],
    ["console.log(process.env)", /process\.env/],
    ["console.log(process['env'])", /process\.env/],
    ["process.binding('spawn_sync')", /process\.binding/],
    ["this.constructor.constructor('return process')()", /\.constructor/],
    ["[].map['constr' + 'uctor']('return 1')()", /computed at run time/],
    ["const k = 'constructor'; const F = (() => 0)[k][k]; F('return 1')()", /computed at run time/],
    ["eval('1')", /global eval/],
    ["new Function('return 1')()", /global Function/],
    ["globalThis.process", /global globalThis/],
    ["fetch('http://example.com')", /global fetch/],
    ["require('fs').readFileSync(process.argv[2])", /path known only when it runs/],
    ["const fs = require('fs'); const f = fs; f.readFileSync('x')", /fs/],
    ["require('./lib.js')", /module of the workspace/],
    ["import('os')", /reaches the host/],
    ["module.constructor._load('child_process')", /./],
    ["const x = {}; Object.getOwnPropertyDescriptor(x, 'y')", /Object\.getOwnPropertyDescriptor/],
    ["const f = () => 0; Reflect.apply(f, null, [])", /global Reflect/],
    ["const obj = {}, key = 'k'; obj[key]('x')", /computed at run time/],
    ["function (", /does not parse as JavaScript/],
  ])("refuses %s", (code, why) => {
    expect(node(code).why).toMatch(why);
  });
});

describe("sed and awk scripts", () => {
  it("reads sed's commands, files and command runs", () => {
    expect(readSed("s/Hello, MCPGuard/Hello, team/")).toEqual({ executes: false, reads: [], writes: [] });
    expect(readSed("/^#/d; /^$/d")).toEqual({ executes: false, reads: [], writes: [] });
    expect(readSed("/^## Secrets/,/^## Access/p")).toEqual({ executes: false, reads: [], writes: [] });
    expect(readSed("s#a#b#w out.txt")).toMatchObject({ writes: ["out.txt"] });
    expect(readSed("1r /etc/passwd")).toMatchObject({ reads: ["/etc/passwd"] });
    expect(readSed("s/x/id/e")).toMatchObject({ executes: true });
    expect(readSed("1e id")).toMatchObject({ executes: true });
    expect(readSed("$!{N};P;D")).toMatchObject({ executes: false });
    expect(() => readSed("s/a/b")).toThrow();
  });

  it("reads awk's commands, files and pipes", () => {
    const rules = (program: string) => {
      const use = emptyUse();
      return {
        why: awkRules(tokenizeAwk(program), use),
        files: use.files.map((f) => `${f.access}:${f.path}`),
      };
    };
    expect(rules("NR > 1 {u[$2] += $3} END {for (p in u) print p, u[p]}").why).toBeUndefined();
    expect(rules("$9 >= 400 {print $9, $7}").why).toBeUndefined();
    expect(rules('{printf "%.2f\\n", $3 / 2}').why).toBeUndefined();
    expect(rules('/ERROR/ {print > "/dev/stderr"}')).toEqual({ why: undefined, files: [] });
    expect(rules('{print $1 > "out.txt"}').files).toEqual(["write:out.txt"]);
    expect(rules('{ while ((getline line < "/etc/passwd") > 0) print line }').files).toEqual([
      "read:/etc/passwd",
    ]);
    expect(rules('{system("id")}').why).toMatch(/system/);
    expect(rules('{print | "sh"}').why).toMatch(/pipe/);
    expect(rules('BEGIN {"id" | getline x}').why).toMatch(/pipe/);
    expect(rules("{print > $2}").why).toMatch(/named only when it runs/);
    expect(rules('@load "filefuncs"').why).toMatch(/loads code/);
  });
});
