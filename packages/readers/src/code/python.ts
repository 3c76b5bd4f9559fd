/**
 * python3 code handed on the command line (`-c`, `-` with a here-document, a module run with
 * `-m`). Where the kernel does not confine the program (C-app), the code may compute with pure
 * modules and open files only by literal name; anything that reaches processes, the network or
 * dynamic code is refused, naming the capability. Under every config the literal files it opens
 * are returned for L1's path checks.
 */
import type { Confinement } from "../confinement.js";
import type { Field, Invocation } from "../shell/index.js";
import { type CodeUse, confinedAll, emptyUse, type Source, sourceTexts, stdinSource } from "./index.js";
import { type PyToken, PyTokenError, tokenizePython } from "./pytokens.js";

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
  "timeit",
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
};

/** Module functions that open the file named by their first argument. */
const OPENERS: Record<string, Set<string>> = {
  gzip: new Set(["open", "GzipFile"]),
  bz2: new Set(["open", "BZ2File"]),
  lzma: new Set(["open", "LZMAFile"]),
  sqlite3: new Set(["connect"]),
};
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
  for (const code of got.texts) {
    const refusal = readPython(code, use);
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

/** Why the code is refused, or undefined; the files it opens by literal name go into `use`. */
export function readPython(code: string, use: CodeUse): string | undefined {
  let tokens: PyToken[];
  try {
    tokens = tokenizePython(code);
  } catch (error) {
    if (error instanceof PyTokenError) return `does not tokenize as Python: ${error.message}`;
    throw error;
  }
  const modules = new Map<string, string>();
  const pathlib =
    tokens.some((t) => t.kind === "name" && t.value === "pathlib") ||
    tokens.some((t) => t.kind === "name" && PATH_CLASSES.has(t.value));
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as PyToken;
    if (t.kind === "name" && (t.value === "import" || t.value === "from") && !isOp(at(tokens, i - 1), ".")) {
      const why = importRule(tokens, i, modules);
      if (why) return why;
      // The statement's names are modules, not uses.
      while (i + 1 < tokens.length && !isNewStatement(tokens, i + 1)) i++;
      continue;
    }
    const why = tokenRule(tokens, i, modules, pathlib, use);
    if (why) return why;
  }
  return undefined;
}

function at(tokens: PyToken[], i: number): PyToken | undefined {
  return tokens[i];
}

function isOp(t: PyToken | undefined, value: string): boolean {
  return t?.kind === "op" && t.value === value;
}

function tokenRule(
  tokens: PyToken[],
  i: number,
  modules: Map<string, string>,
  pathlib: boolean,
  use: CodeUse,
): string | undefined {
  const t = tokens[i] as PyToken;
  const prev = at(tokens, i - 1);
  if (t.kind === "string") return stringRule(t);
  if (t.kind === "op" && t.value === "/" && pathlib) return joinRule(tokens, i, use);
  if (t.kind !== "name") return undefined;
  if (isOp(prev, ".")) return attributeRule(tokens, i, modules, use);
  if (Object.hasOwn(FORBIDDEN_NAMES, t.value)) return `${FORBIDDEN_NAMES[t.value]} (${t.value})`;
  if (t.value.startsWith("__") && t.value.endsWith("__") && !SAFE_DUNDERS.has(t.value))
    return `uses the interpreter's internal name ${t.value}`;
  if (t.value === "open") return literalCall(tokens, i, "open", use, true);
  if (PATH_CLASSES.has(t.value) && isOp(at(tokens, i + 1), "("))
    return literalCall(tokens, i, t.value, use, false);
  return undefined;
}

function stringRule(t: PyToken): string | undefined {
  if (/\battach\s+(?:database\s+)?['"]/i.test(t.value))
    return "attaches another database file through SQL (ATTACH)";
  if (/\bload_extension\b/i.test(t.value)) return "loads a native extension through SQL";
  return undefined;
}

/** `import a.b as c, d` and `from a.b import x as y`: every module must be a pure one. */
function importRule(tokens: PyToken[], i: number, modules: Map<string, string>): string | undefined {
  const from = (tokens[i] as PyToken).value === "from";
  let j = i + 1;
  if (from && isOp(at(tokens, j), "."))
    return "imports a module of the workspace, whose code is not part of the call";
  const dotted = (k: number): [string, number] => {
    let name = at(tokens, k)?.value ?? "";
    while (isOp(at(tokens, k + 1), ".") && at(tokens, k + 2)?.kind === "name") {
      name += `.${at(tokens, k + 2)?.value}`;
      k += 2;
    }
    return [name, k + 1];
  };
  if (from) {
    const [module, next] = dotted(j);
    const why = moduleRule(module);
    if (why) return why;
    for (let k = next + 1; k < tokens.length && !isNewStatement(tokens, k); k++) {
      const name = tokens[k] as PyToken;
      if (name.kind !== "name" || name.value === "as" || isOp(at(tokens, k - 1), ".")) continue;
      if (isOp(at(tokens, k - 1), "as") || at(tokens, k - 1)?.value === "as") continue;
      const allowed = ATTRIBUTES[module.split(".")[0] as string];
      if (allowed && !allowed.has(name.value))
        return `takes ${name.value} from ${module}, which reaches beyond computing`;
      modules.set(name.value, `${module}.${name.value}`);
    }
    return undefined;
  }
  for (;;) {
    const [module, next] = dotted(j);
    const why = moduleRule(module);
    if (why) return why;
    let alias = module.split(".")[0] as string;
    j = next;
    if (at(tokens, j)?.value === "as") {
      alias = at(tokens, j + 1)?.value ?? alias;
      j += 2;
    }
    modules.set(alias, module);
    if (!isOp(at(tokens, j), ",")) return undefined;
    j++;
  }
}

function isNewStatement(tokens: PyToken[], k: number): boolean {
  const t = tokens[k] as PyToken;
  return t.kind === "op" && (t.value === ";" || t.value === "\n");
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

/** `x.attr`: dunders and frames are refused; some modules may be used for a few attributes only. */
function attributeRule(
  tokens: PyToken[],
  i: number,
  modules: Map<string, string>,
  use: CodeUse,
): string | undefined {
  const name = (tokens[i] as PyToken).value;
  if (name.startsWith("__") && name.endsWith("__") && !SAFE_DUNDERS.has(name))
    return `reaches the interpreter's internals through .${name}`;
  if (FRAME_ATTRIBUTES.test(name)) return `reaches the interpreter's frames through .${name}`;
  const owner = at(tokens, i - 2);
  const module =
    owner?.kind === "name" && !isOp(at(tokens, i - 3), ".") ? modules.get(owner.value) : undefined;
  if (module) {
    const top = module.split(".")[0] as string;
    const allowed = ATTRIBUTES[top];
    if (allowed && !allowed.has(name)) return `uses ${module}.${name}, which reaches beyond computing`;
    if (OPENERS[top]?.has(name)) return literalCall(tokens, i, `${module}.${name}`, use, true);
  }
  if (name === "home" || name === "expanduser") return `reaches the home directory (.${name})`;
  if (name === "enable_load_extension" || name === "load_extension")
    return "loads a native extension into sqlite3";
  if (PATH_METHODS.has(name) && isOp(at(tokens, i + 1), "("))
    return literalCall(tokens, i, `.${name}`, use, false);
  if (PATH_CLASSES.has(name) && isOp(at(tokens, i + 1), "(")) return literalCall(tokens, i, name, use, false);
  return undefined;
}

/**
 * A call whose first argument must be a literal path: `open('x')`, `Path('x')`, `gzip.open('x')`.
 * `bare` means the name may not be used other than by calling it.
 */
function literalCall(
  tokens: PyToken[],
  i: number,
  what: string,
  use: CodeUse,
  bare: boolean,
): string | undefined {
  if (!isOp(at(tokens, i + 1), "("))
    return bare ? `uses ${what} other than by calling it with a literal path` : undefined;
  const first = at(tokens, i + 2);
  if (isOp(first, ")") && !bare) return undefined;
  let j = i + 2;
  let path = "";
  while (at(tokens, j)?.kind === "string" && !at(tokens, j)?.formatted) {
    path += (at(tokens, j) as PyToken).value;
    j++;
  }
  const after = at(tokens, j);
  if (j === i + 2 || !(isOp(after, ",") || isOp(after, ")")))
    return `calls ${what} with a path known only when it runs`;
  if (path === ":memory:") return undefined;
  use.files.push({ path, access: openAccess(tokens, j, what) });
  return undefined;
}

/** `open(path, 'w')` or `open(path, mode='a')`: the mode, read up to the call's closing parenthesis. */
function openAccess(tokens: PyToken[], j: number, what: string): "read" | "write" | "touch" {
  if (!what.endsWith("open")) return "touch";
  let mode =
    isOp(at(tokens, j), ",") && at(tokens, j + 1)?.kind === "string" ? at(tokens, j + 1)?.value : undefined;
  let depth = 0;
  for (let k = j; k < tokens.length && mode === undefined; k++) {
    const t = tokens[k] as PyToken;
    if (isOp(t, "(") || isOp(t, "[") || isOp(t, "{")) depth++;
    else if (isOp(t, ")") || isOp(t, "]") || isOp(t, "}")) {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && t.kind === "name" && t.value === "mode" && isOp(at(tokens, k + 1), "=")) {
      mode = at(tokens, k + 2)?.kind === "string" ? at(tokens, k + 2)?.value : "w";
    }
  }
  return /[wax+]/.test(mode ?? "r") ? "write" : "read";
}

/** With pathlib about, `/` may join paths: the part joined must be literal, and is checked like a path. */
function joinRule(tokens: PyToken[], i: number, use: CodeUse): string | undefined {
  const next = at(tokens, i + 1);
  if (next?.kind === "number" || isOp(next, "(")) return undefined;
  if (next?.kind === "string" && !next.formatted) {
    if (next.value.startsWith("/") || next.value.startsWith("~") || next.value.split("/").includes("..")) {
      use.files.push({ path: next.value, access: "touch" });
    }
    return undefined;
  }
  return "joins a path (pathlib's /) with a value known only when it runs";
}
