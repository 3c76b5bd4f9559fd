/**
 * The JavaScript reader against Node. Generated programs (differential/jsGenerator.ts) run in one
 * Node process (the one the proxy runs: process.execPath), each in a worker thread as `node -e`
 * runs a script, with a preload that records what really happens (differential/nodeHook.cjs:
 * requires, fs calls, processes, the network, process.env, eval and Function, native code).
 * Whenever the reader lets a program through under C-app, its run must have done nothing the
 * reader's rules refuse: no module but the pure ones, fs and JSON files it named; no process, host,
 * variable of the environment, code from text or native code; and no file but the literal paths
 * it reported, each with the access it reported (a read as read or write, a write as write).
 *
 * MCPGUARD_DIFF_RUNS and MCPGUARD_DIFF_SEED run more programs or other ones.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { readJavaScript } from "../src/code/javascript.ts";
import { emptyUse } from "../src/code/use.ts";
import { type JsProgram, jsProgram } from "./differential/jsGenerator.ts";

const DRIVER = join(import.meta.dirname, "differential", "nodeDriver.cjs");
const RUNS = Number(process.env.MCPGUARD_DIFF_RUNS ?? 60);
const SEED = Number(process.env.MCPGUARD_DIFF_SEED ?? 30);

interface Event {
  kind: "load" | "fs" | "exec" | "net" | "env" | "code" | "native";
  fn?: string;
  args?: unknown[];
  request?: string;
  resolved?: string | null;
  key?: string;
}
interface Run {
  events: Event[];
  error: string;
}

const scratches: string[] = [];
afterAll(() => {
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

/** The programs' runs, each in the folder of its index under the folder returned. */
function run(programs: JsProgram[]): { runs: Run[]; base: string } {
  const base = mkdtempSync(join(tmpdir(), "mcpguard-jsdiff-"));
  scratches.push(base);
  const done = spawnSync(process.execPath, [DRIVER], {
    input: JSON.stringify({ scratch: base, programs }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    cwd: base,
    env: { PATH: "/nonexistent", HOME: base, SECRET: "s3cret" },
  });
  if (done.status !== 0) throw new Error(`the Node driver failed: ${done.stderr}`);
  return { runs: JSON.parse(done.stdout), base };
}

const PURE = new Set([
  "assert",
  "buffer",
  "crypto",
  "events",
  "path",
  "querystring",
  "string_decoder",
  "url",
  "util",
  "zlib",
  "stream",
  "readline",
  "timers",
  "perf_hooks",
  "punycode",
  "console",
  "fs",
  "fs/promises",
]);

/** The paths an fs call takes, each with what the call does to it, by the call's name and flags. */
const FS_PATHS: Record<string, string> = {
  readFileSync: "r",
  readFile: "r",
  readdirSync: "r",
  readdir: "r",
  opendirSync: "r",
  opendir: "r",
  createReadStream: "r",
  openSync: "r",
  open: "r",
  writeFileSync: "w",
  writeFile: "w",
  appendFileSync: "w",
  appendFile: "w",
  createWriteStream: "w",
  mkdirSync: "w",
  mkdir: "w",
  rmSync: "w",
  rm: "w",
  unlinkSync: "w",
  unlink: "w",
  rmdirSync: "w",
  rmdir: "w",
  truncateSync: "w",
  truncate: "w",
  renameSync: "ww",
  rename: "ww",
  copyFileSync: "rw",
  copyFile: "rw",
  cpSync: "rw",
  cp: "rw",
  linkSync: "rw",
  link: "rw",
  symlinkSync: "mw",
  existsSync: "m",
  exists: "m",
  statSync: "m",
  stat: "m",
  lstatSync: "m",
  lstat: "m",
  accessSync: "m",
  access: "m",
  realpathSync: "m",
  realpath: "m",
};
/** Functions that take descriptors, not paths. */
const FD_FUNCTIONS =
  /^(?:promises\.)?(?:readSync|writeSync|closeSync|fstatSync|close|read|write|fstat|fsync)$/;

/** Whether open flags (a string, or an options object's flag or flags) change the file. */
function writes(args: unknown[]): boolean {
  for (const arg of args.slice(1, 3)) {
    const flag =
      typeof arg === "string"
        ? arg
        : typeof arg === "object" && arg !== null
          ? ((arg as { flag?: string }).flag ?? (arg as { flags?: string }).flags)
          : undefined;
    if (typeof flag === "string" && /[wa+]/.test(flag)) return true;
    if (typeof arg === "number") return true;
  }
  return false;
}

/** What of the run the reader's rules refuse, given what it let through and the files it reported. */
function violations(program: JsProgram, run: Run, dir: string): string[] {
  const use = emptyUse();
  const why = readJavaScript(program.code, program.module, use);
  if (why !== undefined) return [];
  const reported = use.files.map((f) => ({ path: resolve(dir, f.path), access: f.access }));
  const found: string[] = [];
  for (const e of run.events) {
    if (e.kind === "load") {
      const name = (e.request ?? "").replace(/^node:/, "");
      if (PURE.has(name)) continue;
      const json =
        e.resolved?.endsWith(".json") && reported.some((f) => f.path === e.resolved && f.access === "read");
      if (!json) found.push(`it loaded ${e.request} (${e.resolved})`);
    } else if (e.kind === "fs") {
      const fn = (e.fn ?? "").replace(/^promises\./, "");
      if (FD_FUNCTIONS.test(e.fn ?? "")) continue;
      const paths = FS_PATHS[fn];
      if (paths === undefined) {
        found.push(`it called fs.${e.fn}, which the test does not model`);
        continue;
      }
      const args = e.args ?? [];
      for (let i = 0; i < paths.length; i++) {
        let p = args[i];
        if (typeof p === "number") continue;
        if (typeof p === "string" && p.startsWith("file:")) p = fileURLToPath(p);
        const access = paths[i] === "r" && writes(args) ? "w" : paths[i];
        const full = typeof p === "string" ? resolve(dir, p) : String(p);
        const ok = reported.some(
          (f) =>
            f.path === full &&
            (access === "m" || f.access === "write" || (access === "r" && f.access === "read")),
        );
        if (!ok)
          found.push(
            `fs.${e.fn} ${access === "w" ? "wrote" : access === "r" ? "read" : "looked at"} ${full}, reported ${JSON.stringify(use.files)}`,
          );
      }
    } else {
      found.push(`it reached ${e.kind}: ${e.fn ?? e.key} ${JSON.stringify(e.args ?? "")}`);
    }
  }
  return found;
}

/** Disagreements by kind, each with its shortest program. */
function summary(problems: { code: string; p: string }[]): string[] {
  const kinds = new Map<string, { code: string; p: string; n: number }>();
  for (const problem of problems) {
    const kind = problem.p.replace(/\/[^\s,]*|"[^"]*"|\d+/g, "_").slice(0, 60);
    const seen = kinds.get(kind);
    if (!seen || problem.code.length < seen.code.length)
      kinds.set(kind, { ...problem, n: (seen?.n ?? 0) + 1 });
    else seen.n++;
  }
  return [...kinds.values()].map((k) => `${k.p} (${k.n}x)\n    ${k.code}`);
}

function check(programs: JsProgram[]): string[] {
  const { runs, base } = run(programs);
  const problems = programs.flatMap((program, i) =>
    violations(program, runs[i] as Run, join(base, String(i))).map((p) => ({ code: program.code, p })),
  );
  return summary(problems);
}

/**
 * What the generated programs found, one program of each kind: each ran past the reader before its
 * fix, and its run reaches what the reader refuses (or a file it did not report, or not as it said).
 */
const FOUND: JsProgram[] = [
  // this outside a class is the global object.
  "console.log(this.process.env.HOME)",
  "(function () { return this })().require('child_process').execSync('id')",
  "console.log((() => this)().eval('1'))",
  // fs taken other than by name: rest, defaults, a later assignment, an array, a copy.
  "const { ...f } = require('fs'); f.readFileSync(process.argv[1] || 'a.txt')",
  "const { readFileSync: r = null } = require('fs'); r('/etc/hostname')",
  "let f; f = require('fs'); f.readFileSync('/etc/hostname')",
  "const [f] = [require('fs')]; f.writeFileSync('b.txt', 'x')",
  "Object.assign({}, require('fs')).readFileSync('/etc/hostname')",
  // fs.promises, by its chain and by a name.
  "require('fs').promises.readFile(Buffer.from('/etc/hostname'))",
  "const p = require('fs').promises; p.readFile(new URL('file:///etc/hostname'))",
  // fs from an import declaration or import().
  "import('fs').then((f) => f.readFileSync('/etc/hostname'))",
  // Flags that open a file for writing, and open() that reads.
  "require('fs').readFileSync('a.txt', { flag: 'a+' })",
  "require('fs').openSync('a.txt', 'w')",
  "require('fs').openSync('/etc/hostname')",
  // A value read by a computed name (Function) handed on and called elsewhere.
  "const k = 'constructor'; ({ f: (() => 0)[k] }).f('return 1')()",
  "const k = 'constructor'; ['return 1'].map((() => 0)[k]).map((f) => f())",
  "const k = 'constructor'; const a = []; a.push((() => 0)[k]); a[0]('return 1')()",
  // The stack's frames, whose this is the global object; a native OpenSSL engine.
  "Error.prepareStackTrace = (e, s) => s; console.log(new Error().stack[0].getThis().process.env.HOME)",
  "require('crypto').setEngine('libfoo.so')",
]
  .map((code) => ({ code, module: false }))
  .concat([
    { code: "import * as f from 'fs'; f.writeFileSync('b.txt', 'x')", module: true },
    { code: "import { readFileSync as r } from 'node:fs'; r(process.argv[1] || 'a.txt')", module: true },
  ]);

/** Programs that compute, open literal files or read by a computed name as data: they pass. */
const BENIGN: JsProgram[] = [
  'const c = require("crypto"); console.log(c.createHash("sha256").update("sample-app").digest("hex"))',
  "const fs = require('fs'); const c = JSON.parse(fs.readFileSync('data.json', 'utf8')); fs.mkdirSync('output', {recursive: true}); fs.writeFileSync('output/VERSION', c.x + '.0\\n'); console.log(fs.readFileSync('output/VERSION', 'utf8').trim())",
  "console.log(require('./data.json').list.length)",
  "const fs = require('node:fs'); const lines = fs.readFileSync('a.txt', 'utf8').split('\\n'); const u = {}; for (const l of lines) u[l] = (u[l] || 0) + 1; console.log(Object.keys(u).length)",
  "const { readFileSync } = require('fs'); console.log(readFileSync('b.txt', 'utf8'))",
  "const rows = [[1, 'x', 2.5]]; let t = 0; for (let i = 0; i < rows.length; i++) t += rows[i][2]; console.log(t)",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source of a program, not a template
  "const o = { x: 1 }; const k = 'x'; console.log(o[k] + 1, `${o[k]}`, String(o[k]))",
  "class A { constructor() { this.v = 2 } get w() { return this.v * 2 } } console.log(new A().w)",
  "require('fs').readFileSync('a.txt', { encoding: 'utf8', flag: 'r' }); require('fs').openSync('b.txt', 'r')",
  "const p = require('fs').promises; p.readFile('a.txt').then((b) => console.log(b.length))",
].map((code) => ({ code, module: false }));

describe("the JavaScript reader against Node", () => {
  it("refuses what the generated programs found, whose runs reach what it refuses", () => {
    const { runs } = run(FOUND);
    FOUND.forEach((program, i) => {
      const events = (runs[i] as Run).events.filter((e) => e.kind !== "load" || !PURE.has(e.request ?? ""));
      expect(events, `${program.code} does nothing`).not.toEqual([]);
    });
    expect(check(FOUND)).toEqual([]);
  });

  it("lets through the programs that compute or open literal files, as their runs show", () => {
    for (const program of BENIGN)
      expect(readJavaScript(program.code, program.module, emptyUse()), program.code).toBeUndefined();
    expect(check(BENIGN)).toEqual([]);
  });

  it(`refuses every generated program whose run reaches what it refuses (${RUNS}, seed ${SEED})`, () => {
    const programs = fc.sample(jsProgram, { seed: SEED, numRuns: RUNS });
    expect(check(programs)).toEqual([]);
  });
});
