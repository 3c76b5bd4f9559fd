/**
 * Compile what a server may do into what the kernel enforces: a Landlock ruleset for the launcher
 * and an allow list for the loader's BPF maps. The grant is the union of the server's tools' needs
 * (from its policy or manifest) and what its interpreter needs to start: the interpreter and its
 * ELF loader, its standard library, the script and the packages beside it, shared libraries,
 * locale data and a few device files. Nothing else: not /etc at large, not HOME or TMPDIR unless a
 * tool needs them, and /proc only read-only and only where the server has a /proc of its own.
 */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { isIP } from "node:net";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import { TRUST_VARIABLES } from "@mcpguard/protocol";
import { KernelSetupError } from "./loader.js";
import { LANDLOCK_MIN_ABI } from "./probe.js";
import { systemNameServers, type Upstream } from "./resolver.js";
import { socketRefusal } from "./sockets.js";

export interface KernelNeeds {
  /** Canonical absolute files or directories the server may read. */
  read: string[];
  /** Canonical absolute files or directories it may write (a missing file: its directory). */
  write: string[];
  /** Programs it may run: names looked up on PATH, absolute paths, or "git log" (the program is what counts here). */
  exec: string[];
  /** Destinations: `host`, `host:port`, `[v6]:port`. */
  network: string[];
  /**
   * Pathname unix sockets it may connect or send to, absolute (absent: none). Every other one is
   * refused where the loader has the unix socket programs; see {@link checkSockets}.
   */
  sockets?: string[];
  /** A tool runs shell command lines, so the shell itself must be executable. */
  shell: boolean;
}

export interface Compiled {
  /** The launcher's Landlock ruleset, as records (see encodeRecords). */
  ruleset: string;
  /** The loader's allow list (network, and inode rules for BPF LSM hosts), as records. */
  loaderPolicy: string;
  /** What the compilation had to approximate or leave out, for the audit log. */
  notes: string[];
}

const READ = "read_file,read_dir";
/**
 * A directory the server may write. `refer` (Landlock ABI 2) lets it move and link files between
 * directories of the tree (a rename into a subfolder): Landlock refuses any reparenting without
 * it, with EXDEV. It is checked on both ends, and a file may not gain rights by the move (EXDEV
 * again), so a file moves freely within one write grant or between two with the same rights, and
 * never out to where it could not be written.
 */
// make_sym: a symlink grants nothing under Landlock, which judges the file a path resolves to.
const WRITE_DIR =
  "read_file,read_dir,write_file,truncate,make_reg,make_dir,make_sym,remove_file,remove_dir,refer";
const WRITE_FILE = "read_file,write_file,truncate";
const WRITE_NEW = "read_file,read_dir,write_file,truncate,make_reg,make_dir,make_sym,remove_file,refer";
const EXEC = "execute,read_file";

/** What every dynamically linked interpreter reads to start. */
export const SYSTEM_READ = [
  "/usr/lib",
  "/lib",
  "/lib64",
  "/usr/lib64",
  "/etc/ld.so.cache",
  "/etc/localtime",
  "/etc/ssl",
  "/usr/share/locale",
  "/usr/share/zoneinfo",
];
const DEVICES: [string, string][] = [
  ["/dev/null", "read_file,write_file"],
  ["/dev/zero", "read_file"],
  ["/dev/urandom", "read_file"],
  ["/dev/random", "read_file"],
];
/** Files and helpers a program needs beyond its binary. */
const PROGRAM_EXTRAS: Record<string, { read?: string[]; exec?: string[] }> = {
  git: { read: ["/etc/gitconfig", "/usr/share/git-core"], exec: ["/usr/lib/git-core"] },
  // file(1) reads its local magic beside the compiled database (which is under /usr/lib).
  file: { read: ["/etc/magic", "/etc/magic.mime"] },
  // perl's core modules (strict, warnings, List::Util's pure part) live under /usr/share on Debian.
  perl: { read: ["/usr/share/perl", "/usr/share/perl5"] },
};
/**
 * The account's settings a program reads from HOME (relative to HOME; `.config/` follows
 * XDG_CONFIG_HOME). git treats a settings file it cannot read as fatal, where a missing one is
 * fine, so without these every git command fails under L3. Read only: never the rest of HOME.
 */
const HOME_EXTRAS: Record<string, string[]> = {
  // Not the directory: git-credential-store keeps credentials in .config/git/credentials.
  git: [".gitconfig", ".config/git/config", ".config/git/attributes", ".config/git/ignore"],
};

function homeExtras(name: string, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME;
  if (!home || !isAbsolute(home) || !Object.hasOwn(HOME_EXTRAS, name)) return [];
  const config =
    env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, ".config");
  return (HOME_EXTRAS[name] as string[]).map((p) =>
    p.startsWith(".config/") ? join(config, p.slice(8)) : join(home, p),
  );
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    // Missing: no real path, the caller keeps the path as given.
    return undefined;
  }
}

/**
 * A version manager's shim (pyenv, rbenv, nodenv, asdf): a script in a `shims` directory that
 * picks an installation and execs it. It is never granted: granting it would grant what it runs
 * through (`/usr/bin/env`, the manager's scripts), and a shell that gets EACCES for it goes on
 * along PATH to the real program, which is granted instead.
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
    // Unreadable: not a script of that kind.
    return false;
  }
}

export function which(name: string, path: string | undefined): string | undefined {
  const found = findProgram(name, path);
  return found && real(found);
}

/**
 * The file a program name stands for, as found (a symlink not followed): a Python interpreter at
 * `<venv>/bin/python` is the venv's, though it links to the system's.
 */
function findProgram(name: string, path: string | undefined): string | undefined {
  if (isAbsolute(name)) return existsSync(name) ? name : undefined;
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile() && !isShim(candidate)) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const PYTHON = /^python(\d+(\.\d+)?)?$/;

/** The virtual environment an interpreter path (as invoked) belongs to: the folder holding pyvenv.cfg. */
function venvOf(interpreter: string): string | undefined {
  for (const dir of [dirname(dirname(interpreter)), dirname(interpreter)]) {
    if (existsSync(join(dir, "pyvenv.cfg"))) return dir;
  }
  return undefined;
}

/** A pyvenv.cfg's `key = value` lines. */
function venvConfig(venv: string): Map<string, string> {
  const config = new Map<string, string>();
  try {
    for (const line of readFileSync(join(venv, "pyvenv.cfg"), "utf8").split("\n")) {
      const m = /^\s*([\w-]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (m) config.set((m[1] as string).toLowerCase(), m[2] as string);
    }
  } catch {
    // Unreadable: the interpreter's own prefix still counts.
  }
  return config;
}

/**
 * What a Python interpreter reads to start, by the path it is started from: its prefix's `lib` (the
 * standard library, and libpython for a build that links it, as pyenv's and uv's do); and, for a
 * virtual environment (venv, virtualenv, pipx's and uv's tool environments: a `pyvenv.cfg` beside
 * or above `bin/`), that file, the environment's `lib` and `lib64` (its site-packages), the base
 * interpreter's prefix from the file's `home`, and the folders its `.pth` files add to the path
 * (an editable install's project). Nothing else of the environment: its `bin` holds only the
 * scripts, which are granted as the programs they are.
 */
function pythonNeeds(
  interpreter: string,
  serverWritable: (path: string) => boolean = () => false,
): { read: string[]; notes: string[] } {
  const read: string[] = [];
  const notes: string[] = [];
  const add = (path: string | undefined) => {
    const r = path && existsSync(path) ? real(path) : undefined;
    if (r && !read.includes(r)) read.push(r);
  };
  const prefixLib = (bin: string) => add(join(dirname(bin), "lib"));
  const resolved = real(interpreter);
  if (resolved && basename(dirname(resolved)) === "bin") prefixLib(dirname(resolved));
  const venv = venvOf(interpreter);
  if (!venv) return { read, notes };
  add(join(venv, "pyvenv.cfg"));
  const config = venvConfig(venv);
  // What the environment's files say is the server's to have written where it lies in a write
  // grant: its base interpreter counts where one is there, its .pth folders only inside the grants.
  const planted = serverWritable(real(venv) ?? venv);
  const home = config.get("home");
  if (home && isAbsolute(home) && (!planted || hasPython(home))) prefixLib(home);
  for (const lib of ["lib", "lib64"]) {
    const dir = join(venv, lib);
    if (!existsSync(dir)) continue;
    add(dir);
    for (const pth of sitePackagesPth(dir)) {
      const r = real(pth);
      if (planted && r && !serverWritable(r))
        notes.push(
          `${pth}, named by a .pth file in a write grant, leads out of the write grants: not granted`,
        );
      else add(pth);
    }
  }
  notes.push(
    `${interpreter} is the Python of the virtual environment ${venv}: its site-packages and its base interpreter's standard library may be read`,
  );
  return { read, notes };
}

/** Whether the folder `bin` holds a Python interpreter (a venv's `home`). */
function hasPython(bin: string): boolean {
  try {
    return readdirSync(bin).some((name) => PYTHON.test(name));
  } catch {
    // No such folder: no interpreter there.
    return false;
  }
}

/** The absolute folders the `.pth` files of an environment's site-packages add to sys.path. */
function sitePackagesPth(lib: string): string[] {
  const found: string[] = [];
  let versions: string[];
  try {
    versions = readdirSync(lib).filter((name) => /^python\d/.test(name));
  } catch {
    // No lib folder: the interpreter has no site-packages to grant.
    return found;
  }
  for (const version of versions) {
    const site = join(lib, version, "site-packages");
    let names: string[];
    try {
      names = readdirSync(site).filter((name) => name.endsWith(".pth"));
    } catch {
      // An unreadable site folder has no .pth files to follow.
      continue;
    }
    for (const name of names) {
      try {
        for (const line of readFileSync(join(site, name), "utf8").split("\n")) {
          const entry = line.trim();
          // `import ...` lines run code at start; other lines are folders, relative to site-packages.
          if (!entry || entry.startsWith("#") || /^import[\s\t]/.test(entry)) continue;
          const dir = isAbsolute(entry) ? entry : join(site, entry);
          if (existsSync(dir) && statSync(dir).isDirectory()) found.push(dir);
        }
      } catch {
        // An unreadable .pth adds nothing here, as it adds nothing for Python.
      }
    }
  }
  return found;
}

/** The most of a `#!` line the kernel reads (BINPRM_BUF_SIZE). */
const SHEBANG_MAX = 256;

/** The words of the `#!` line at the start of `head` (`n` bytes read), or undefined. */
function shebangWords(head: Buffer, n: number): string[] | undefined {
  if (head.subarray(0, 2).toString("latin1") !== "#!") return undefined;
  const line = head.subarray(2, Math.min(n, SHEBANG_MAX)).toString("utf8").split("\n")[0]?.trim() ?? "";
  const words = line.split(/\s+/).filter(Boolean);
  return words.length ? words : undefined;
}

/** The ELF interpreter (PT_INTERP) of a binary, or the `#!` interpreter of a script. */
export function interpreterOf(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    // Unreadable: no shebang to read.
    return undefined;
  }
  try {
    const head = Buffer.alloc(4096);
    const n = readSync(fd, head, 0, head.length, 0);
    if (head.subarray(0, 2).toString("latin1") === "#!") return shebangWords(head, n)?.[0];
    if (n < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2) return undefined; // 64-bit ELF only
    const phoff = Number(head.readBigUInt64LE(32));
    const phentsize = head.readUInt16LE(54);
    const phnum = head.readUInt16LE(56);
    for (let i = 0; i < phnum; i++) {
      const off = phoff + i * phentsize;
      if (off + 56 > n) break;
      if (head.readUInt32LE(off) !== 3) continue; // PT_INTERP
      const start = Number(head.readBigUInt64LE(off + 8));
      const size = Number(head.readBigUInt64LE(off + 32));
      const buf = Buffer.alloc(size);
      readSync(fd, buf, 0, size, start);
      return buf.toString("latin1").replace(/\0.*$/s, "");
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The words of a script's `#!` line (the interpreter first), or undefined for anything else. The
 * kernel passes everything after the interpreter as one argument; `env -S` splits it again.
 */
export function shebangOf(file: string): string[] | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    // Unreadable: no header to read.
    return undefined;
  }
  try {
    const head = Buffer.alloc(SHEBANG_MAX);
    return shebangWords(head, readSync(fd, head, 0, head.length, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * The program a `#!/usr/bin/env [-S] NAME ...` line runs after env: NAME, looked up on PATH as env
 * would. Undefined for any other interpreter.
 */
export function envTarget(words: readonly string[], path: string | undefined): string | undefined {
  if (basename(words[0] ?? "") !== "env") return undefined;
  const rest = words.slice(1).flatMap((w) => w.split(/\s+/));
  const name = rest.find((w) => !w.startsWith("-") && !w.includes("="));
  return name ? which(name, path) : undefined;
}

class Rules {
  readonly fs = new Map<string, Set<string>>();
  readonly notes: string[] = [];

  /**
   * `path`: the server's PATH, where `#!/usr/bin/env node` finds node. `writable`: the real
   * folders and files its write rules name, where what is found (a link, a `.pth` file, a venv's
   * settings) is the server's to have written, and so widens nothing beyond them.
   */
  constructor(
    readonly path?: string,
    readonly writable: readonly string[] = [],
  ) {}

  /** Whether `path` (real) lies in what the server may write. */
  serverWritable(path: string): boolean {
    return this.writable.some((w) => path === w || path.startsWith(w.endsWith("/") ? w : `${w}/`));
  }

  add(path: string | undefined, access: string): void {
    if (!path) return;
    const rights = this.fs.get(path) ?? new Set<string>();
    for (const right of access.split(",")) rights.add(right);
    this.fs.set(path, rights);
  }

  /**
   * A program, its ELF interpreter and its extras. A script's `#!` interpreter is a program too, and
   * so is what `#!/usr/bin/env NAME` runs (as deep as the kernel follows interpreters).
   */
  program(path: string | undefined, name: string, depth = 0): void {
    if (!path) {
      this.notes.push(`${name} is not on the server's PATH: nothing to allow`);
      return;
    }
    this.add(path, EXEC);
    const shebang = shebangOf(path);
    if (shebang && depth < 4) {
      const interp = real(shebang[0] as string);
      if (interp) this.program(interp, basename(interp), depth + 1);
      // A console script's `#!<venv>/bin/python`: the environment, known by the path as written.
      if (PYTHON.test(basename(shebang[0] as string))) this.python(shebang[0] as string);
      const target = envTarget(shebang, this.path);
      if (target) this.program(target, basename(target), depth + 1);
      const found = envProgram(shebang, this.path);
      if (found && PYTHON.test(basename(found))) this.python(found);
    } else {
      const interp = interpreterOf(path);
      if (interp) this.add(real(interp), EXEC);
    }
    const extras = PROGRAM_EXTRAS[basename(path)] ?? PROGRAM_EXTRAS[name];
    for (const r of extras?.read ?? []) if (existsSync(r)) this.add(real(r), READ);
    for (const x of extras?.exec ?? []) if (existsSync(x)) this.add(real(x), `${EXEC},read_dir`);
  }

  /** A Python interpreter by the path it is started from (pythonNeeds). */
  python(interpreter: string): void {
    const needs = pythonNeeds(interpreter, (path) => this.serverWritable(path));
    for (const path of needs.read) this.add(path, READ);
    for (const note of needs.notes) if (!this.notes.includes(note)) this.notes.push(note);
  }
}

/** What `#!/usr/bin/env [-S] NAME` runs, as found on PATH (links not followed), or undefined. */
function envProgram(words: readonly string[], path: string | undefined): string | undefined {
  if (basename(words[0] ?? "") !== "env") return undefined;
  const name = words
    .slice(1)
    .flatMap((w) => w.split(/\s+/))
    .find((w) => !w.startsWith("-") && !w.includes("="));
  return name ? findProgram(name, path) : undefined;
}

/** Read access to a script and the packages beside it (`node_modules` and `package.json` up the tree). */
function scriptNeeds(rules: Rules, script: string): void {
  rules.add(dirname(script), READ);
  let dir = dirname(script);
  for (;;) {
    const modules = join(dir, "node_modules");
    const target = existsSync(modules) ? real(modules) : undefined;
    // A link the server could have made (in a write grant) to anywhere: not followed.
    if (target && rules.serverWritable(real(dir) ?? dir) && !rules.serverWritable(target))
      rules.notes.push(`${modules} leads out of the write grants to ${target}, which is not granted`);
    else if (target) rules.add(target, READ);
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) rules.add(pkg, "read_file");
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
}

function interpreterNeeds(rules: Rules, argv: readonly string[], env: NodeJS.ProcessEnv): void {
  const [command = "", ...args] = argv;
  const found = findProgram(command, env.PATH);
  const exe = found && real(found);
  if (!found || !exe) throw new Error(`cannot find the server's program "${command}" on its PATH`);
  rules.program(exe, basename(command));
  // A Python interpreter: its standard library, and its virtual environment by the path it is run from.
  if (PYTHON.test(basename(found)) || PYTHON.test(basename(exe))) rules.python(found);
  // The script is the interpreter's first argument that is not an option; later arguments are
  // the server's own and grant nothing, whatever files they name.
  const script = args.find((arg) => !arg.startsWith("-"));
  if (script && isAbsolute(script)) {
    try {
      if (statSync(script).isFile()) scriptNeeds(rules, real(script) ?? script);
    } catch {
      // Not a file: an ordinary argument.
    }
  }
}

function nearestExisting(path: string): string {
  let dir = path;
  while (!existsSync(dir)) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return dir;
}

export function splitDestination(destination: string): { host: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(destination);
  if (v6) return { host: v6[1] as string, port: Number(v6[2] ?? 0) };
  const [host = "", port] = destination.split(":");
  return { host, port: Number(port ?? 0) };
}

/**
 * A name's addresses, as the server will get them: through the resolver its DNS goes to (`upstream`,
 * the one the proxy's resolver asks) when there is one, else as the C library resolves it.
 */
async function addresses(
  host: string,
  notes: string[],
  upstream?: readonly Upstream[],
): Promise<{ address: string; family: number }[]> {
  if (isIP(host)) return [{ address: host, family: isIP(host) }];
  if (host.startsWith("*.")) {
    notes.push(`${host}: a wildcard cannot be resolved to addresses; no address is allowed for it`);
    return [];
  }
  try {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("timed out")), 2000).unref(),
    );
    return await Promise.race([
      upstream?.length ? resolveVia(host, upstream) : dns().lookup(host, { all: true }),
      timeout,
    ]);
  } catch (error) {
    notes.push(`${host} did not resolve (${(error as Error).message}); no address is allowed for it`);
    return [];
  }
}

/**
 * node:dns/promises on first use: only a policy that grants a host by name resolves one, and
 * loading it costs every other kernel-layer start about 2 ms.
 */
const dns = () => process.getBuiltinModule("node:dns/promises");

/** A name's A and AAAA records from the given resolvers. */
async function resolveVia(
  host: string,
  upstream: readonly Upstream[],
): Promise<{ address: string; family: number }[]> {
  const resolver = new (dns().Resolver)({ timeout: 1500, tries: 1 });
  resolver.setServers(
    upstream.map((u) => (isIP(u.address) === 6 ? `[${u.address}]:${u.port}` : `${u.address}:${u.port}`)),
  );
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const found = [
    ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (found.length === 0) throw v4.status === "rejected" ? v4.reason : new Error("no address");
  return found;
}

/**
 * Records of NUL-terminated fields, each record ended by an empty field, after a header record
 * (the format of bpf/input.h). A field may hold any character but NUL, so a path with `#`, a
 * newline, spaces or non-ASCII letters reaches the launcher and the loader exactly as it is. A
 * path holding NUL cannot exist; an empty field would end its record early: both are refused.
 */
export function encodeRecords(header: readonly [string, string], records: readonly string[][]): string {
  let out = "";
  for (const record of [header, ...records]) {
    for (const field of record) {
      if (field === "" || field.includes("\0"))
        throw new Error(`cannot encode ${JSON.stringify(field)} for the kernel layer: empty or holding NUL`);
      out += `${field}\0`;
    }
    out += "\0";
  }
  return out;
}

export const RULESET_HEADER = ["mcpguard-ruleset", "1"] as const;
export const LOADER_POLICY_HEADER = ["mcpguard-policy", "1"] as const;

/** What the launcher and the loader read: the kernel-side form of the rules. */
function emit(
  rules: Rules,
  network: { address: string; family: number; port: number }[],
  ports: number[] | null,
  loaderRecords: string[][] = [],
) {
  const ruleset: string[][] = [
    ["abi", String(LANDLOCK_MIN_ABI)],
    ["scope", "signal"],
    ["scope", "abstract-unix"],
  ];
  const loader: string[][] = [...loaderRecords];
  if (ports) {
    ruleset.push(["handle", "net"]);
    for (const port of ports) ruleset.push(["net", "connect", String(port)]);
  }
  for (const { address, family, port } of network) {
    loader.push(["net", family === 6 ? "allow6" : "allow4", address, String(port)]);
  }
  // Code-unit order: any fixed order does, and localeCompare's first call loads ICU's collator
  // (about 20 ms on the 2-core VMs here, on every L3 start).
  for (const [path, rights] of [...rules.fs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    ruleset.push(["fs", [...rights].sort().join(","), path]);
    const letters = `${rights.has("read_file") ? "r" : ""}${rights.has("write_file") || rights.has("make_reg") ? "w" : ""}${rights.has("execute") ? "x" : ""}`;
    if (letters) loader.push(["fs", letters, path]);
  }
  return {
    ruleset: encodeRecords(RULESET_HEADER, ruleset),
    loaderPolicy: encodeRecords(LOADER_POLICY_HEADER, loader),
  };
}

/** What a server may touch in the filesystem: each canonical path with its Landlock rights. */
export interface AccessPlan {
  fs: ReadonlyMap<string, ReadonlySet<string>>;
  /** What the plan had to approximate. */
  notes: readonly string[];
}

/**
 * The file grant of a server as a whole: its tools' needs and what its interpreter needs to start.
 * The kernel layer compiles it into a Landlock ruleset; `mcpguard policy export` into other
 * sandboxes' profiles, so that both grant the same.
 */
export function planAccess(needs: KernelNeeds, argv: readonly string[], env: NodeJS.ProcessEnv): AccessPlan {
  const rules = fileRules(needs, argv, env);
  if (argv.length === 0) rules.notes.push("no server command: nothing is granted for an interpreter");
  return { fs: rules.fs, notes: rules.notes };
}

/** The file rules of `plan` (planAccess, for the same needs, command and environment), copied to add to. */
function rulesOf(plan: AccessPlan): Rules {
  const rules = new Rules();
  for (const [path, rights] of plan.fs) rules.fs.set(path, new Set(rights));
  rules.notes.push(...plan.notes);
  return rules;
}

/** The Landlock rights that let a process change what is under a path (not read or run it). */
const WRITE_RIGHTS = new Set([
  "write_file",
  "truncate",
  "make_reg",
  "make_dir",
  "make_sym",
  "make_sock",
  "make_fifo",
  "make_char",
  "make_block",
  "remove_file",
  "remove_dir",
  "refer",
]);

/**
 * The canonical paths the kernel layer lets the server change, exactly as the ruleset grants them
 * (a missing write target is its nearest existing directory): where none of mcpguard's own files
 * may lie. Interpreter needs grant reading and running only, so the command does not matter.
 */
export function writablePaths(needs: KernelNeeds, env: NodeJS.ProcessEnv): string[] {
  const rules = fileRules(needs, [], env);
  return [...rules.fs].filter(([, rights]) => [...rights].some((r) => WRITE_RIGHTS.has(r))).map(([p]) => p);
}

/** The file rules; without a command (argv empty) only the tools' needs and the system's. */
function fileRules(needs: KernelNeeds, argv: readonly string[], env: NodeJS.ProcessEnv): Rules {
  const writable = needs.write.map((path) => real(existsSync(path) ? path : nearestExisting(path)) ?? path);
  const rules = new Rules(env.PATH, writable);
  if (argv.length > 0) interpreterNeeds(rules, argv, env);
  for (const path of SYSTEM_READ) if (existsSync(path)) rules.add(real(path), READ);
  for (const [path, access] of DEVICES) if (existsSync(path)) rules.add(path, access);
  // The certificate authorities the client trusts, where its environment names them.
  for (const name of TRUST_VARIABLES) {
    const path = env[name];
    if (path && isAbsolute(path) && existsSync(path)) rules.add(real(path), READ);
  }
  for (const path of needs.read) if (existsSync(path)) rules.add(real(path), READ);
  for (const path of needs.write) {
    if (!existsSync(path)) {
      const dir = nearestExisting(path);
      rules.add(real(dir), WRITE_NEW);
      rules.notes.push(`${path} does not exist yet: files may be created in ${dir}`);
    } else {
      rules.add(real(path), statSync(path).isDirectory() ? WRITE_DIR : WRITE_FILE);
    }
  }
  if (needs.shell) rules.program(which("sh", env.PATH) ?? real("/bin/sh"), "sh");
  for (const entry of needs.exec) {
    const name = entry.split(" ")[0] as string;
    rules.program(which(name, env.PATH), name);
    for (const path of homeExtras(name, env)) if (existsSync(path)) rules.add(real(path), READ);
  }
  return rules;
}

/** The resolver the server's port-53 traffic goes to (resolver.ts), where the policy names a host. */
export interface DnsRedirect {
  /** Its port on 127.0.0.1 (and ::1 where `ipv6`). */
  port: number;
  ipv6: boolean;
  /** Whom it asks: the names' addresses are looked up there too. */
  upstream?: readonly Upstream[];
}

/** The host names (not addresses) a policy's destinations name: what its DNS may ask for. */
export function grantedNames(needs: KernelNeeds): string[] {
  return [
    ...new Set(
      needs.network
        .map(splitDestination)
        .filter((d) => d.host && !isIP(d.host))
        .map((d) => d.host),
    ),
  ];
}

/**
 * /proc, granted whole and read-only (Landlock cannot grant procfs file by file: a rule on an entry
 * lasts only as long as its dentry, the mount's root is pinned), and only where the launcher mounts
 * a /proc of the server's PID namespace (`--isolate pid`): the host's would show every process,
 * the proxy's environment among them. Nothing on it may be written or run.
 */
const PROC = "/proc";

export async function compile(
  needs: KernelNeeds,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  dns?: DnsRedirect,
  options: { privateProc?: boolean; plan?: AccessPlan } = {},
): Promise<Compiled> {
  if (argv.length === 0) throw new Error("no server command to compile a ruleset for");
  checkSockets(needs, env);
  // `plan`: the file rules already read for these needs, command and environment, which the caller
  // has judged (what the server may read of the proxy's secrets): the ruleset is made of exactly those.
  const rules = options.plan ? rulesOf(options.plan) : fileRules(needs, argv, env);
  if (options.privateProc) {
    rules.add(PROC, READ);
    rules.notes.push(
      "the server has PID and mount namespaces and a /proc of its own (it lists the server's processes only): /proc may be read, not written",
    );
  }
  const destinations = needs.network.map(splitDestination);
  let ports: number[] | null = null;
  if (destinations.every((d) => d.port > 0)) {
    ports = [...new Set(destinations.map((d) => d.port))];
  } else {
    rules.notes.push(
      "a destination without a port: Landlock leaves TCP ports open, cgroup BPF still checks addresses",
    );
  }
  const network: { address: string; family: number; port: number }[] = [];
  for (const d of destinations) {
    for (const { address, family } of await addresses(d.host, rules.notes, dns?.upstream)) {
      network.push({ address, family, port: d.port });
    }
  }
  const names = grantedNames(needs);
  const records: string[][] = (needs.sockets ?? []).map((path) => ["unix", path]);
  if (names.length > 0 && dns) {
    // Every port-53 connect and send goes to the proxy's resolver, which answers these names only.
    for (const path of RESOLVER_FILES) if (existsSync(path)) rules.add(real(path), "read_file");
    if (ports) ports = [...new Set([...ports, 53])];
    records.push([
      "dns",
      "127.0.0.1",
      String(dns.port),
      dns.ipv6 ? "::1" : "-",
      dns.ipv6 ? String(dns.port) : "0",
    ]);
    rules.notes.push(
      `${names.join(", ")} ${names.length > 1 ? "are names" : "is a name"}: the server may read the resolver's settings, and its DNS (UDP and TCP port 53, any address) goes to mcpguard's resolver, which answers for ${names.length > 1 ? "these names" : "this name"} only`,
    );
  } else if (names.length > 0) {
    const resolvers = resolverNeeds(rules);
    for (const address of resolvers) network.push({ address, family: isIP(address), port: 53 });
    if (ports && resolvers.length > 0) ports = [...new Set([...ports, 53])];
    rules.notes.push(
      `${names.join(", ")} ${names.length > 1 ? "are names" : "is a name"}: the server may read the resolver's settings and query ${resolvers.map((a) => `${a}:53`).join(", ") || "no name server"} (no resolver of mcpguard's runs here, so DNS queries can carry data out to any domain's name servers)`,
    );
  }
  return { ...emit(rules, network, ports, records), notes: rules.notes };
}

/**
 * The sockets of `needs`, each checked by {@link socketRefusal} against the server's write grants;
 * throws the first refusal, as a KernelSetupError.
 */
export function checkSockets(needs: KernelNeeds, env: NodeJS.ProcessEnv): void {
  if (!needs.sockets?.length) return;
  const writable = writablePaths(needs, env);
  for (const path of needs.sockets) {
    const why = socketRefusal(path, writable);
    if (why) throw new KernelSetupError(why);
  }
}

/** What the C library reads to resolve a name: its settings, never the account database. */
const RESOLVER_FILES = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
];

/**
 * A policy that names a host lets the server resolve it, as it must to reach it: read access to the
 * resolver's settings and the name servers of /etc/resolv.conf (the C library's default, the local
 * host, when it lists none). Returns those name servers. Used where no resolver of mcpguard's runs.
 */
function resolverNeeds(rules: Rules): string[] {
  for (const path of RESOLVER_FILES) if (existsSync(path)) rules.add(real(path), "read_file");
  return systemNameServers().map((s) => s.address);
}
