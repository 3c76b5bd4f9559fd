/**
 * node code handed on the command line (`-e`, `-p`, `-` with a here-document), read with acorn.
 * Where the kernel does not confine the program (C-app) the code may use the globals that compute,
 * require pure modules and JSON files by literal name, and use `fs` only by calling its functions
 * with literal paths (open flags decide read or write). It may not reach `process.env` or
 * `process.binding`, `child_process`, the network, `eval`/`Function`, `this` outside a class (the
 * global object), or a value read by a property name computed at run time other than as data
 * (`x[k]` may be the Function constructor). Under every config the literal files it opens are
 * returned for L1's path checks. This is a check of the code's text, not a JavaScript sandbox:
 * DESIGN.md says what it does not follow, and jsDifferential.test.ts holds it to Node.
 */
import type { Confinement } from "../confinement.js";
import { requireCached } from "../moduleCache.js";
import type { Field, Invocation } from "../shell/index.js";
import { type CodeUse, confinedAll, emptyUse, type Source, sourceTexts, stdinSource } from "./use.js";

// biome-ignore lint/suspicious/noExplicitAny: ESTree nodes as acorn makes them.
type Node = any;
interface Acorn {
  parse(code: string, options: Record<string, unknown>): Node;
}
let acorn: Acorn | undefined;
const load = (): Acorn => {
  acorn ??= requireCached("acorn") as Acorn;
  return acorn;
};

const MAX_NODES = 100_000;
const GLOBALS = new Set([
  "console",
  "JSON",
  "Math",
  "Date",
  "Number",
  "String",
  "Boolean",
  "Array",
  "Object",
  "Map",
  "Set",
  "WeakMap",
  "WeakSet",
  "Symbol",
  "RegExp",
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "AggregateError",
  "parseInt",
  "parseFloat",
  "isNaN",
  "isFinite",
  "encodeURIComponent",
  "decodeURIComponent",
  "encodeURI",
  "decodeURI",
  "Buffer",
  "URL",
  "URLSearchParams",
  "TextEncoder",
  "TextDecoder",
  "Intl",
  "BigInt",
  "Promise",
  "setTimeout",
  "setInterval",
  "clearTimeout",
  "clearInterval",
  "setImmediate",
  "queueMicrotask",
  "structuredClone",
  "atob",
  "btoa",
  "undefined",
  "NaN",
  "Infinity",
  "require",
  "process",
  "__dirname",
  "__filename",
  "ArrayBuffer",
  "DataView",
  "Uint8Array",
  "Uint16Array",
  "Uint32Array",
  "Int8Array",
  "Int16Array",
  "Int32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "Uint8ClampedArray",
  "performance",
  "arguments",
]);
const OBJECT_METHODS = new Set([
  "keys",
  "values",
  "entries",
  "assign",
  "freeze",
  "fromEntries",
  "create",
  "is",
  "hasOwn",
  "isFrozen",
  "seal",
  "groupBy",
]);
const PROCESS_MEMBERS = new Set([
  "stdout",
  "stderr",
  "stdin",
  "argv",
  "exit",
  "exitCode",
  "version",
  "versions",
  "platform",
  "arch",
  "hrtime",
  "uptime",
  "memoryUsage",
  "cwd",
  "nextTick",
  "on",
  "once",
  "emitWarning",
  "pid",
]);
const FORBIDDEN_MEMBERS = new Set([
  "constructor",
  "__proto__",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
  "caller",
  "callee",
  "mainModule",
]);
const PURE_MODULES = new Set([
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
]);
const FS_MODULES = new Set(["fs", "fs/promises"]);
/** Members that load native code or hand out the global object. */
const NATIVE_MEMBERS: Record<string, string> = {
  setEngine: "loads native code (crypto.setEngine, an OpenSSL engine)",
  prepareStackTrace: "sees the stack's frames (Error.prepareStackTrace), whose this is the global object",
};
/** Functions that only read what they are given as data: a value read by a computed name may be handed to them. */
const DATA_SINKS = new Set(["String", "Number", "Boolean", "parseInt", "parseFloat", "isNaN", "isFinite"]);
const SINK_OWNERS = new Set(["console", "Math", "JSON"]);
/** Methods whose result is a number, so that `x[i]` with it is an index. */
const NUMERIC_METHODS = new Set([
  "indexOf",
  "lastIndexOf",
  "findIndex",
  "findLastIndex",
  "charCodeAt",
  "codePointAt",
  "search",
]);
const NUMERIC_OPERATORS = new Set(["-", "*", "/", "%", "**", "|", "&", "^", "<<", ">>", ">>>"]);
const DYNAMIC = "a value read by a property name computed at run time (x[k] may be the Function constructor)";
const REACHES: Record<string, string> = {
  child_process: "processes",
  cluster: "processes",
  worker_threads: "threads that run code",
  net: "the network",
  http: "the network",
  https: "the network",
  http2: "the network",
  dgram: "the network",
  dns: "the network",
  tls: "the network",
  vm: "dynamic code",
  v8: "the engine's internals",
  inspector: "the engine's internals",
  module: "the module loader",
  repl: "dynamic code",
  os: "the host",
  process: "the process",
  wasi: "native code",
};
/** fs functions and which of their first two arguments are paths (r, w, t for touch). */
const FS_FUNCTIONS: Record<string, string> = {
  readFileSync: "r",
  readFile: "r",
  writeFileSync: "w",
  writeFile: "w",
  appendFileSync: "w",
  appendFile: "w",
  existsSync: "t",
  mkdirSync: "w",
  mkdir: "w",
  readdirSync: "r",
  readdir: "r",
  statSync: "t",
  stat: "t",
  lstatSync: "t",
  lstat: "t",
  rmSync: "w",
  rm: "w",
  unlinkSync: "w",
  unlink: "w",
  rmdirSync: "w",
  rmdir: "w",
  renameSync: "ww",
  rename: "ww",
  copyFileSync: "rw",
  copyFile: "rw",
  cpSync: "rw",
  cp: "rw",
  symlinkSync: "rw",
  createReadStream: "r",
  createWriteStream: "w",
  openSync: "r",
  open: "r",
  accessSync: "t",
  access: "t",
  realpathSync: "t",
  realpath: "t",
  truncateSync: "w",
  truncate: "w",
  readSync: "",
  writeSync: "",
  closeSync: "",
  fstatSync: "",
};

export function nodeUse(name: string, argv: Field[], inv: Invocation, confined: Confinement): CodeUse {
  const use = emptyUse();
  const { source, preloads, module } = nodeSource(argv, inv);
  if (source.kind === "inline") use.codeOperands.add(source.index);
  const strict = !confinedAll(confined);
  for (const preload of preloads) {
    const why = moduleRule(preload.unknown ? "\u0000" : preload.text, use);
    if (why && strict) return { ...use, refusal: `node preloads a module that ${why}` };
  }
  if (source.kind === "none") return use;
  const got = sourceTexts(source, name);
  if ("unknown" in got) return strict ? { ...use, refusal: got.unknown } : use;
  for (const code of got.texts) {
    const why = readJavaScript(code, module, use);
    if (why && strict) return { ...use, refusal: `the ${name} code ${why}` };
  }
  return use;
}

function nodeSource(argv: Field[], inv: Invocation): { source: Source; preloads: Field[]; module: boolean } {
  const preloads: Field[] = [];
  let module = false;
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i] as Field;
    const [flag, attached] =
      f.text.startsWith("--") && f.text.includes("=")
        ? [f.text.slice(0, f.text.indexOf("=")), f.text.slice(f.text.indexOf("=") + 1)]
        : [f.text, undefined];
    const value = (): Field | undefined => (attached !== undefined ? { ...f, text: attached } : argv[++i]);
    if (f.unknown) return { source: { kind: "script", file: f, index: i }, preloads, module };
    if (["-e", "--eval", "-p", "--print", "-pe"].includes(flag)) {
      const index = attached !== undefined ? i : i + 1;
      const code = value();
      return { source: code ? { kind: "inline", code, index } : { kind: "none" }, preloads, module };
    }
    if (["-c", "--check", "-v", "--version", "-h", "--help"].includes(flag))
      return { source: { kind: "none" }, preloads, module };
    if (["-r", "--require", "--import", "--loader", "--experimental-loader"].includes(flag)) {
      const mod = value();
      if (mod) preloads.push(mod);
      continue;
    }
    if (flag === "--input-type") module = (attached ?? argv[++i]?.text) === "module";
    if (f.text === "-") return { source: stdinSource(inv), preloads, module };
    if (f.text === "--")
      return {
        source: argv[i + 1] ? { kind: "script", file: argv[i + 1] as Field, index: i + 1 } : stdinSource(inv),
        preloads,
        module,
      };
    if (f.text.startsWith("-")) continue;
    return { source: { kind: "script", file: f, index: i }, preloads, module };
  }
  return { source: stdinSource(inv), preloads, module };
}

/** Why a module may not be loaded, or undefined (a JSON file of the workspace is a file it reads). */
function moduleRule(spec: string, use: CodeUse): string | undefined {
  const name = spec.replace(/^node:/, "");
  if (PURE_MODULES.has(name) || FS_MODULES.has(name)) return undefined;
  if (/^[./]/.test(name)) {
    if (name.endsWith(".json")) {
      use.files.push({ path: name, access: "read" });
      return undefined;
    }
    return `requires ${name}, a module of the workspace whose code is not part of the call`;
  }
  const top = name.split("/")[0] as string;
  const reaches = Object.hasOwn(REACHES, top) ? REACHES[top] : undefined;
  if (name.includes("\u0000")) return "requires a module named only at run time";
  return reaches
    ? `requires ${name}, which reaches ${reaches}`
    : `requires ${name}, a module not known to only compute`;
}

function parse(code: string, module: boolean): Node | string {
  const options = {
    ecmaVersion: "latest",
    allowHashBang: true,
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
  };
  const first = module || /^\s*(?:import|export)\s/m.test(code) ? "module" : "script";
  try {
    return load().parse(code, { ...options, sourceType: first });
  } catch (error) {
    return `does not parse as JavaScript: ${(error as Error).message}`;
  }
}

interface Walk {
  declared: Set<string>;
  /**
   * Names bound to a module (`path`), to fs or fs.promises (`fs`, `fs.promises`), or to one of
   * their functions (`fs.readFileSync`, `fs.promises.readFile`).
   */
  bindings: Map<string, string>;
  /** Names that may hold a value read by a property name computed at run time. */
  computed: Set<string>;
  /** Names only ever given numbers: `x[i]` with one is an index. */
  numeric: Set<string>;
  /** Identifier nodes that declare a name. */
  declarations: Set<Node>;
  /** Each node's parent and the key it is under. */
  parents: Map<Node, [Node | null, string]>;
  use: CodeUse;
}

/** Why the code is refused, or undefined; its literal files go into `use`. */
export function readJavaScript(code: string, module: boolean, use: CodeUse): string | undefined {
  const ast = parse(code, module);
  if (typeof ast === "string") return ast;
  const nodes: [Node, Node | null, string][] = [];
  const parents = new Map<Node, [Node | null, string]>();
  const stack: [Node, Node | null, string][] = [[ast, null, ""]];
  while (stack.length > 0) {
    const item = stack.pop() as [Node, Node | null, string];
    nodes.push(item);
    parents.set(item[0], [item[1], item[2]]);
    if (nodes.length > MAX_NODES) return "is too large to check";
    for (const key of Object.keys(item[0])) {
      const value = item[0][key];
      if (Array.isArray(value)) {
        for (const v of value) if (v && typeof v.type === "string") stack.push([v, item[0], key]);
      } else if (value && typeof value.type === "string") stack.push([value, item[0], key]);
    }
  }
  const walk: Walk = {
    declared: new Set(),
    bindings: new Map(),
    computed: new Set(),
    numeric: new Set(),
    declarations: new Set(),
    parents,
    use,
  };
  for (const [node] of nodes) collectBindings(node, walk);
  numericNames(nodes, walk);
  computedNames(nodes, walk);
  // Names and properties first, so that a reason names what the code reaches (`Function`), then calls.
  const early = new Set([
    "Identifier",
    "MemberExpression",
    "ImportExpression",
    "ImportDeclaration",
    "ThisExpression",
  ]);
  for (const pass of [true, false]) {
    for (const [node, parent, key] of nodes) {
      if (early.has(node.type) !== pass) continue;
      const why = nodeRule(node, parent, key, walk);
      if (why) return why;
    }
  }
  // Then where each value read by a computed property name goes.
  for (const [node, parent, key] of nodes) {
    const why = dynamicRule(node, parent, key, walk);
    if (why) return why;
  }
  return undefined;
}

/** The names a pattern binds; their Identifier nodes are declarations, not uses. */
function patternNames(pattern: Node, out: string[], nodes?: Set<Node>): void {
  if (!pattern) return;
  if (pattern.type === "Identifier") {
    out.push(pattern.name);
    nodes?.add(pattern);
  } else if (pattern.type === "ObjectPattern") {
    for (const p of pattern.properties)
      patternNames(p.type === "RestElement" ? p.argument : p.value, out, nodes);
  } else if (pattern.type === "ArrayPattern") for (const e of pattern.elements) patternNames(e, out, nodes);
  else if (pattern.type === "RestElement") patternNames(pattern.argument, out, nodes);
  else if (pattern.type === "AssignmentPattern") patternNames(pattern.left, out, nodes);
}

function requiredModule(node: Node): string | undefined {
  if (node?.type !== "CallExpression" || node.callee.type !== "Identifier" || node.callee.name !== "require")
    return undefined;
  const text = literalString(node.arguments[0]);
  return text?.replace(/^node:/, "");
}

function collectBindings(node: Node, walk: Walk): void {
  const names: string[] = [];
  if (node.type === "VariableDeclarator") {
    patternNames(node.id, names, walk.declarations);
    // fs is bound where it is required (`require('fs')`, `require('fs').promises`), never aliased.
    const module =
      node.init?.type === "Identifier" ? undefined : (fsValue(node.init, walk) ?? requiredModule(node.init));
    if (module && node.id.type === "Identifier") walk.bindings.set(node.id.name, module);
    if (module && plainPattern(node.id)) {
      for (const p of node.id.properties) walk.bindings.set(p.value.name, `${module}.${propertyName(p)}`);
    }
  } else if (
    node.type === "FunctionDeclaration" ||
    node.type === "FunctionExpression" ||
    node.type === "ArrowFunctionExpression"
  ) {
    if (node.id) names.push(node.id.name);
    for (const p of node.params) patternNames(p, names, walk.declarations);
  } else if (node.type === "ClassDeclaration" && node.id) names.push(node.id.name);
  else if (node.type === "CatchClause" && node.param) patternNames(node.param, names, walk.declarations);
  else if (node.type === "ImportDeclaration") {
    const module = fsModuleOf(literalString(node.source));
    for (const specifier of node.specifiers) {
      names.push(specifier.local.name);
      if (module === undefined) continue;
      const imported =
        specifier.type === "ImportSpecifier" ? propertyName({ key: specifier.imported }) : undefined;
      walk.bindings.set(
        specifier.local.name,
        imported === undefined || imported === "default" ? module : fsMemberOf(module, imported),
      );
    }
  }
  for (const n of names) walk.declared.add(n);
}

/** `{ a, b: c }`: the only destructuring of fs that names its functions (no rest, default or nesting). */
function plainPattern(pattern: Node): boolean {
  return (
    pattern.type === "ObjectPattern" &&
    pattern.properties.every(
      (p: Node) =>
        p.type === "Property" &&
        !p.computed &&
        p.value.type === "Identifier" &&
        propertyName(p) !== undefined,
    )
  );
}

/** `fs` for fs, `fs.promises` for fs/promises. */
function fsModuleOf(spec: string | undefined): string | undefined {
  const name = spec?.replace(/^node:/, "");
  return name === "fs" ? "fs" : name === "fs/promises" ? "fs.promises" : undefined;
}

/** The binding of `member` of an fs module: fs.promises, or a function. */
function fsMemberOf(module: string, member: string): string {
  return `${module}.${member}`;
}

const isFsBinding = (bound: string | undefined) => bound === "fs" || (bound?.startsWith("fs.") ?? false);
const isFsModule = (bound: string | undefined) => bound === "fs" || bound === "fs.promises";

/** What of fs an expression is: `fs`, `fs.promises`, a function (`fs.readFileSync`), or undefined. */
function fsValue(node: Node, walk: Walk): string | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case "Identifier": {
      const bound = walk.bindings.get(node.name);
      return isFsBinding(bound) ? bound : undefined;
    }
    case "CallExpression":
      return fsModuleOf(requiredModule(node));
    case "ChainExpression":
      return fsValue(node.expression, walk);
    case "MemberExpression": {
      const object = fsValue(node.object, walk);
      const name = propertyName(node);
      return object === "fs" && name === "promises" ? "fs.promises" : undefined;
    }
    default:
      return undefined;
  }
}

function literalString(node: Node): string | undefined {
  if (node?.type === "Literal" && typeof node.value === "string") return node.value;
  if (node?.type === "TemplateLiteral" && node.expressions.length === 0)
    return node.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

function propertyName(node: Node): string | undefined {
  if (!node.computed)
    return node.key?.name ?? node.property?.name ?? (node.key ? literalString(node.key) : undefined);
  return literalString(node.key ?? node.property);
}

/** `x[k]` with a key that is not a literal (a number or a string written out). */
function computedRead(node: Node): boolean {
  return (
    node?.type === "MemberExpression" &&
    node.computed &&
    literalString(node.property) === undefined &&
    !(node.property.type === "Literal" && typeof node.property.value === "number")
  );
}

/** `x[k]` where k may be any string (`constructor`): neither a literal nor an expression that is a number. */
function dynamicRead(node: Node, walk: Walk): boolean {
  return computedRead(node) && !isNumber(node.property, walk);
}

/** Whether an expression's value is a number (so never a property name like `constructor`). */
function isNumber(node: Node, walk: Walk): boolean {
  switch (node?.type) {
    case "Literal":
      return typeof node.value === "number";
    case "Identifier":
      return walk.numeric.has(node.name);
    case "UnaryExpression":
      return ["-", "+", "~"].includes(node.operator);
    case "UpdateExpression":
      return true;
    case "BinaryExpression":
      return (
        NUMERIC_OPERATORS.has(node.operator) ||
        (node.operator === "+" && isNumber(node.left, walk) && isNumber(node.right, walk))
      );
    case "MemberExpression":
      return !node.computed && propertyName(node) === "length";
    case "CallExpression": {
      const callee = node.callee;
      if (callee.type === "Identifier") return ["Number", "parseInt", "parseFloat"].includes(callee.name);
      if (callee.type !== "MemberExpression" || callee.computed) return false;
      const name = propertyName(callee);
      return (
        (callee.object.type === "Identifier" && callee.object.name === "Math") ||
        (name !== undefined && NUMERIC_METHODS.has(name))
      );
    }
    default:
      return false;
  }
}

/** Names given only numbers (declared with one, assigned and updated with numbers), to a fixed point. */
function numericNames(nodes: [Node, Node | null, string][], walk: Walk): void {
  const assigned = new Map<string, Node[]>();
  const unknown = new Set<string>();
  const give = (name: string, value: Node) => assigned.set(name, [...(assigned.get(name) ?? []), value]);
  for (const [node, parent] of nodes) {
    if (node.type === "VariableDeclarator") {
      if (node.id.type === "Identifier" && node.init) give(node.id.name, node.init);
      else patternNamesInto(node.id, unknown);
    } else if (node.type === "AssignmentExpression" && node.left.type === "Identifier") {
      const op = node.operator.slice(0, -1);
      if (node.operator === "=") give(node.left.name, node.right);
      else if (op === "+" || NUMERIC_OPERATORS.has(op))
        give(node.left.name, { type: "BinaryExpression", operator: op, left: node.left, right: node.right });
      else unknown.add(node.left.name);
    } else if (node.type === "AssignmentExpression") {
      patternNamesInto(node.left, unknown);
    } else if (
      node.type === "Identifier" &&
      walk.declarations.has(node) &&
      parent?.type !== "VariableDeclarator"
    ) {
      unknown.add(node.name);
    } else if (node.type === "ForOfStatement" || node.type === "ForInStatement") {
      const left = node.left.type === "VariableDeclaration" ? node.left.declarations[0]?.id : node.left;
      if (left) patternNamesInto(left, unknown);
    }
  }
  for (const name of assigned.keys())
    if (!unknown.has(name) && !walk.computed.has(name)) walk.numeric.add(name);
  for (let changed = true; changed; ) {
    changed = false;
    for (const name of walk.numeric) {
      if ((assigned.get(name) ?? []).every((v) => isNumber(v, walk))) continue;
      walk.numeric.delete(name);
      changed = true;
    }
  }
}

function patternNamesInto(pattern: Node, out: Set<string>): void {
  const names: string[] = [];
  patternNames(pattern, names);
  for (const n of names) out.add(n);
}

/** Whether an expression may be a value read by a computed property name, or reached from one. */
function dynamicValue(node: Node, walk: Walk): boolean {
  switch (node?.type) {
    case "MemberExpression":
      return dynamicRead(node, walk) || dynamicValue(node.object, walk);
    case "Identifier":
      return walk.computed.has(node.name) && !walk.declarations.has(node);
    case "LogicalExpression":
      return dynamicValue(node.left, walk) || dynamicValue(node.right, walk);
    case "ConditionalExpression":
      return dynamicValue(node.consequent, walk) || dynamicValue(node.alternate, walk);
    case "SequenceExpression":
      return dynamicValue(node.expressions.at(-1), walk);
    case "AwaitExpression":
    case "SpreadElement":
      return dynamicValue(node.argument, walk);
    case "ChainExpression":
      return dynamicValue(node.expression, walk);
    case "AssignmentExpression":
      return dynamicValue(node.right, walk) || (node.operator !== "=" && dynamicValue(node.left, walk));
    default:
      return false;
  }
}

/** Names that may hold a dynamic value: declared or assigned from one, or looping over one. */
function computedNames(nodes: [Node, Node | null, string][], walk: Walk): void {
  for (let changed = true; changed; ) {
    const before = walk.computed.size;
    for (const [node] of nodes) {
      if (node.type === "VariableDeclarator" && dynamicValue(node.init, walk))
        patternNamesInto(node.id, walk.computed);
      else if (
        node.type === "AssignmentExpression" &&
        node.left.type === "Identifier" &&
        dynamicValue(node.right, walk)
      )
        walk.computed.add(node.left.name);
      else if (
        (node.type === "ForOfStatement" || node.type === "ForInStatement") &&
        dynamicValue(node.right, walk)
      ) {
        const left = node.left.type === "VariableDeclaration" ? node.left.declarations[0]?.id : node.left;
        if (left) patternNamesInto(left, walk.computed);
      }
    }
    changed = walk.computed.size !== before;
  }
}

/** Whether a call hands its arguments to a function that only reads them as data (console.log, String, Math.max). */
function dataSink(callee: Node, walk: Walk): boolean {
  if (callee.type === "Identifier") return DATA_SINKS.has(callee.name) && !walk.declared.has(callee.name);
  if (callee.type !== "MemberExpression" || callee.computed || callee.object.type !== "Identifier")
    return false;
  const owner = callee.object.name;
  if (walk.declared.has(owner)) return false;
  return SINK_OWNERS.has(owner) && (owner !== "JSON" || propertyName(callee) === "stringify");
}

/**
 * Where a value read by a computed property name may go: into arithmetic, comparisons, strings,
 * conditions, a name (which then holds one), a data sink's arguments, and the target of a write.
 * Anywhere else it could be called, or handed to code that calls it, and it may be Function.
 */
function dynamicRule(node: Node, parent: Node | null, key: string, walk: Walk): string | undefined {
  if (!parent || !dynamicValue(node, walk)) return undefined;
  if (node.type === "Identifier" && !usePosition(parent, key)) return undefined;
  switch (parent.type) {
    case "MemberExpression":
    case "LogicalExpression":
    case "SequenceExpression":
    case "AwaitExpression":
    case "ChainExpression":
      // The enclosing expression holds the value: it is judged where it stands.
      return undefined;
    case "ConditionalExpression":
    case "BinaryExpression":
    case "UnaryExpression":
    case "TemplateLiteral":
    case "IfStatement":
    case "WhileStatement":
    case "DoWhileStatement":
    case "ForStatement":
    case "SwitchStatement":
    case "SwitchCase":
    case "ExpressionStatement":
    case "VariableDeclarator":
    case "ForOfStatement":
    case "ForInStatement":
      return undefined;
    case "UpdateExpression":
      return writeTarget(node, walk);
    case "AssignmentExpression":
      if (key === "left") return writeTarget(node, walk);
      if (parent.left.type === "Identifier") return undefined;
      if (parent.operator !== "=" && NUMERIC_OPERATORS.has(parent.operator.slice(0, -1))) return undefined;
      if (parent.operator === "+=") return undefined;
      return `stores ${DYNAMIC} in an object`;
    case "CallExpression":
    case "NewExpression":
      if (key === "callee") return `calls ${DYNAMIC}`;
      return dataSink(parent.callee, walk) ? undefined : `hands on ${DYNAMIC}`;
    default:
      return `hands on ${DYNAMIC}`;
  }
}

/** `o[k] = v` and `x = v` write; a write into an object reached by a computed name does not pass. */
function writeTarget(node: Node, walk: Walk): string | undefined {
  if (node.type === "Identifier") return undefined;
  if (node.type === "MemberExpression" && !dynamicValue(node.object, walk)) return undefined;
  return `writes into an object reached by a property name computed at run time`;
}

/** Whether an Identifier under `parent` at `key` is a use of a name (not a declaration or a property name). */
function usePosition(parent: Node, key: string): boolean {
  if (
    (parent.type === "MemberExpression" && key === "property" && !parent.computed) ||
    (parent.type === "Property" && key === "key" && !parent.computed)
  )
    return false;
  return (
    ![
      "MethodDefinition",
      "PropertyDefinition",
      "LabeledStatement",
      "BreakStatement",
      "ContinueStatement",
    ].includes(parent.type) && !["id", "params", "local", "imported", "exported"].includes(key)
  );
}

function nodeRule(node: Node, parent: Node | null, key: string, walk: Walk): string | undefined {
  switch (node.type) {
    case "Identifier":
      return identifierRule(node, parent, key, walk);
    case "MemberExpression":
      return memberRule(node, parent, key, walk);
    case "CallExpression":
    case "NewExpression":
      return fsUseRule(node, parent, key, walk) ?? callRule(node, walk);
    case "ImportExpression":
      if (fsModuleOf(literalString(node.source)))
        return "imports fs at run time (import()), whose functions are then not followed";
      return importSource(node.source, walk);
    case "ImportDeclaration":
      return importSource(node.source, walk);
    case "ThisExpression":
      return thisRule(node, walk);
    case "WithStatement":
      return "uses with, which makes names dynamic";
    case "MetaProperty":
      return node.meta.name === "import" ? "reaches import.meta" : undefined;
    case "Property":
      return node.computed && literalString(node.key) === undefined && parent?.type === "ObjectPattern"
        ? "reads a property whose name is computed at run time into a name"
        : undefined;
    default:
      return undefined;
  }
}

/**
 * `this` outside a class may be the global object: at the top of a script, in an arrow function
 * there, in a function called without an object. Class code is strict, where it never is.
 */
function thisRule(node: Node, walk: Walk): string | undefined {
  for (let at = walk.parents.get(node); at?.[0]; at = walk.parents.get(at[0])) {
    if (at[0].type === "ClassBody") return undefined;
  }
  return "uses this outside a class, where it may be the global object (this.process, this.require)";
}

/**
 * fs (or fs.promises) as a value may only have its functions called: `require('fs').f(...)`,
 * `const fs = require('fs')` then `fs.f(...)`, `const { f } = require('fs')` then `f(...)`.
 */
function fsUseRule(node: Node, parent: Node | null, key: string, walk: Walk): string | undefined {
  const value = fsValue(node, walk);
  if (value === undefined || !parent) return undefined;
  if (node.type === "Identifier" && (walk.declarations.has(node) || !usePosition(parent, key)))
    return undefined;
  if (isFsModule(value)) {
    if (parent.type === "MemberExpression" && key === "object") return undefined;
    if (
      parent.type === "VariableDeclarator" &&
      key === "init" &&
      node.type !== "Identifier" &&
      (parent.id.type === "Identifier" || plainPattern(parent.id))
    )
      return undefined;
    if (parent.type === "ChainExpression") {
      const [above, at] = walk.parents.get(parent) ?? [null, ""];
      return fsUseRule(parent, above, at, walk);
    }
  } else if ((parent.type === "CallExpression" || parent.type === "NewExpression") && key === "callee")
    return undefined;
  return `uses ${value} other than by calling its functions with literal paths`;
}

function importSource(source: Node, walk: Walk): string | undefined {
  const text = literalString(source);
  if (text === undefined) return "imports a module named only at run time";
  return moduleRule(text, walk.use);
}

/** A free name must be a global that computes; `require` and `process` only in the forms checked elsewhere. */
function identifierRule(node: Node, parent: Node | null, key: string, walk: Walk): string | undefined {
  if (!parent || walk.declarations.has(node)) return undefined;
  if (
    (parent.type === "MemberExpression" && key === "property" && !parent.computed) ||
    (parent.type === "Property" && key === "key" && !parent.computed)
  )
    return undefined;
  if (
    parent.type === "MethodDefinition" ||
    parent.type === "PropertyDefinition" ||
    parent.type === "LabeledStatement" ||
    parent.type === "BreakStatement" ||
    parent.type === "ContinueStatement"
  )
    return undefined;
  if (key === "id" || key === "params" || key === "local" || key === "imported" || key === "exported")
    return undefined;
  const bound = walk.bindings.get(node.name);
  // fs, or one of its functions, may only be called: as a value it would reach any path.
  if (isFsBinding(bound)) return fsUseRule(node, parent, key, walk);
  if (walk.declared.has(node.name) || bound) return undefined;
  if (!GLOBALS.has(node.name)) return `uses the global ${node.name}, which is not known to only compute`;
  if (node.name === "require" && !(parent.type === "CallExpression" && key === "callee"))
    return "uses require other than by calling it with a literal name";
  if (node.name === "process" && !(parent.type === "MemberExpression" && key === "object"))
    return "uses process as a value";
  return undefined;
}

function memberRule(node: Node, parent: Node | null, key: string, walk: Walk): string | undefined {
  const name = propertyName(node);
  if (name !== undefined && FORBIDDEN_MEMBERS.has(name))
    return `reaches .${name}, a way to the Function constructor or the module system`;
  if (name !== undefined && Object.hasOwn(NATIVE_MEMBERS, name))
    return `reaches .${name}, which ${NATIVE_MEMBERS[name]}`;
  const object = node.object;
  const owner = object.type === "Identifier" && !walk.declared.has(object.name) ? object.name : undefined;
  const fs = fsValue(object, walk);
  if (owner === "process" && (name === undefined || !PROCESS_MEMBERS.has(name)))
    return `reaches process.${name ?? "[…]"}, beyond the process's own input and output`;
  if (owner === "Object" && (name === undefined || !OBJECT_METHODS.has(name)))
    return `uses Object.${name ?? "[…]"}, which reaches objects' internals`;
  if (owner && name === undefined && GLOBALS.has(owner))
    return `reaches ${owner} by a property name computed at run time`;
  if (isFsModule(fs)) return fsMember(node, parent, key, fs as string, name, walk);
  if (fs !== undefined) return fsUseRule(object, node, "object", walk);
  return undefined;
}

/** `fs.readFileSync('x')`, `fs.promises.readFile('x')`: an fs function, called, with literal paths. */
function fsMember(
  node: Node,
  parent: Node | null,
  key: string,
  module: string,
  name: string | undefined,
  walk: Walk,
): string | undefined {
  // fs.promises is a module: what is done with it is judged where it stands.
  if (name === "promises" && module === "fs") return fsUseRule(node, parent, key, walk);
  if (!(parent?.type === "CallExpression" && key === "callee") || name === undefined)
    return `uses ${module}.${name ?? "[…]"} other than by calling it`;
  return fsCall(name, parent.arguments, walk);
}

function fsCall(name: string, args: Node[], walk: Walk): string | undefined {
  const paths = Object.hasOwn(FS_FUNCTIONS, name) ? FS_FUNCTIONS[name] : undefined;
  if (paths === undefined) return `uses fs.${name}, which is not among the file functions checked here`;
  const opens = OPENS_WITH_FLAGS.has(name) ? openAccess(name, args[1]) : "read";
  if (opens !== "read" && opens !== "write") return `calls fs.${name} ${opens}`;
  for (let i = 0; i < paths.length; i++) {
    const text = literalString(args[i]);
    if (text === undefined) return `calls fs.${name} with a path known only when it runs`;
    walk.use.files.push({
      path: text,
      access:
        paths[i] === "w" || (paths[i] === "r" && opens === "write")
          ? "write"
          : paths[i] === "r"
            ? "read"
            : "touch",
    });
  }
  return undefined;
}

/** Functions that open their file with flags (a string, or an options object's flag or flags). */
const OPENS_WITH_FLAGS = new Set(["readFileSync", "readFile", "createReadStream", "openSync", "open"]);

/** Whether flags open for writing (w, a, +): `read`, `write`, or why the flags cannot be known. */
function openAccess(name: string, arg: Node): "read" | "write" | string {
  if (!arg || arg.type === "FunctionExpression" || arg.type === "ArrowFunctionExpression") return "read";
  const flags = (text: string) => (/[wa+]/.test(text) ? "write" : "read");
  const literal = literalString(arg);
  if (literal !== undefined) return name.startsWith("open") ? flags(literal) : "read";
  if (arg.type === "ObjectExpression" && !name.startsWith("open")) {
    let access: "read" | "write" = "read";
    for (const p of arg.properties) {
      if (p.type !== "Property" || p.computed) return "with options known only when it runs";
      const key = propertyName(p);
      if (key !== "flag" && key !== "flags") continue;
      const value = literalString(p.value);
      if (value === undefined) return "with open flags known only when it runs";
      access = flags(value);
    }
    return access;
  }
  return name.startsWith("open")
    ? "with open flags known only when it runs"
    : "with options known only when it runs";
}

function callRule(node: Node, walk: Walk): string | undefined {
  const callee = node.callee;
  if (callee.type === "Identifier") {
    if (callee.name === "require") {
      const text = literalString(node.arguments[0]);
      return text === undefined ? "requires a module named only at run time" : moduleRule(text, walk.use);
    }
    if (walk.computed.has(callee.name))
      return `calls ${callee.name}, a value read by a property name computed at run time`;
    const bound = walk.bindings.get(callee.name);
    if (isFsBinding(bound) && !isFsModule(bound))
      return fsCall((bound as string).split(".").at(-1) as string, node.arguments, walk);
    return undefined;
  }
  if (callee.type === "MemberExpression") {
    if (computedRead(callee)) return "calls a function found by a property name computed at run time";
    const name = propertyName(callee);
    if ((name === "call" || name === "apply" || name === "bind") && containsComputed(callee.object))
      return `calls .${name} on a function found by a property name computed at run time`;
    return undefined;
  }
  const allowed = [
    "CallExpression",
    "FunctionExpression",
    "ArrowFunctionExpression",
    "Super",
    "ChainExpression",
    "TaggedTemplateExpression",
  ];
  return allowed.includes(callee.type) ? undefined : `calls a function found by a ${callee.type}`;
}

function containsComputed(node: Node): boolean {
  for (let n = node; n?.type === "MemberExpression"; n = n.object) if (computedRead(n)) return true;
  return false;
}
