/**
 * CPython's own grammar for the Python reader (python.ts): a helper process, `python3 -I -S
 * pyast.py`, parses the code with `ast` and answers what it imports, names, calls and opens
 * (pyast.py says what confines it). The interpreter is the one the command would run: its name
 * looked up on the server's PATH, version managers' shims skipped (they pick an interpreter by
 * the directory and exec it; the helper needs the binary itself).
 *
 * The decision path is synchronous (the relay forwards frames in order), so a worker thread owns
 * the helpers' pipes and the caller waits on a shared counter (Atomics.wait) for the answer, for
 * at most a time-out: past it the call is refused, and the helper is killed and started again on
 * the next call. One helper per interpreter, started on first use or ahead of it
 * ({@link warmPythonReader}); each is a child of the proxy (its pipes close on exec, so no server
 * inherits them) and exits when its input ends, so it goes with the proxy. The worker thread does
 * not keep the proxy alive. Answers are kept for the last few texts: L1 and L2 read a call's code
 * once.
 */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessagePort, Worker } from "node:worker_threads";

/**
 * node:worker_threads when the first helper starts: the readers package loads with every policy
 * (C-app and C-full starts), and node:worker_threads costs such a start 1-4 ms it does not use.
 */
const workerThreads = () => process.getBuiltinModule("node:worker_threads");

/** Longest code read at all (as the token reader before it: about as many characters as it took tokens). */
const MAX_PYTHON_LENGTH = 200_000;
/** How long a call waits for an answer of a running helper, and on top of it for one to start. */
const CALL_MS = 2_000;
const START_MS = 5_000;
/** Requests one helper may have waiting; more are refused at once. */
const MAX_QUEUE = 4;
/** Largest answer read from a helper. */
const MAX_ANSWER = 64 * 1024 * 1024;
const CACHED = 16;

/** How the helper's process is started: the argv to run instead (through a launcher) and what it reads on fd 3. */
export type HelperLauncher = (argv: readonly string[]) => { argv: string[]; fd3?: string };

export interface PythonReaderOptions {
  /** The PATH the server's commands run with: where `python3` is looked up. Default: the proxy's. */
  path?: string;
  /** Start each helper through this (the kernel layer's launcher, with a ruleset of its own). */
  launcher?: HelperLauncher;
  /** Why an interpreter may not run as the helper (it lies where the server may write), or undefined. */
  distrust?: (file: string) => string | undefined;
  /** How long a call waits for the answer of a running helper. */
  timeoutMs?: number;
}

/** What the helper found in the code (see pyast.py), or why it has no reading. */
export type PyAnswer =
  | { events: PyEvent[] }
  | { error: string; line?: number | null; col?: number | null; limit?: 1 }
  /** No answer: the helper could not be started, died, or took too long. */
  | { failed: string };

/** A literal text (`s`, `b` for bytes), a number, or an expression of another kind (`x`). */
export type PyLiteral = { s: string; b?: 1 } | { num: 1 } | { x: string };
export interface PyCall {
  args: PyLiteral[];
  /** Keyword arguments; a null name is `**mapping`. */
  kw: [string | null, PyLiteral][];
}
interface Marks {
  call?: PyCall;
  /** In an annotation. */
  ann?: 1;
  /** The object of an attribute (`x` in `x.y`). */
  dot?: 1;
  /** The class argument of isinstance or issubclass. */
  typed?: 1;
  line?: number;
}
export type PyEvent =
  | { k: "import"; m: string; as: string | null; line?: number }
  | { k: "from"; m: string; lv: number; n: [string, string | null][]; line?: number }
  | ({ k: "name"; id: string; ctx: "load" | "store" | "del" } & Marks)
  | ({ k: "attr"; a: string; ctx: "load" | "store" | "del"; on?: string; path?: string } & Marks)
  | { k: "bind"; id: string; how: string; line?: number }
  | { k: "str"; v: string; ann?: 1; line?: number }
  | { k: "div"; r: PyLiteral; line?: number };

let options: PythonReaderOptions = {};
/** Which configuration the running helpers were started with. */
let generation = 0;

/** Where python3 is looked up, how helpers start, how long a call waits; running helpers stop. */
export function configurePythonReader(next: PythonReaderOptions): void {
  options = { ...options, ...next };
  generation++;
  answers.clear();
  worker?.postMessage({ type: "stop-all" });
  ready.clear();
}

/** The helper's script: beside this module (src/ in tests, dist/ once built). */
function helperScript(): string {
  return fileURLToPath(new URL("./pyast.py", import.meta.url));
}

/**
 * The interpreter `program` (argv[0] of the command) runs as: an absolute path as it is, a name
 * looked up on the server's PATH, shims skipped; real paths. Undefined where there is none.
 */
export function pythonInterpreter(program: string, cwd?: string): string | undefined {
  if (program.includes("/")) {
    const file = isAbsolute(program) ? program : cwd ? join(cwd, program) : undefined;
    if (!file) return undefined;
    if (isShim(file)) return which(basename(program), options.path ?? process.env.PATH);
    return executable(file) ? real(file) : undefined;
  }
  return which(program, options.path ?? process.env.PATH);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    // Not there or not executable: not a candidate.
    return false;
  }
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    // Missing: no interpreter there.
    return undefined;
  }
}

/**
 * A version manager's shim (pyenv, asdf): a script in a `shims` directory that picks an
 * installation and execs it (as packages/kernel/src/compile.ts reads them).
 */
function isShim(candidate: string): boolean {
  if (basename(dirname(candidate)) !== "shims") return false;
  try {
    const fd = openSync(candidate, "r");
    try {
      const head = Buffer.alloc(2);
      return readSync(fd, head, 0, 2, 0) === 2 && head.toString("latin1") === "#!";
    } finally {
      closeSync(fd);
    }
  } catch {
    // Unreadable: not a shim.
    return false;
  }
}

function which(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (executable(candidate) && !isShim(candidate)) return real(candidate);
  }
  return undefined;
}

/** The helper's own command line for `interpreter`. */
export function helperArgv(interpreter: string): string[] {
  return [interpreter, "-I", "-S", helperScript()];
}

// The worker thread: it starts the helpers, writes the requests, reads the answers and hands
// each to the caller (a message on `port`, then a bump of the shared counter). Plain JavaScript
// run with `eval`, so the bundle needs no file of it.
const WORKER = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { spawn } = require("node:child_process");
const { state, port, maxQueue, maxAnswer } = workerData;
const helpers = new Map();
function hand(seq, message) {
  port.postMessage({ seq, ...message });
  Atomics.add(state, 0, 1);
  Atomics.notify(state, 0);
}
function start(key, launch) {
  const stdio = launch.fd3 === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", "pipe"];
  const h = { key, ready: false, buffer: Buffer.alloc(0), queue: [], current: undefined, stderr: "", gone: undefined };
  helpers.set(key, h);
  try {
    h.child = spawn(launch.argv[0], launch.argv.slice(1), { stdio, env: {}, cwd: "/" });
  } catch (error) {
    gone(h, "could not be started: " + error.message);
    return h;
  }
  if (launch.fd3 !== undefined) {
    h.child.stdio[3].on("error", () => {});
    h.child.stdio[3].end(launch.fd3);
  }
  h.child.stdin.on("error", () => {});
  h.child.stdout.on("data", (chunk) => {
    h.buffer = h.buffer.length ? Buffer.concat([h.buffer, chunk]) : chunk;
    drain(h);
  });
  h.child.stderr.on("data", (chunk) => {
    h.stderr = (h.stderr + chunk.toString("utf8")).slice(-4096);
  });
  h.child.on("error", (error) => gone(h, "could not be started: " + error.message));
  h.child.on("close", (code, signal) =>
    gone(h, signal ? "was killed by " + signal : "exited with status " + code),
  );
  return h;
}
function drain(h) {
  while (h.buffer.length >= 4 && !h.gone) {
    const size = h.buffer.readUInt32BE(0);
    if (size > maxAnswer) return kill(h, "answered more than " + maxAnswer + " bytes");
    if (h.buffer.length < 4 + size) return;
    const body = h.buffer.subarray(4, 4 + size);
    h.buffer = h.buffer.subarray(4 + size);
    let message;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      // The helper is killed, which is the answer to a broken one.
      return kill(h, "answered what is not JSON");
    }
    if (!h.ready) {
      if (message.error) return kill(h, "runs " + (message.hello || []).join(".") + ": " + message.error);
      h.ready = true;
      h.version = message.hello;
      next(h);
      continue;
    }
    const current = h.current;
    h.current = undefined;
    if (current && message.id === current.seq)
      hand(current.seq, { answer: message, pid: h.child.pid, version: h.version });
    next(h);
  }
}
function next(h) {
  if (!h.ready || h.current || h.queue.length === 0 || h.gone) return;
  const request = h.queue.shift();
  h.current = request;
  const body = Buffer.from(JSON.stringify({ id: request.seq, code: request.code, bytes: request.bytes }), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  h.child.stdin.write(Buffer.concat([head, body]));
}
function gone(h, why) {
  if (helpers.get(h.key) === h) helpers.delete(h.key);
  if (h.gone) return;
  const said = h.stderr.trim().split("\\n").pop();
  h.gone = why + (said ? " (" + said.slice(0, 300) + ")" : "");
  for (const request of [h.current, ...h.queue]) if (request) hand(request.seq, { failed: h.gone });
  h.current = undefined;
  h.queue = [];
}
function kill(h, why) {
  try {
    h.child?.kill("SIGKILL");
  } catch {
    // Already gone: nothing left to kill.
  }
  gone(h, why);
}
parentPort.on("message", (m) => {
  if (m.type === "call" || m.type === "start") {
    const h = helpers.get(m.key) ?? start(m.key, m.launch);
    if (m.type === "start") return;
    if (h.gone) return hand(m.seq, { failed: h.gone });
    if (h.queue.length >= maxQueue) return hand(m.seq, { failed: "has " + maxQueue + " requests waiting already" });
    h.queue.push({ seq: m.seq, code: m.code, bytes: m.bytes });
    next(h);
  } else if (m.type === "kill") {
    const h = helpers.get(m.key);
    if (h) kill(h, m.why);
  } else if (m.type === "stop-all") {
    for (const h of [...helpers.values()]) kill(h, "stopped");
  } else if (m.type === "pids") {
    hand(m.seq, { pids: [...helpers.values()].filter((h) => h.child && !h.gone).map((h) => h.child.pid) });
  }
});
`;

let worker: Worker | undefined;
let state: Int32Array;
let port: MessagePort;
let seq = 0;
/** Helpers (by key) that have answered since they started: a call to them gets no start-up time. */
const ready = new Set<string>();
const answers = new Map<string, PyAnswer>();

function ensureWorker(): Worker {
  if (worker) return worker;
  state = new Int32Array(new SharedArrayBuffer(4));
  const { MessageChannel, Worker } = workerThreads();
  const channel = new MessageChannel();
  const created = new Worker(WORKER, {
    eval: true,
    workerData: { state, port: channel.port2, maxQueue: MAX_QUEUE, maxAnswer: MAX_ANSWER },
    transferList: [channel.port2],
    // Nothing of the proxy's environment is the worker's business (the helpers get none).
    env: {},
  });
  created.unref();
  created.on("error", () => {
    if (worker === created) worker = undefined;
  });
  created.on("exit", () => {
    if (worker === created) worker = undefined;
    ready.clear();
  });
  port = channel.port1;
  port.unref();
  worker = created;
  return created;
}

function keyOf(interpreter: string): string {
  return `${generation}\u0000${interpreter}`;
}

function launchOf(interpreter: string): { argv: string[]; fd3?: string } {
  const argv = helperArgv(interpreter);
  return options.launcher ? options.launcher(argv) : { argv };
}

/** Why `interpreter` may not be the helper, or undefined. */
function refusedInterpreter(interpreter: string): string | undefined {
  if (!existsSync(helperScript())) return `the reader's script ${helperScript()} is missing`;
  return options.distrust?.(interpreter);
}

/** Start the helper of `program` (looked up as a command would) now, without waiting for it. */
export function warmPythonReader(program = "python3"): void {
  const interpreter = pythonInterpreter(program);
  if (!interpreter || refusedInterpreter(interpreter)) return;
  const key = keyOf(interpreter);
  try {
    ensureWorker().postMessage({ type: "start", key, launch: launchOf(interpreter) });
  } catch {
    // The first call starts it.
  }
}

/** Stop every helper (they start again on the next call). */
export function stopPythonReader(): void {
  worker?.postMessage({ type: "stop-all" });
  ready.clear();
  answers.clear();
}

/** The pids of the running helpers, for tests. */
export function pythonReaderPids(): number[] {
  if (!worker) return [];
  const got = exchange({ type: "pids" }, CALL_MS);
  return "pids" in got ? (got.pids as number[]) : [];
}

/** Post `message` with a fresh sequence number and wait up to `ms` for the worker's answer to it. */
function exchange(message: Record<string, unknown>, ms: number): Record<string, unknown> {
  const w = ensureWorker();
  const mine = ++seq;
  w.postMessage({ ...message, seq: mine });
  const deadline = performance.now() + ms;
  for (;;) {
    const seen = Atomics.load(state, 0);
    const got = workerThreads().receiveMessageOnPort(port);
    if (got) {
      const answer = got.message as { seq: number };
      if (answer.seq === mine) return answer as Record<string, unknown>;
      continue;
    }
    const left = deadline - performance.now();
    if (left <= 0) return { timedOut: true };
    Atomics.wait(state, 0, seen, left);
  }
}

/**
 * The reading of `code` by `interpreter`'s own grammar, waited for synchronously. `bytes`: the
 * code is a file's bytes (a program on standard input), whose coding declaration counts, as it
 * does for the interpreter; code given with -c is text, where it does not.
 */
export function parsePython(interpreter: string, code: string, bytes = false): PyAnswer {
  if (code.length > MAX_PYTHON_LENGTH)
    return { error: `the code is longer than ${MAX_PYTHON_LENGTH} characters`, limit: 1 };
  const refused = refusedInterpreter(interpreter);
  if (refused) return { failed: refused };
  const key = keyOf(interpreter);
  const cacheKey = `${key}\u0000${bytes ? "b" : "t"}\u0000${code}`;
  const cached = answers.get(cacheKey);
  if (cached) return cached;
  let launch: { argv: string[]; fd3?: string };
  try {
    launch = launchOf(interpreter);
  } catch (error) {
    return { failed: `could not be started: ${(error as Error).message}` };
  }
  const timeout = (options.timeoutMs ?? CALL_MS) + (ready.has(key) ? 0 : START_MS);
  const got = exchange({ type: "call", key, launch, code, bytes }, timeout);
  if (got.timedOut) {
    // The helper may be stuck on this text: it is killed, and the next call starts another.
    worker?.postMessage({ type: "kill", key, why: "took too long" });
    ready.delete(key);
    return { failed: `gave no answer within ${Math.round(timeout)} ms` };
  }
  if (typeof got.failed === "string") {
    ready.delete(key);
    return { failed: got.failed };
  }
  if (!isHelperAnswer(got.answer)) {
    // An answer not in the helper's shape: the helper is not ours, or broke; no reading from it.
    worker?.postMessage({ type: "kill", key, why: "answered outside its shape" });
    ready.delete(key);
    return { failed: "answered what is not a reading (events or a syntax error)" };
  }
  ready.add(key);
  const answer: PyAnswer = got.answer;
  if (answers.size >= CACHED) answers.delete(answers.keys().next().value as string);
  answers.set(cacheKey, answer);
  return answer;
}

/*
 * The helper's answer checked field by field, not with a zod schema: the readers package keeps zod
 * out of what a start loads (the policy layer imports it, and its schemas load apart).
 */
type Fields = Record<string, unknown>;
const isFields = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v);
const optional = (v: unknown, is: (x: unknown) => boolean): boolean => v === undefined || is(v);
const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number";
const isOne = (v: unknown): boolean => v === 1;
const isNameOrNull = (v: unknown): boolean => v === null || isString(v);
const isContext = (v: unknown): boolean => v === "load" || v === "store" || v === "del";

function isLiteral(v: unknown): v is PyLiteral {
  if (!isFields(v)) return false;
  if ("s" in v) return isString(v.s) && optional(v.b, isOne);
  return "num" in v ? v.num === 1 : isString(v.x);
}

function isCall(v: unknown): v is PyCall {
  return (
    isFields(v) &&
    Array.isArray(v.args) &&
    v.args.every(isLiteral) &&
    Array.isArray(v.kw) &&
    v.kw.every((k) => Array.isArray(k) && k.length === 2 && isNameOrNull(k[0]) && isLiteral(k[1]))
  );
}

function hasMarks(e: Fields): boolean {
  return (
    optional(e.call, isCall) &&
    optional(e.ann, isOne) &&
    optional(e.dot, isOne) &&
    optional(e.typed, isOne) &&
    optional(e.line, isNumber)
  );
}

function isEvent(e: unknown): e is PyEvent {
  if (!isFields(e) || !optional(e.line, isNumber)) return false;
  switch (e.k) {
    case "import":
      return isString(e.m) && isNameOrNull(e.as);
    case "from":
      return (
        isString(e.m) &&
        isNumber(e.lv) &&
        Array.isArray(e.n) &&
        e.n.every((n) => Array.isArray(n) && n.length === 2 && isString(n[0]) && isNameOrNull(n[1]))
      );
    case "name":
      return isString(e.id) && isContext(e.ctx) && hasMarks(e);
    case "attr":
      return (
        isString(e.a) &&
        isContext(e.ctx) &&
        optional(e.on, isString) &&
        optional(e.path, isString) &&
        hasMarks(e)
      );
    case "bind":
      return isString(e.id) && isString(e.how);
    case "str":
      return isString(e.v) && optional(e.ann, isOne);
    case "div":
      return isLiteral(e.r);
    default:
      return false;
  }
}

/** The helper's answer (pyast.py): its events, or a syntax error (whose position may be null). */
function isHelperAnswer(v: unknown): v is Exclude<PyAnswer, { failed: string }> {
  if (!isFields(v)) return false;
  if (Array.isArray(v.events)) return v.events.every(isEvent);
  const position = (x: unknown) => x === undefined || x === null || isNumber(x);
  return isString(v.error) && position(v.line) && position(v.col) && optional(v.limit, isOne);
}
