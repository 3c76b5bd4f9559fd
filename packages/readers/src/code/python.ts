/**
 * python3 code handed on the command line (`-c`, `-` with a here-document or a here-string, a
 * module run with `-m`). The code is read by CPython's own grammar, the interpreter's the command
 * would run (pyhelper.ts, pyast.py): identifiers as CPython normalizes them (NFKC), every string
 * prefix and escape, f-strings, decorators, match statements. The helper answers what the tree
 * imports, names, calls and opens; the rules are here. Where the kernel does not confine the
 * program (C-app), the code may compute with pure modules and open files only by literal name;
 * anything that reaches processes, the network or dynamic code is refused, naming the capability,
 * and so is code that cannot be read (no interpreter, a syntax error, no answer in time). Under
 * every config the literal files it opens are returned for L1's path checks.
 */
import type { Confinement } from "../confinement.js";
import type { Field, Invocation } from "../shell/index.js";
import { type PyCall, type PyEvent, type PyLiteral, parsePython, pythonInterpreter } from "./pyhelper.js";
import { type CodeUse, confinedAll, emptyUse, type Source, sourceTexts, stdinSource } from "./use.js";

/** Modules that compute, with no way to a process, a host or code built at run time. */
const PURE = new Set([
  "__future__",
  "abc",
  "array",
  "base64",
  "binascii",
  "bisect",
  "calendar",
  "cmath",
  "collections",
  "colorsys",
  "contextlib",
  "copy",
  "csv",
  "dataclasses",
  "datetime",
  "decimal",
  "difflib",
  "enum",
  "fnmatch",
  "fractions",
  "functools",
  "graphlib",
  "hashlib",
  "heapq",
  "hmac",
  "html",
  "itertools",
  "json",
  "keyword",
  "locale",
  "math",
  "numbers",
  "operator",
  "pprint",
  "random",
  "re",
  "reprlib",
  "secrets",
  "shlex",
  "statistics",
  "string",
  "stringprep",
  "struct",
  "textwrap",
  "time",
  "typing",
  "unicodedata",
  "uuid",
  "warnings",
  "zlib",
  "zoneinfo",
  "gzip",
  "bz2",
  "lzma",
  "argparse",
  "getopt",
  "io",
  "sys",
  "pathlib",
  "sqlite3",
  "traceback",
  "types",
]);

/** The modules the rules take for pure (for tests: the differential test's oracle). */
export const PURE_MODULES: ReadonlySet<string> = PURE;

/** Why a module is refused, for the ones people reach for. */
const REACHES: Record<string, string> = {
  os: "processes and the whole filesystem",
  subprocess: "processes",
  pty: "processes",
  shutil: "the whole filesystem",
  socket: "the network",
  ssl: "the network",
  urllib: "the network",
  http: "the network",
  ftplib: "the network",
  smtplib: "the network",
  requests: "the network",
  asyncio: "processes and the network",
  ctypes: "native code",
  cffi: "native code",
  importlib: "dynamic code",
  runpy: "dynamic code",
  code: "dynamic code",
  pickle: "dynamic code",
  marshal: "dynamic code",
  shelve: "dynamic code",
  builtins: "dynamic code",
  inspect: "the interpreter's frames",
  gc: "every object of the interpreter",
  multiprocessing: "processes",
  signal: "processes",
  tempfile: "files outside the workspace",
  glob: "file names anywhere",
  pwd: "the account database",
  grp: "the account database",
  platform: "processes",
  timeit: "dynamic code (it compiles the statements it times)",
  linecache: "files by a name computed at run time",
  codecs: "files by a name computed at run time",
};

/** Module functions that open the file named by their first argument. */
const OPENERS: Record<string, Set<string>> = {
  gzip: new Set(["open", "GzipFile"]),
  bz2: new Set(["open", "BZ2File"]),
  lzma: new Set(["open", "LZMAFile"]),
  sqlite3: new Set(["connect", "Connection"]),
};
/** The keyword that names the file of each opener, where it is not the first argument. */
const FILE_KEYWORDS = new Set(["file", "filename", "database"]);
/** The only attributes these modules may be used for (anything else reaches further). */
const ATTRIBUTES: Record<string, Set<string>> = {
  sys: new Set([
    "stdin",
    "stdout",
    "stderr",
    "argv",
    "exit",
    "version",
    "version_info",
    "maxsize",
    "platform",
    "byteorder",
    "getsizeof",
    "float_info",
    "int_info",
    "getrecursionlimit",
    "setrecursionlimit",
    "hexversion",
    "maxunicode",
    "getdefaultencoding",
    "getfilesystemencoding",
  ]),
  io: new Set([
    "StringIO",
    "BytesIO",
    "TextIOWrapper",
    "SEEK_SET",
    "SEEK_CUR",
    "SEEK_END",
    "UnsupportedOperation",
  ]),
  // What reads the source lines of the frames that ran: not of a file a frame summary names.
  traceback: new Set([
    "print_exc",
    "format_exc",
    "print_exception",
    "format_exception",
    "format_exception_only",
  ]),
  // Not warn_explicit, showwarning or formatwarning, which print a line of any file they are told.
  warnings: new Set(["warn", "simplefilter", "filterwarnings", "catch_warnings", "resetwarnings"]),
  // Not the shlex class, whose `source` reads the files its input names.
  shlex: new Set(["split", "quote", "join"]),
};
/**
 * Modules the pure ones hold as attributes that are not pure themselves (`pathlib.os`,
 * `random._os`, `traceback.linecache`, `enum.bltns`), or whose attributes are restricted
 * (`x.sys`): reached through an attribute of that name, whatever object holds it.
 */
const MODULE_ATTRIBUTES = new Set([
  "os",
  "_os",
  "posix",
  "nt",
  "posixpath",
  "ntpath",
  "sys",
  "_sys",
  "io",
  "_io",
  "builtins",
  "bltns",
  "linecache",
  "inspect",
  "gc",
  "platform",
  "codecs",
  "encodings",
  "subprocess",
  "_posixsubprocess",
  "socket",
  "_socket",
  "importlib",
  "ctypes",
  "shutil",
  "tempfile",
  "pickle",
  "_pickle",
  "marshal",
  "runpy",
  "_thread",
  "threading",
  "_compression",
  "_hashlib",
  "_hashopenssl",
  "_random",
  "_string",
  "_uuid",
  "copyreg",
  "_imp",
  "zipimport",
]);
/**
 * What pure modules hold that reaches further, by name (an attribute, a name taken or used):
 * text evaluated as code (string annotations, forward references), code built from bytes, and
 * files named only when the code runs.
 */
const EVALUATES: Record<string, string> = {
  get_type_hints: "evaluates annotations written as text",
  get_annotations: "evaluates annotations written as text",
  ForwardRef: "evaluates a forward reference written as text",
  _eval_type: "evaluates annotations written as text",
  evaluate_forward_ref: "evaluates a forward reference written as text",
  CodeType: "builds code from bytes",
  FunctionType: "makes a function of any code object",
  FileType: "opens files named only when it runs (argparse.FileType)",
  reset_tzpath: "reads time zone files from folders named when it runs",
};
/** Names that reach dynamic code or the interpreter's internals, wherever they appear. */
const FORBIDDEN_NAMES: Record<string, string> = {
  __import__: "imports a module by a name computed at run time",
  eval: "evaluates code built at run time",
  exec: "executes code built at run time",
  compile: "compiles code built at run time",
  globals: "reaches the interpreter's global names",
  locals: "reaches the interpreter's local names",
  vars: "reaches an object's namespace",
  getattr: "reaches attributes by a name computed at run time",
  setattr: "sets attributes by a name computed at run time",
  delattr: "deletes attributes by a name computed at run time",
  __builtins__: "reaches the builtins module",
  __builtin__: "reaches the builtins module",
  __loader__: "reaches the module loader",
  __spec__: "reaches the module loader",
  breakpoint: "starts a debugger",
  help: "starts the help system, which imports modules",
};
/** operator's getattr by another name: only with literal, public attribute names. */
const GETTERS = new Set(["attrgetter", "methodcaller"]);
const SAFE_DUNDERS = new Set([
  "__name__",
  "__doc__",
  "__qualname__",
  "__module__",
  "__init__",
  "__len__",
  "__main__",
  "__file__",
  "__repr__",
  "__str__",
  "__eq__",
  "__hash__",
  "__lt__",
  "__enter__",
  "__exit__",
  "__iter__",
  "__next__",
  "__getitem__",
  "__contains__",
  "__add__",
]);
const FRAME_ATTRIBUTES =
  /^(?:f_\w+|gi_frame|gi_code|cr_frame|cr_code|ag_frame|tb_frame|tb_next|co_\w+|func_globals)$/;
const PATH_METHODS = new Set([
  "rename",
  "replace",
  "symlink_to",
  "hardlink_to",
  "link_to",
  "joinpath",
  "with_name",
  "with_stem",
]);
const PATH_CLASSES = new Set(["Path", "PurePath", "PosixPath", "PurePosixPath"]);

export function pythonUse(name: string, argv: Field[], inv: Invocation, confined: Confinement): CodeUse {
  const use = emptyUse();
  const source = pythonSource(argv, inv);
  if (source.kind === "inline") use.codeOperands.add(source.index);
  if (source.kind === "module") return moduleUse(name, source.name, use, confined);
  if (source.kind === "none") return use;
  const got = sourceTexts(source, name);
  if ("unknown" in got) {
    if (!confinedAll(confined)) use.refusal = got.unknown;
    return use;
  }
  if (got.texts.length === 0) return use;
  const interpreter = pythonInterpreter((argv[0] as Field).text, inv.cwd);
  if (!interpreter) {
    if (!confinedAll(confined))
      use.refusal = `the ${name} code cannot be read: there is no ${name} on the server's PATH, whose own grammar reads it`;
    return use;
  }
  for (const code of got.texts) {
    const refusal = readPython(code, use, interpreter, source.kind === "stdin");
    if (refusal && !confinedAll(confined)) {
      use.refusal = `the ${name} code ${refusal}`;
      return use;
    }
  }
  return use;
}

const VALUED = new Set(["-W", "-X", "-Q"]);

function pythonSource(argv: Field[], inv: Invocation): Source {
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i] as Field;
    const word = f.text;
    if (f.unknown) return { kind: "script", file: f, index: i };
    if (word === "-") return stdinSource(inv);
    if (word === "--")
      return argv[i + 1] ? { kind: "script", file: argv[i + 1] as Field, index: i + 1 } : stdinSource(inv);
    if (/^--(?:version|help)$/.test(word) || /^-[VhE]+$/.test(word)) {
      if (/[Vh]/.test(word)) return { kind: "none" };
      continue;
    }
    if (word.startsWith("-c")) return inline(argv, i, word.slice(2));
    if (word.startsWith("-m")) {
      const index = word.length > 2 ? i : i + 1;
      return {
        kind: "module",
        name: word.length > 2 ? { ...f, text: word.slice(2) } : (argv[i + 1] ?? { text: "" }),
        index,
      };
    }
    if (VALUED.has(word.slice(0, 2))) {
      if (word.length === 2) i++;
      continue;
    }
    if (word.startsWith("-")) {
      const c = word.indexOf("c");
      if (c > 0 && /^-[a-zA-Z]+$/.test(word)) return inline(argv, i, word.slice(c + 1));
      continue;
    }
    return { kind: "script", file: f, index: i };
  }
  return stdinSource(inv);
}

function inline(argv: Field[], i: number, attached: string): Source {
  if (attached) return { kind: "inline", code: { ...(argv[i] as Field), text: attached }, index: i };
  const code = argv[i + 1];
  return code ? { kind: "inline", code, index: i + 1 } : { kind: "none" };
}

/** Standard-library modules that run as programs and only read or write the files they are given. */
const RUNNABLE = new Set([
  "json.tool",
  "py_compile",
  "compileall",
  "base64",
  "calendar",
  "gzip",
  "uuid",
  "tokenize",
  "this",
  "quopri",
  "binascii",
]);

function moduleUse(name: string, module: Field, use: CodeUse, confined: Confinement): CodeUse {
  if (confinedAll(confined) || (!module.unknown && RUNNABLE.has(module.text))) return use;
  use.refusal = `runs the ${name} module ${module.unknown ? "named only at run time" : module.text}, which is not known to only compute`;
  return use;
}

interface Reading {
  use: CodeUse;
  /** What each name bound by an import stands for: a module, or a name taken from one. */
  modules: Map<string, { module: string; kind: "module" | "name" }>;
  /** pathlib is about: a `/` may join paths. */
  pathlib: boolean;
  /** functools.singledispatch is about: it evaluates annotations written as text. */
  dispatch: boolean;
}

/**
 * Why the code is refused, or undefined; the files it opens by literal name go into `use`.
 * `interpreter` reads it (default: python3 as the server's PATH gives it); `bytes` says the code
 * is a program's file (standard input), whose coding declaration counts.
 */
export function readPython(
  code: string,
  use: CodeUse,
  interpreter = pythonInterpreter("python3"),
  bytes = false,
): string | undefined {
  if (!interpreter)
    return "cannot be read: there is no python3 on the server's PATH, whose own grammar reads it";
  const answer = parsePython(interpreter, code, bytes);
  if ("failed" in answer) return `cannot be read: the Python reader (${interpreter}) ${answer.failed}`;
  if ("error" in answer) {
    const at = answer.line ? ` (line ${answer.line}${answer.col ? `, column ${answer.col}` : ""})` : "";
    return answer.limit
      ? `is too large to read: ${answer.error}`
      : `does not parse as Python: ${answer.error}${at}`;
  }
  const events = answer.events;
  const reading: Reading = {
    use,
    modules: new Map(),
    pathlib: events.some(
      (e) =>
        ((e.k === "import" || e.k === "from") && e.m.split(".")[0] === "pathlib") ||
        (e.k === "name" && PATH_CLASSES.has(e.id)) ||
        (e.k === "attr" && PATH_CLASSES.has(e.a)),
    ),
    dispatch: events.some(
      (e) =>
        (e.k === "name" && /^singledispatch/.test(e.id)) ||
        (e.k === "attr" && /^singledispatch/.test(e.a)) ||
        (e.k === "from" && e.n.some(([n]) => /^singledispatch/.test(n))),
    ),
  };
  for (const event of events) {
    const why = rule(event, reading);
    if (why) return why;
  }
  return undefined;
}

function rule(e: PyEvent, r: Reading): string | undefined {
  switch (e.k) {
    case "import":
      return importRule(e.m, e.as, r);
    case "from":
      return fromRule(e.m, e.lv, e.n, r);
    case "bind":
      return nameRule(e.id);
    case "name":
      return nameRule(e.id) ?? callRule(e.id, e.call) ?? nameUse(e, r);
    case "attr":
      return callRule(`.${e.a}`, e.call) ?? attributeRule(e, r);
    case "str":
      return stringRule(e.v, e.ann === 1, r);
    case "div":
      return r.pathlib ? joinRule(e.r, r.use) : undefined;
  }
}

/** What a call's keywords ask for, whatever is called. */
function callRule(what: string, call: PyCall | undefined): string | undefined {
  if (call?.kw.some(([k]) => k === "fromfile_prefix_chars"))
    return `reads arguments from files named when it runs (${what} with fromfile_prefix_chars)`;
  return undefined;
}

/** `import a.b as c`: every module must be a pure one; `c` (or `a`) stands for it. */
function importRule(module: string, alias: string | null, r: Reading): string | undefined {
  const why = moduleRule(module);
  if (why) return why;
  if (alias) {
    const bound = nameRule(alias);
    if (bound) return bound;
  }
  const top = module.split(".")[0] as string;
  r.modules.set(alias ?? top, { module: alias ? module : top, kind: "module" });
  return undefined;
}

/** `from a.b import x as y`: a pure module, and names that stay within what it may be used for. */
function fromRule(module: string, level: number, names: [string, string | null][], r: Reading) {
  if (level > 0) return "imports a module of the workspace, whose code is not part of the call";
  const why = moduleRule(module);
  if (why) return why;
  const top = module.split(".")[0] as string;
  const allowed = ATTRIBUTES[top];
  for (const [name, alias] of names) {
    if (name === "*") {
      if (allowed || OPENERS[top]) return `takes every name from ${module}, which reaches beyond computing`;
      continue;
    }
    if (allowed && !allowed.has(name)) return `takes ${name} from ${module}, which reaches beyond computing`;
    const taken =
      memberRule(module, name, allowed) ?? nameRule(name) ?? (alias ? nameRule(alias) : undefined);
    if (taken) return taken;
    r.modules.set(alias ?? name, { module: `${module}.${name}`, kind: "name" });
  }
  return undefined;
}

/** A name a module holds, reached by `module.name` or taken with `from module import name`. */
function memberRule(module: string, name: string, allowed: Set<string> | undefined): string | undefined {
  if (allowed?.has(name)) return undefined;
  if (name.startsWith("_") && !(name.startsWith("__") && name.endsWith("__")))
    return `reaches ${module}.${name}, a private name of the module`;
  if (MODULE_ATTRIBUTES.has(name)) return `reaches the module ${name} through ${module}.${name}`;
  if (Object.hasOwn(EVALUATES, name)) return `${EVALUATES[name]} (${module}.${name})`;
  return undefined;
}

function moduleRule(module: string): string | undefined {
  const top = module.split(".")[0] as string;
  if (PURE.has(top)) return undefined;
  if (top === "") return "imports a module without a name";
  const reaches = REACHES[top];
  return reaches
    ? `imports ${module}, which reaches ${reaches}`
    : `imports ${module}, a module not known to only compute`;
}

/** A name, wherever it is used or bound: the builtins that reach dynamic code, dunders. */
function nameRule(name: string): string | undefined {
  if (Object.hasOwn(FORBIDDEN_NAMES, name)) return `${FORBIDDEN_NAMES[name]} (${name})`;
  if (name.startsWith("__") && name.endsWith("__") && !SAFE_DUNDERS.has(name))
    return `uses the interpreter's internal name ${name}`;
  if (Object.hasOwn(EVALUATES, name)) return `${EVALUATES[name]} (${name})`;
  return undefined;
}

type NameEvent = Extract<PyEvent, { k: "name" }>;
type AttributeEvent = Extract<PyEvent, { k: "attr" }>;

/** How a name is used: open, the openers and path classes taken from their modules, module aliases. */
function nameUse(e: NameEvent, r: Reading): string | undefined {
  const { id, call } = e;
  if (e.ctx !== "load") return undefined;
  if (GETTERS.has(id)) return getterCall(id, call);
  if (id === "open") return call ? openCall(call, "open", r.use) : bareUse("open");
  const bound = r.modules.get(id);
  if (bound?.kind === "module") {
    const top = bound.module.split(".")[0] as string;
    // A module whose use is restricted may be used only by its attributes, never passed on.
    if (!e.dot && (ATTRIBUTES[top] || OPENERS[top]))
      return `uses the module ${bound.module} other than by its attributes`;
    return undefined;
  }
  if (bound?.kind === "name") {
    const [top] = bound.module.split(".") as [string];
    const member = bound.module.slice(bound.module.lastIndexOf(".") + 1);
    if (OPENERS[top]?.has(member))
      return call ? openerCall(call, bound.module, member, r.use) : bareUse(bound.module);
    if (GETTERS.has(member)) return getterCall(bound.module, call);
    if (top === "pathlib" && PATH_CLASSES.has(member)) return pathClassUse(e, bound.module, r.use);
    return undefined;
  }
  if (PATH_CLASSES.has(id)) return pathClassUse(e, id, r.use);
  return undefined;
}

function bareUse(what: string): string {
  return `uses ${what} other than by calling it with a literal path`;
}

/** `x.attr`: dunders and frames are refused; some modules may be used for a few attributes only. */
function attributeRule(e: AttributeEvent, r: Reading): string | undefined {
  const name = e.a;
  if (name.startsWith("__") && name.endsWith("__") && !SAFE_DUNDERS.has(name))
    return `reaches the interpreter's internals through .${name}`;
  if (FRAME_ATTRIBUTES.test(name)) return `reaches the interpreter's frames through .${name}`;
  const owner = e.on !== undefined ? r.modules.get(e.on) : undefined;
  const module = owner?.kind === "module" ? owner.module : undefined;
  const top = module?.split(".")[0];
  const allowed = top ? ATTRIBUTES[top] : undefined;
  if (module && top) {
    if (allowed && !allowed.has(name)) return `uses ${module}.${name}, which reaches beyond computing`;
    const member = memberRule(module, name, allowed);
    if (member) return member;
    if (OPENERS[top]?.has(name))
      return e.call ? openerCall(e.call, `${module}.${name}`, name, r.use) : bareUse(`${module}.${name}`);
  }
  const root = e.path ? r.modules.get(e.path.split(".")[0] as string) : undefined;
  const rootTop = root?.kind === "module" ? root.module.split(".")[0] : undefined;
  if (!module && rootTop && OPENERS[rootTop]?.has(name))
    return e.call ? openerCall(e.call, e.path as string, name, r.use) : bareUse(e.path as string);
  if (MODULE_ATTRIBUTES.has(name) && !allowed?.has(name))
    return `reaches the module ${name} through an attribute (.${name})`;
  if (Object.hasOwn(EVALUATES, name)) return `${EVALUATES[name]} (.${name})`;
  if (GETTERS.has(name)) return getterCall(`.${name}`, e.call);
  if (name === "home" || name === "expanduser") return `reaches the home directory (.${name})`;
  if (name === "enable_load_extension" || name === "load_extension")
    return "loads a native extension into sqlite3";
  if (PATH_METHODS.has(name)) return e.call ? pathMethodCall(e.call, name, r.use) : bareUse(`.${name}`);
  if (PATH_CLASSES.has(name)) return pathClassUse(e, name, r.use);
  return undefined;
}

function stringRule(text: string, annotation: boolean, r: Reading): string | undefined {
  if (/\battach\s+(?:database\s+)?['"]/i.test(text))
    return "attaches another database file through SQL (ATTACH)";
  if (/\bvacuum\b[\s\S]*\binto\b/i.test(text))
    return "writes a copy of the database to a file through SQL (VACUUM INTO)";
  if (/\bload_extension\b/i.test(text)) return "loads a native extension through SQL";
  if (annotation && r.dispatch)
    return "has an annotation written as text, which functools.singledispatch evaluates as code";
  return undefined;
}

function literalText(value: PyLiteral | undefined): string | undefined {
  return value && "s" in value ? value.s : undefined;
}

/** The argument at `index`, or the keyword that names the same parameter. */
function argument(call: PyCall, index: number, keywords: ReadonlySet<string>): PyLiteral | undefined {
  return call.args[index] ?? call.kw.find(([k]) => k !== null && keywords.has(k))?.[1];
}

/** `open(path, mode)`: the path must be literal; the mode says read or write. */
function openCall(call: PyCall, what: string, use: CodeUse): string | undefined {
  const path = literalText(argument(call, 0, FILE_KEYWORDS));
  if (path === undefined) return `calls ${what} with a path known only when it runs`;
  const mode = argument(call, 1, new Set(["mode"]));
  const spread = call.kw.some(([k]) => k === null);
  // A mode known only at run time may write.
  const text = mode === undefined ? (spread ? "w" : "r") : (literalText(mode) ?? "w");
  use.files.push({ path, access: /[wax+]/.test(text) ? "write" : "read" });
  return undefined;
}

/** `gzip.open(path, ...)`, `sqlite3.connect(path)`: a literal path, no URI. */
function openerCall(call: PyCall, what: string, member: string, use: CodeUse): string | undefined {
  if (member === "open") return openCall(call, what, use);
  const path = literalText(argument(call, 0, FILE_KEYWORDS));
  if (path === undefined) return `calls ${what} with a path known only when it runs`;
  if (member === "connect" || member === "Connection") {
    // A URI (`file:...`, read as one where `uri=` is given or SQLite is built to) may name any file.
    if (path.startsWith("file:") || call.kw.some(([k]) => k === "uri" || k === null))
      return `calls ${what} with a URI, which may name any file`;
    if (path === ":memory:" || path === "") return undefined;
  }
  use.files.push({ path, access: "touch" });
  return undefined;
}

/** `Path('a', 'b')`: every part literal; the path they make is checked. */
function pathClassUse(e: NameEvent | AttributeEvent, what: string, use: CodeUse): string | undefined {
  if (!e.call) {
    // A class used as a type is no path; passed on, it could be called with any.
    if (e.ann || e.typed || e.dot || e.ctx !== "load") return undefined;
    return `uses ${what} other than by calling it with literal parts`;
  }
  if (e.call.kw.some(([k]) => k === null)) return `calls ${what} with parts known only when it runs`;
  const parts: string[] = [];
  for (const arg of e.call.args) {
    const text = literalText(arg);
    if (text === undefined) return `calls ${what} with a path known only when it runs`;
    parts.push(text);
  }
  if (parts.length === 0) return undefined;
  const path = parts.reduce((acc, part) => (part.startsWith("/") || !acc ? part : `${acc}/${part}`), "");
  use.files.push({ path: path || ".", access: "touch" });
  return undefined;
}

/** `p.rename('x')`, `p.joinpath('a', 'b')`: literal arguments; the first is checked like a path. */
function pathMethodCall(call: PyCall, name: string, use: CodeUse): string | undefined {
  if (call.kw.some(([k]) => k === null)) return `calls .${name} with a path known only when it runs`;
  const args = name === "joinpath" ? call.args : call.args.slice(0, 1);
  if (args.length === 0 && call.kw.length === 0) return undefined;
  const first = literalText(args[0] ?? call.kw[0]?.[1]);
  if (first === undefined || args.some((a) => literalText(a) === undefined))
    return `calls .${name} with a path known only when it runs`;
  use.files.push({ path: first, access: "touch" });
  for (const part of args.slice(1)) suspiciousPart(literalText(part) as string, use);
  return undefined;
}

/** operator.attrgetter('a.b') and methodcaller('m'): literal names, none private. */
function getterCall(what: string, call: PyCall | undefined): string | undefined {
  const names = what.endsWith("methodcaller") ? call?.args.slice(0, 1) : call?.args;
  if (!call || !names?.length || (call.kw.some(([k]) => k === null) && !what.endsWith("methodcaller")))
    return `reaches attributes by a name computed at run time (${what})`;
  for (const arg of names) {
    const text = literalText(arg);
    if (text === undefined || "b" in (arg as object) || text.split(".").some((part) => part.startsWith("_")))
      return `reaches attributes by a name computed at run time or private (${what})`;
  }
  return undefined;
}

/** A literal joined to a path: absolute, from the home directory, or going up, it is checked. */
function suspiciousPart(part: string, use: CodeUse): void {
  if (part.startsWith("/") || part.startsWith("~") || part.split("/").includes(".."))
    use.files.push({ path: part, access: "touch" });
}

/** With pathlib about, `/` may join paths: the part joined must be literal (or a number). */
function joinRule(right: PyLiteral, use: CodeUse): string | undefined {
  if ("num" in right) return undefined;
  const text = literalText(right);
  if (text === undefined) return "joins a path (pathlib's /) with a value known only when it runs";
  suspiciousPart(text, use);
  return undefined;
}
