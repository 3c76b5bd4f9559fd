/**
 * The environment variables a server's own code reads, for `mcpguard policy derive`: a variable the
 * client sets for the server (a token, a data file's location) must be kept at spawn, or the server
 * runs without it under L1. The listing cannot say which; the code can.
 *
 * The code is found the way the server's runtime finds it: the npm package a script lies in, a
 * Python script and the package around it, and for `python -m MODULE` and a console script
 * (`from pkg.cli import main` under a `#!` to a Python) the module's package as that very
 * interpreter's `importlib.util.find_spec` locates it. Its files are read for the names a program
 * reads the environment by (`process.env.NAME`, `process.env["NAME"]`, `const { NAME } =
 * process.env`, `os.environ["NAME"]`, `os.environ.get("NAME")`, `os.getenv("NAME")`): a name is a
 * candidate, kept only when it is set where derive runs. A name built at run time is not seen;
 * derive says so in the draft ("could not see").
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, resolve } from "node:path";
import { packageOf } from "@mcpguard/policy";

/** Files and bytes read at most: a large package is read in part, and the draft says so. */
const MAX_FILES = 4000;
const MAX_BYTES = 64 * 1024 * 1024;
const CODE = new Set([".js", ".mjs", ".cjs", ".py"]);
const SKIP_DIRS = new Set(["node_modules", "__pycache__", ".git", "test", "tests", "__tests__"]);

export interface ServerCode {
  /** Folders and files read. */
  read: string[];
  /** Environment variable names the code reads, sorted. */
  names: string[];
  /** The code was not found, or read in part: why. */
  unseen?: string;
}

const NAME = "([A-Z][A-Z0-9_]{1,63})";
const PATTERNS = [
  new RegExp(`process\\.env\\.${NAME}\\b`, "g"),
  new RegExp(`process\\.env\\[\\s*["'\`]${NAME}["'\`]\\s*\\]`, "g"),
  new RegExp(`\\benviron(?:\\.get|\\.setdefault|\\.pop)?\\(?\\[?\\s*["']${NAME}["']`, "g"),
  new RegExp(`\\bgetenv\\(\\s*["']${NAME}["']`, "g"),
  new RegExp(`\\bDeno\\.env\\.get\\(\\s*["']${NAME}["']`, "g"),
];
/** `const { A, B: b, C = 1 } = process.env` */
const DESTRUCTURED = /\{([^{}]{1,2000})\}\s*=\s*process\.env\b/g;

/** The names a text reads the environment by. */
export function envNames(text: string): string[] {
  const names = new Set<string>();
  for (const pattern of PATTERNS) for (const m of text.matchAll(pattern)) names.add(m[1] as string);
  for (const m of text.matchAll(DESTRUCTURED)) {
    for (const part of (m[1] as string).split(",")) {
      const name = /^\s*([A-Z][A-Z0-9_]{1,63})\s*(?:[:=]|$)/.exec(part)?.[1];
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}

function walk(root: string, out: string[], budget: { files: number; bytes: number }): boolean {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    // Unreadable folder: nothing to read in it.
    return true;
  }
  for (const entry of entries) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      if (SKIP_DIRS.has(entry.name)) continue;
      if (!walk(path, out, budget)) return false;
    } else if (entry.isFile() && CODE.has(extname(entry.name))) {
      if (budget.files <= 0 || budget.bytes <= 0) return false;
      budget.files--;
      try {
        budget.bytes -= statSync(path).size;
      } catch {
        // Gone since it was listed: skipped.
        continue;
      }
      out.push(path);
    }
  }
  return true;
}

/** The first bytes of a file (a `#!` line and an entry point's imports). */
function head(file: string, bytes = 4096): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0)).toString("utf8");
  } catch {
    // Unreadable: read as empty.
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The top package folder of a Python file (the highest folder with an __init__.py), or the file. */
function pythonPackage(file: string): string {
  let top: string | undefined;
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      statSync(join(dir, "__init__.py"));
      top = dir;
    } catch {
      // No __init__.py: the package's top is reached.
      break;
    }
  }
  return top ?? file;
}

/** Where `python` finds `module`: its file, as the interpreter's own import system says. */
function findSpec(python: string, module: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  if (!/^[A-Za-z_][\w.]*$/.test(module)) return undefined;
  const r = spawnSync(
    python,
    [
      "-I",
      "-c",
      "import importlib.util,sys\ns=importlib.util.find_spec(sys.argv[1])\nprint(s.origin if s and s.origin else '')",
      module,
    ],
    { env, cwd, encoding: "utf8", timeout: 10_000 },
  );
  const origin = r.status === 0 ? r.stdout.trim() : "";
  return origin && isAbsolute(origin) ? origin : undefined;
}

/** `python [options] -m MODULE`: the module. */
function moduleOf(argv: readonly string[]): string | undefined {
  const at = argv.indexOf("-m");
  return at > 0 ? argv[at + 1] : undefined;
}

/** The folders and files holding a server's own code, as its runtime finds them. */
export function codeRoots(
  argv: readonly string[],
  script: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): string[] {
  const program = argv[0] ?? "";
  if (script) {
    const file = resolve(cwd, script);
    if (file.endsWith(".py")) return [pythonPackage(file)];
    // An installed package is read whole; a script of one's own, with the folder it lies in (a
    // checkout's package.json may be the whole repository's).
    const pkg = file.includes("/node_modules/") ? packageOf(file) : undefined;
    return [pkg ? pkg.dir : dirname(file)];
  }
  const python = /^python(\d+(\.\d+)?)?$/.test(basename(program)) ? program : undefined;
  const module = python ? moduleOf(argv) : undefined;
  if (python && module) {
    const origin = findSpec(python, module, env, cwd);
    return origin ? [pythonPackage(origin)] : [];
  }
  // A console script: `#!<venv>/bin/python` and `from pkg.cli import main`.
  const text = head(program);
  const shebang = /^#!\s*(\S*python[\d.]*)\b/.exec(text)?.[1];
  const imported = /^from\s+([A-Za-z_][\w.]*)\s+import\b/m.exec(text)?.[1];
  if (shebang && imported) {
    const origin = findSpec(shebang, imported, env, cwd);
    return origin ? [pythonPackage(origin)] : [];
  }
  return program ? [program] : [];
}

/** The environment names the server's code reads (see the module's comment). */
export function serverCode(
  argv: readonly string[],
  script: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): ServerCode {
  const roots = codeRoots(argv, script, env, cwd);
  if (roots.length === 0) return { read: [], names: [], unseen: "its code was not found" };
  const files: string[] = [];
  const budget = { files: MAX_FILES, bytes: MAX_BYTES };
  let whole = true;
  for (const root of roots) {
    let isDir = false;
    try {
      isDir = statSync(root).isDirectory();
    } catch {
      // A missing root has nothing to read.
      continue;
    }
    if (isDir) whole = walk(root, files, budget) && whole;
    else files.push(root);
  }
  const names = new Set<string>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // Gone or unreadable since it was listed: skipped.
      continue;
    }
    for (const name of envNames(text)) names.add(name);
  }
  return {
    read: roots,
    names: [...names].sort(),
    ...(whole ? {} : { unseen: `its code was read in part (${MAX_FILES} files or ${MAX_BYTES >> 20} MiB)` }),
  };
}
