/**
 * JavaScript programs for the differential test against Node (jsDifferential.test.ts): pieces that
 * compute, and pieces that reach (modules by literal and by computed names, fs calls with literal
 * and computed paths and flags, process.env, this and the global object, eval, Function and the
 * constructors that lead to it, computed member calls, child_process, the network, native code),
 * each written in several of the ways JavaScript allows (quotes, template literals, escapes in
 * strings and identifiers, destructuring, optional chaining, classes, callbacks, ES modules).
 */
import fc from "fast-check";

type Pick = <T>(items: readonly T[]) => T;

export interface JsProgram {
  code: string;
  module: boolean;
}

interface Piece {
  /** Import declarations, which make the program a module. */
  imports?: string;
  code: string;
}

class Writer {
  #n = 0;
  constructor(
    readonly pick: Pick,
    readonly chance: (percent: number) => boolean,
  ) {}

  fresh(): string {
    this.#n++;
    return `v${this.#n}`;
  }

  /** A string literal of `text`, quoted, templated, escaped or computed. */
  str(text: string): string {
    const escaped = [...text].map((c, i) =>
      i === 0 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}` : c,
    );
    const mid = Math.max(1, Math.floor(text.length / 2));
    return this.pick([
      `'${text}'`,
      `"${text}"`,
      `\`${text}\``,
      `'${escaped.join("")}'`,
      `'\\u{${text.charCodeAt(0).toString(16)}}${text.slice(1)}'`,
      this.chance(50) ? `'${text}'` : `'${text.slice(0, mid)}' + '${text.slice(mid)}'`,
      this.chance(50) ? `'${text}'` : `\`\${'${text.slice(0, mid)}'}${text.slice(mid)}\``,
    ]);
  }
  /** A module's name as an import declaration takes it: a string literal, maybe escaped. */
  specifier(name: string): string {
    const full = this.chance(25) ? `node:${name}` : name;
    return this.pick([
      `'${full}'`,
      `"${full}"`,
      `'\\x${full.charCodeAt(0).toString(16)}${full.slice(1)}'`,
      `'\\u{${full.charCodeAt(0).toString(16)}}${full.slice(1)}'`,
    ]);
  }
  module(name: string): string {
    return this.chance(25) ? this.str(`node:${name}`) : this.str(name);
  }
  path(): string {
    const literal = this.pick(["a.txt", "./sub/c.txt", "/etc/hostname", "sub/../b.txt", "data.json"]);
    return this.pick([
      this.str(literal),
      this.str(literal),
      "process.argv[1] || 'a.txt'",
      "new URL('file:///etc/hostname')",
      `Buffer.from('${literal}')`,
      "['a.txt'][0]",
    ]);
  }
  flag(): string {
    return this.pick(["'r'", "'w'", "'a+'", "'r+'", "'rs'", "'wx'", "'r'.trim()"]);
  }

  /** A call of an fs function on `f`, the module's value or a function taken from it. */
  fsCall(): { name: string; args: string } {
    const p = this.path();
    return this.pick([
      { name: "readFileSync", args: p },
      { name: "readFileSync", args: `${p}, 'utf8'` },
      { name: "readFileSync", args: `${p}, { flag: ${this.flag()} }` },
      { name: "readFileSync", args: `${p}, { encoding: 'utf8', flag: ${this.flag()} }` },
      { name: "writeFileSync", args: `'out.txt', 'x'` },
      { name: "writeFileSync", args: `${p}, 'x'` },
      { name: "appendFileSync", args: `${p}, 'x'` },
      { name: "openSync", args: p },
      { name: "openSync", args: `${p}, ${this.flag()}` },
      { name: "existsSync", args: p },
      { name: "statSync", args: p },
      { name: "readdirSync", args: this.str("sub") },
      { name: "createReadStream", args: `${p}, { flags: ${this.flag()} }` },
      { name: "createReadStream", args: p },
      { name: "copyFileSync", args: `${p}, 'copy.txt'` },
      { name: "mkdirSync", args: "'newdir', { recursive: true }" },
      { name: "rmSync", args: "'b.txt', { force: true }" },
      { name: "linkSync", args: `${p}, 'link.txt'` },
      { name: "readFile", args: `${p}, () => {}` },
      { name: "readFile", args: `${p}, { flag: ${this.flag()} }, () => {}` },
    ]);
  }

  fsPiece(): Piece {
    const { name, args } = this.fsCall();
    const fs = this.module("fs");
    const g = this.fresh();
    const promises = this.pick([
      `readFile(${this.path()})`,
      `writeFile('out.txt', 'x')`,
      `open(${this.path()}, ${this.flag()}).then((h) => h.close())`,
    ]);
    return this.pick<Piece>([
      { code: `require(${fs}).${name}(${args})` },
      { code: `const ${g} = require(${fs}); ${g}.${name}(${args})` },
      { code: `var ${g} = require(${fs}); ${g}.${name}(${args})` },
      { code: `const { ${name} } = require(${fs}); ${name}(${args})` },
      { code: `const { ${name}: ${g} } = require(${fs}); ${g}(${args})` },
      { code: `const { ${name}: ${g} = null } = require(${fs}); ${g}(${args})` },
      { code: `const { ...${g} } = require(${fs}); ${g}.${name}(${args})` },
      { code: `let ${g}; ${g} = require(${fs}); ${g}.${name}(${args})` },
      { code: `const [${g}] = [require(${fs})]; ${g}.${name}(${args})` },
      { code: `const ${g} = Object.assign({}, require(${fs})); ${g}.${name}(${args})` },
      { code: `require(${fs})['${name}'](${args})` },
      { code: `require(${fs})?.${name}(${args})` },
      { code: `require(${fs}).${name}?.(${args})` },
      { code: `require(${fs}).${name}.call(null, ${args})` },
      { code: `const ${g} = require(${fs}).promises; ${g}.${promises}` },
      { code: `require(${fs}).promises.${promises}` },
      { code: `const ${g} = require(${this.module("fs/promises")}); ${g}.${promises}` },
      { code: `const { promises: ${g} } = require(${fs}); ${g}.${promises}` },
      { imports: `import ${g} from ${this.specifier("fs")};`, code: `${g}.${name}(${args})` },
      { imports: `import * as ${g} from ${this.specifier("fs")};`, code: `${g}.${name}(${args})` },
      { imports: `import { ${name} as ${g} } from ${this.specifier("fs")};`, code: `${g}(${args})` },
      { code: `import(${fs}).then((${g}) => ${g}.${name}(${args}))` },
      { code: `(async () => (await import(${fs})).${name}(${args}))()` },
      { code: `module.require(${fs}).${name}(${args})` },
    ]);
  }

  envPiece(): Piece {
    return {
      code: this.pick([
        "console.log(process.env.HOME)",
        "console.log(process.env['PATH'])",
        "console.log(process['env'].HOME)",
        "const { env } = process; console.log(env.HOME)",
        "console.log(process?.env?.HOME)",
        "console.log(Object.keys(process.env).length)",
        "console.log(process.\\u0065nv.HOME)",
        "const e = 'env'; console.log(process[e].HOME)",
        "console.log(this.process.env.HOME)",
        "console.log((function () { return this })().process.env.HOME)",
        "console.log(globalThis.process.env.HOME)",
        "console.log(global.process.env.HOME)",
        `console.log(require(${this.module("process")}).env.HOME)`,
        "console.log(JSON.stringify(process.env).length)",
        "console.log('HOME' in process.env)",
        "Error.prepareStackTrace = (e, s) => s; const s = new Error().stack; console.log(s[0].getThis().process.env.HOME)",
        "const o = { f() { return this } }; const f = o.f; console.log(f().process.env.HOME)",
        "console.log((() => this)().process.env.HOME)",
      ]),
    };
  }

  codePiece(): Piece {
    const k = this.pick(["'constructor'", "'constr' + 'uctor'", "['constructor'][0]"]);
    return {
      code: this.pick([
        "eval('1 + 1')",
        "\\u0065val('1')",
        "(0, eval)('1')",
        "globalThis.eval('1')",
        "this.eval('1')",
        "new Function('return 1')()",
        "Function('return 1')()",
        "(() => 0).constructor('return 1')()",
        "(async () => 0).constructor('return 1')()",
        "[].map.constructor('return 1')()",
        `const k = ${k}; (() => 0)[k]('return 1')()`,
        `const k = ${k}; [(() => 0)[k]][0]('return 1')()`,
        `const k = ${k}; ({ f: (() => 0)[k] }).f('return 1')()`,
        `const k = ${k}; ((() => 0)[k] || 0)('return 1')()`,
        `const k = ${k}; const g = (x) => x[k]; g(() => 0)('return 1')()`,
        `const k = ${k}; const F = (() => 0)[k]; F('return 1')()`,
        `const k = ${k}; const a = []; a.push((() => 0)[k]); a[0]('return 1')()`,
        `const k = ${k}; ['return 1'].map((() => 0)[k]).map((f) => f())`,
        `const k = ${k}; new ((() => 0)[k])('return 1')()`,
        `const k = ${k}; const o = {}; o.f = (() => 0)[k]; o.f('return 1')()`,
        `const k = ${k}; const { [k]: F } = () => 0; F('return 1')()`,
        `const k = ${k}; function get(x) { return x[k] } get(() => 0)('return 1')()`,
        `const k = ${k}; (() => 0)[k].call(null, 'return 1')()`,
        "Object.getPrototypeOf(function () {}).constructor('return 1')()",
        "Reflect.construct(Function, ['return 1'])()",
        `require(${this.module("vm")}).runInThisContext('1')`,
        "setTimeout('1', 0)",
      ]),
    };
  }

  execPiece(): Piece {
    const cp = this.module("child_process");
    return {
      code: this.pick([
        `require(${cp}).execSync('id')`,
        `const { execSync: x } = require(${cp}); x('id')`,
        `this.require(${cp}).execSync('id')`,
        "process.binding('spawn_sync')",
        `require(${this.module("module")})._load(${cp}).execSync('id')`,
        `module.constructor._load(${cp}).execSync('id')`,
        `process.mainModule.require(${cp}).execSync('id')`,
        `require.main.require(${cp}).execSync('id')`,
        `require(${this.module("net")}).connect(9, '127.0.0.1').on('error', () => {})`,
        `require(${this.module("http")}).get('http://127.0.0.1:9').on('error', () => {})`,
        "fetch('http://127.0.0.1:9').catch(() => 0)",
        `require(${this.module("dns")}).lookup('localhost', () => {})`,
        `require(${this.module("crypto")}).setEngine('libfoo.so')`,
        `require(${this.module("os")}).userInfo()`,
        `require(${this.str("./lib.js")})`,
        `require(${this.str("./data.json")}).x`,
        `require('./' + 'data.json')`,
        `require(${this.module("worker_threads")})`,
      ]),
    };
  }

  purePiece(): Piece {
    return {
      code: this.pick([
        "console.log(JSON.stringify({ a: [1, 2].map((x) => x * 2) }))",
        "const u = {}; for (const l of ['a', 'b', 'a']) u[l] = (u[l] || 0) + 1; console.log(u)",
        "const rows = [[1, 'x', 2.5]]; console.log(rows.map((r) => r[2]).reduce((a, b) => a + b, 0))",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source of a program, not a template
        "const o = { x: 1 }; const k = 'x'; console.log(o[k] + 1, `${o[k]}`)",
        "class A { constructor() { this.v = 2 } get w() { return this.v * 2 } } console.log(new A().w)",
        "const { a, b: [c] } = { a: 1, b: [2] }; console.log(a + c)",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source of a program, not a template
        "console.log(`sum ${1 + 2}`, String.raw`a\\nb`)",
        "const o = { p: { q: 1 } }; console.log(o?.p?.q, o.r?.s)",
        `console.log(require(${this.module("path")}).join('a', 'b'))`,
        `console.log(require(${this.module("crypto")}).createHash('sha256').update('x').digest('hex'))`,
        "console.log(Buffer.from('x').toString('base64'))",
        "process.stdout.write(String(process.argv.length) + '\\n')",
        "\\u0063onsole.log(1)",
        "console.log(require('./data.json').list.length)",
        "function* g() { yield 1 } console.log([...g()])",
        "async function f() { return 1 } f().then((x) => console.log(x))",
        "console.log(new Map([[1, 2]]).get(1), 'abc'.replace(/b/g, (m) => m.toUpperCase()))",
        "const o = { x: 1, y: 2 }; for (const k of Object.keys(o)) console.log(k, o[k] * 2)",
        "const i = 1; console.log(['a', 'b'][i], 'xyz'[i + 1])",
        `console.log(require(${this.module("zlib")}).gzipSync('x').length)`,
        "label: for (;;) { break label }",
      ]),
    };
  }

  piece(): Piece {
    const kind = this.pick(["fs", "fs", "fs", "env", "code", "code", "exec", "pure", "pure"]);
    if (kind === "fs") return this.fsPiece();
    if (kind === "env") return this.envPiece();
    if (kind === "code") return this.codePiece();
    if (kind === "exec") return this.execPiece();
    return this.purePiece();
  }

  /** A piece's code where it runs: at the top, in a function, a class, a callback. */
  wrap(code: string): string {
    return this.pick([
      code,
      code,
      `try { ${code} } catch {}`,
      `function main() { ${code} } main()`,
      `(() => { ${code} })()`,
      `class W { static run() { ${code} } } W.run()`,
      `setTimeout(() => { ${code} }, 0)`,
      `if (process.argv.length >= 0) { ${code} }`,
    ]);
  }

  program(): JsProgram {
    const pieces = Array.from({ length: this.pick([1, 1, 2]) }, () => this.piece());
    const imports = pieces.map((p) => p.imports ?? "").join(" ");
    // Each piece in its own try, so that one that throws does not hide what the next one does.
    const body = pieces.map((p) => `try { ${this.wrap(p.code)} } catch {}`).join("\n");
    return { code: imports ? `${imports}\n${body}` : body, module: imports !== "" };
  }
}

export const jsProgram = fc.gen().map((g) => {
  const pick: Pick = (items) => g(fc.constantFrom, ...items);
  const chance = (percent: number) => g(fc.integer, { min: 0, max: 99 }) < percent;
  return new Writer(pick, chance).program();
});
