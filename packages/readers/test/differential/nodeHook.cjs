/**
 * Preloaded (--require) into each program the JavaScript differential test runs: it records what
 * the program really does, one JSON line per event, into the file workerData.log names.
 *
 * - load: every require (Module._load), with the file it resolved to;
 * - fs: every call of an fs function (fs, fs.promises), outermost calls only, with its arguments;
 * - exec, net: child_process, net, tls, http(s), dgram, dns and fetch calls (refused, after the record);
 * - env: every read of process.env (a Proxy);
 * - code: eval, Function and its async and generator kin, vm;
 * - native: process.binding, process._linkedBinding, process.dlopen, crypto.setEngine.
 *
 * Events of Node's own code (a caller in node:internal) are left out: what counts is what the
 * program's code (the [worker eval] script, a data: module, or a builtin it handed a callback to) does.
 */
"use strict";
const fs = require("node:fs");
const Module = require("node:module");
const { workerData } = require("node:worker_threads");

const log = fs.openSync(workerData.log, "a");
const writeSync = fs.writeSync;
const HOOK = __filename;
let depth = 0;

/** Whether the first frame outside this file is Node's own code. */
function internalCaller() {
  // The program may have set Error.prepareStackTrace: the hook reads the stack as V8 writes it.
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = undefined;
  let text;
  try {
    text = String(new Error().stack);
  } finally {
    Error.prepareStackTrace = saved;
  }
  const stack = text.split("\n").slice(1);
  for (const frame of stack) {
    if (frame.includes(HOOK)) continue;
    return /\(node:|at node:/.test(frame);
  }
  return false;
}

function record(event, always = false) {
  if (depth > 0 || (!always && internalCaller())) return;
  depth++;
  try {
    writeSync(log, `${JSON.stringify(event)}\n`);
  } finally {
    depth--;
  }
}

/** A path-like argument as text: a string, a Buffer, a file: URL; else its type. */
function shown(value) {
  if (typeof value === "string") return value;
  if (Buffer.isBuffer(value)) return value.toString();
  if (value instanceof URL) return value.href;
  if (value === null || value === undefined) return value;
  if (typeof value === "object") {
    try {
      return JSON.parse(JSON.stringify(value));
    } catch {
      return "[object]";
    }
  }
  return typeof value === "function" ? "[function]" : value;
}

function wrap(owner, name, kind, label, refuse = false, always = false) {
  const original = owner[name];
  if (typeof original !== "function") return;
  const wrapped = function (...args) {
    if (depth === 0) record({ kind, fn: `${label}${name}`, args: args.map(shown) }, always);
    if (refuse) throw new Error(`${label}${name} is refused by the differential test's hook`);
    depth++;
    try {
      return new.target ? Reflect.construct(original, args, new.target) : original.apply(this, args);
    } finally {
      depth--;
    }
  };
  Object.defineProperty(wrapped, "name", { value: name });
  owner[name] = wrapped;
}

// fs and fs.promises: every function, by name.
for (const name of Object.keys(fs)) {
  if (name === "promises" || /^[A-Z]/.test(name)) continue;
  wrap(fs, name, "fs", "");
}
for (const name of Object.keys(fs.promises)) {
  if (/^[A-Z]/.test(name) || name === "constants") continue;
  wrap(fs.promises, name, "fs", "promises.");
}

// Processes and the network: recorded (whoever in Node calls them: only a program makes Node
// start a process or open a connection), then refused. Every TCP connection, http(s), http2 and
// tls included, is a net.Socket's connect; the modules that are slow to load are wrapped when the
// program loads them.
const blocked = {
  child_process: ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"],
  net: ["connect", "createConnection", "createServer"],
  dns: ["lookup", "resolve", "resolve4", "resolve6", "resolveAny", "reverse"],
  dgram: ["createSocket"],
  http: ["createServer"],
  https: ["createServer"],
  http2: ["connect", "createServer"],
  tls: ["connect", "createServer"],
};
const LAZY = new Set(["dgram", "http", "https", "http2", "tls"]);
function block(id) {
  const mod = require(`node:${id}`);
  if (mod.__mcpguardHooked) return;
  mod.__mcpguardHooked = true;
  for (const name of blocked[id])
    wrap(mod, name, id === "child_process" ? "exec" : "net", `${id}.`, true, true);
}
for (const id of Object.keys(blocked)) if (!LAZY.has(id)) block(id);
require("node:net").Socket.prototype.connect = () => {
  record({ kind: "net", fn: "net.Socket.connect", args: [] }, true);
  throw new Error("net.Socket.connect is refused by the differential test's hook");
};
if (typeof globalThis.fetch === "function") wrap(globalThis, "fetch", "net", "", true, true);

// Native code.
for (const name of ["binding", "_linkedBinding", "dlopen"])
  wrap(process, name, "native", "process.", true, true);
wrap(require("node:crypto"), "setEngine", "native", "crypto.", true, true);

// Code from text: eval, the Function constructors, vm.
const codeProxy = (target, label) =>
  new Proxy(target, {
    apply(t, self, args) {
      record({ kind: "code", fn: label, args: args.map(shown) });
      return Reflect.apply(t, self, args);
    },
    construct(t, args, newTarget) {
      record({ kind: "code", fn: label, args: args.map(shown) });
      return Reflect.construct(t, args, newTarget === codeFunctions.get(t) ? t : newTarget);
    },
  });
const codeFunctions = new Map();
// biome-ignore lint/security/noGlobalEval: the hook wraps eval to record calls, it runs none.
globalThis.eval = codeProxy(globalThis.eval, "eval");
for (const [sample, label] of [
  [() => {}, "Function"],
  [async () => {}, "AsyncFunction"],
  [function* () {}, "GeneratorFunction"],
  [async function* () {}, "AsyncGeneratorFunction"],
]) {
  const maker = Object.getPrototypeOf(sample).constructor;
  const proxy = codeProxy(maker, label);
  codeFunctions.set(maker, proxy);
  Object.defineProperty(Object.getPrototypeOf(sample), "constructor", {
    value: proxy,
    writable: true,
    configurable: true,
  });
  if (label === "Function") globalThis.Function = proxy;
}
for (const name of ["runInThisContext", "runInNewContext", "runInContext", "compileFunction", "Script"]) {
  wrap(require("node:vm"), name, "code", "vm.");
}

// Modules: what each require asks for and the file it resolves to.
const load = Module._load;
Module._load = function (request, parent, isMain, ...rest) {
  if (depth === 0 && !isMain) {
    let resolved;
    try {
      resolved = Module._resolveFilename(request, parent, isMain);
    } catch {
      resolved = null;
    }
    // require() is Node's code calling Module._load for the program's.
    record({ kind: "load", request, resolved }, true);
  }
  depth++;
  try {
    return load.call(this, request, parent, isMain, ...rest);
  } finally {
    depth--;
    const id = String(request).replace(/^node:/, "");
    if (LAZY.has(id)) block(id);
  }
};

// The environment: every read the program's code makes.
const env = process.env;
process.env = new Proxy(env, {
  get(target, key) {
    if (typeof key === "string") record({ kind: "env", key });
    return Reflect.get(target, key);
  },
  has(target, key) {
    if (typeof key === "string") record({ kind: "env", key });
    return Reflect.has(target, key);
  },
  ownKeys(target) {
    record({ kind: "env", key: "*" });
    return Reflect.ownKeys(target);
  },
  getOwnPropertyDescriptor(target, key) {
    if (typeof key === "string") record({ kind: "env", key });
    return Reflect.getOwnPropertyDescriptor(target, key);
  },
});
