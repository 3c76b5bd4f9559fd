/**
 * What a server command really runs. Most `mcpServers` entries start a server through a launcher:
 * `npx -y <package>`, `npm exec`, or an interpreter that is a version manager's shim (pyenv's
 * `python3` is a bash script that runs `pyenv exec`). Under L3 the launcher is resolved before
 * confinement, to the interpreter and script it would run, and only that runs confined. The
 * launcher's own needs (npm's cache, its config with the registry token, the registry, DNS, the
 * version manager's files) are never granted to the server: they would be the server's too.
 *
 * npx is resolved from the npm cache first (`--offline`), so a server whose package is cached
 * starts without the network; only a package missing from the cache is fetched, as npx would,
 * unless npm is told to stay offline. Install scripts never run (`--ignore-scripts`): they would
 * run outside the sandbox. `uvx` (and `uv tool run`) is resolved the same way: uv prepares the
 * tool's environment, from its cache first, and the command's console script in it runs confined,
 * with the environment's interpreter (compile.ts, pythonNeeds).
 *
 * What runs here runs outside the sandbox, so none of it may be the server's: given where the
 * server may write (`writable`, from the config's write grants), a program found there is the
 * server's own and runs confined as it is, never here; a shim whose manager lies there is refused;
 * the PATH the launcher runs with leaves out every folder the server may write; and the
 * configuration npm and uv read from the folder they run in and the folders above it (`.npmrc`,
 * `uv.toml`, `pyproject.toml`) is not read where the server may write it (`--prefix` of a folder
 * of npm's own, `--no-config`), nor npm's user configuration (refused). npx runs its one command
 * with `/bin/sh`, never a shell found on a PATH (see askNpx).
 */
import { execFile } from "node:child_process";
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { envTarget, shebangOf, which } from "./compile.js";

export class LaunchError extends Error {
  override readonly name = "LaunchError";
}

export interface Launch {
  /** What runs confined: the interpreter and the script the launcher would run, and its arguments. */
  argv: string[];
  /** How the command was resolved ("npx @scope/pkg", "pyenv shim python3"), when it was. */
  via?: string;
  /** The script an interpreter runs, when there is one. */
  script?: string;
  /** The server's own arguments: after the interpreter's options and the script (or module). */
  args: string[];
  /** What the resolution left out because the server may write it, for the start record. */
  notes?: string[];
}

export interface LaunchOptions {
  /** The launcher's environment: the proxy's, whose PATH finds the command. */
  env: NodeJS.ProcessEnv;
  /** The folder the command is started from, where npm and uv look for a project's settings. */
  cwd: string;
  /**
   * Why the server may write or create `path` (the grant, for a message), or undefined where it
   * may not. Without it, nothing is judged (policy export, which starts nothing).
   */
  writable?: (path: string) => string | undefined;
}

interface Interpreter {
  /** Options whose value is the next word. */
  valued: ReadonlySet<string>;
  /** Options after which the next word is code or a module, not a script. */
  code: ReadonlySet<string>;
}

const NODE: Interpreter = {
  valued: new Set([
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--input-type",
    "-C",
    "--conditions",
    "--title",
    "--env-file",
    "--inspect-port",
  ]),
  code: new Set(["-e", "--eval", "-p", "--print"]),
};
const PYTHON: Interpreter = {
  valued: new Set(["-W", "-X", "--check-hash-based-pycs"]),
  code: new Set(["-c", "-m"]),
};
const OTHER: Interpreter = { valued: new Set(), code: new Set(["-c", "-e"]) };

function interpreterOf(program: string): Interpreter | undefined {
  const name = basename(program);
  if (/^node(js)?$/.test(name)) return NODE;
  if (/^python(\d+(\.\d+)?)?$/.test(name)) return PYTHON;
  if (/^(sh|bash|dash|zsh|ruby|perl|php)$/.test(name)) return OTHER;
  return undefined;
}

/**
 * The script and the server's own arguments in a command: for an interpreter, its first word that
 * is not an option (or what follows `-m module`); for any other program, every argument.
 */
export function splitCommand(argv: readonly string[]): { script?: string; args: string[] } {
  const [program = "", ...rest] = argv;
  const interp = interpreterOf(program);
  if (!interp) return { args: rest };
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word === "--") return { script: rest[i + 1], args: rest.slice(i + 2) };
    if (interp.code.has(word)) return { args: rest.slice(i + 2) };
    if (interp.valued.has(word)) {
      i++;
      continue;
    }
    if (!word.startsWith("-")) return { script: word, args: rest.slice(i + 1) };
  }
  return { args: [] };
}

/**
 * The file the command names, as execvp finds it: the first executable file on PATH, shims
 * included (compile's `which` passes over shims, which are never granted).
 */
function onPath(name: string, path: string | undefined): string | undefined {
  if (name.includes("/")) return existsSync(name) ? name : undefined;
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** A version manager's shim: the manager's own command and the environment it needs. */
function shimOf(file: string): { manager: string; env: Record<string, string> } | undefined {
  try {
    if (statSync(file).size > 65_536) return undefined;
  } catch {
    // Unreadable: not a shim.
    return undefined;
  }
  const text = readFileSync(file, "latin1");
  // pyenv, rbenv, nodenv, goenv, plenv and jenv write the same shim.
  const exec = /exec "([^"]+\/libexec\/(pyenv|rbenv|nodenv|goenv|plenv|jenv))" exec "\$program"/.exec(text);
  if (!exec) return undefined;
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^export ([A-Z_]+_ROOT)="([^"]*)"$/gm)) env[m[1] as string] = m[2] as string;
  return { manager: exec[1] as string, env };
}

function run(
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number },
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: options.env, cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => resolve({ ok: !error, stdout: String(stdout), stderr: String(stderr) }),
    ).stdin?.end();
  });
}

/** The last meaningful line of a tool's error output, for a one-line message. */
function lastLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.replace(/^npm (error|ERR!) /, "").trim())
    .filter((l) => l && !/complete log of this run|^code [A-Z]/.test(l));
  return lines[0] ?? "no output";
}

/**
 * The environment a launcher runs with here, outside the sandbox: the PATH without the folders
 * the server may write or put a program in (npx's `#!/usr/bin/env node` would run a `node` the
 * server put first), nor relative ones, which name a folder by where the launcher happens to run.
 */
function unconfinedEnv(options: LaunchOptions, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...options.env, ...extra };
  const { writable } = options;
  if (writable && env.PATH !== undefined)
    env.PATH = env.PATH.split(delimiter)
      .filter((dir) => isAbsolute(dir) && !writable(dir))
      .join(delimiter);
  return env;
}

/**
 * Where the server may write a file that `names` stands for in the folder a tool runs in or a
 * folder above it, which the tool reads as its settings (npm's project `.npmrc`, uv's `uv.toml`):
 * the first such file and why, or undefined.
 */
function writableSettings(options: LaunchOptions, names: readonly string[]): string | undefined {
  const { writable } = options;
  if (!writable) return undefined;
  for (let dir = options.cwd; ; dir = dirname(dir)) {
    for (const name of names) {
      const file = join(dir, name);
      const reach = writable(file);
      if (reach) return `${file} (${reach})`;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

async function resolveShim(exe: string, name: string, options: LaunchOptions): Promise<string | undefined> {
  const shim = shimOf(exe);
  if (!shim) return undefined;
  const tool = basename(shim.manager);
  const reach = options.writable?.(shim.manager);
  if (reach) {
    throw new LaunchError(
      `${name} is a ${tool} shim (${exe}) whose ${tool}, ${shim.manager}, lies where the server may write (${reach}): ` +
        "it would run outside the sandbox; give the interpreter's own path",
    );
  }
  const answer = await run(shim.manager, ["which", name], {
    env: unconfinedEnv(options, shim.env),
    cwd: options.cwd,
    timeoutMs: 15_000,
  });
  const target = answer.stdout.trim().split("\n")[0] ?? "";
  if (!answer.ok || !isAbsolute(target)) {
    throw new LaunchError(
      `${name} is a ${tool} shim (${exe}), and \`${tool} which ${name}\` failed: ${lastLine(answer.stderr)}`,
    );
  }
  return target;
}

interface NpxCommand {
  /** The packages to install (`-p`), or the one the command names. */
  packages: string[];
  /** The bin to run, when `-p` named the package; else the package spec. */
  command: string;
  args: string[];
  /** npm options to pass on to the resolution (`--yes`, `--registry=...`, ...). */
  flags: string[];
}

const NPX_FLAGS = new Set(["-y", "--yes", "--no", "--offline", "--prefer-offline", "--prefer-online"]);
const NPX_IGNORED = new Set(["-q", "--quiet", "-s", "--silent"]);
const NPX_VALUED = new Set(["--registry", "--cache", "--userconfig", "--loglevel"]);

/** `npx [options] <package|command> [args...]` (also `npm exec` and `npm x`), or undefined. */
export function parseNpx(argv: readonly string[]): NpxCommand | undefined {
  const name = basename(argv[0] ?? "");
  let rest: string[];
  if (name === "npx") rest = argv.slice(1);
  else if (name === "npm" && (argv[1] === "exec" || argv[1] === "x")) rest = argv.slice(2);
  else return undefined;
  const packages: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    const [option = "", inline] = word.startsWith("--") ? word.split(/=(.*)/s) : [word];
    if (word === "--") {
      const command = rest[i + 1];
      if (command === undefined) break;
      return { packages, command, args: rest.slice(i + 2), flags };
    }
    if (!word.startsWith("-")) return { packages, command: word, args: rest.slice(i + 1), flags };
    if (NPX_FLAGS.has(word)) flags.push(word === "-y" ? "--yes" : word);
    else if (NPX_IGNORED.has(word)) continue;
    else if (option === "-p" || option === "--package") {
      const value = inline ?? rest[++i];
      if (value === undefined) throw new LaunchError(`npx: ${option} needs a package`);
      packages.push(value);
    } else if (NPX_VALUED.has(option)) {
      const value = inline ?? rest[++i];
      if (value === undefined) throw new LaunchError(`npx: ${option} needs a value`);
      flags.push(`${option}=${value}`);
    } else if (option === "-c" || option === "--call") {
      throw new LaunchError(
        "npx -c runs a shell command line; under L3 give the server's own command (npx <package> [args])",
      );
    } else {
      throw new LaunchError(`cannot tell what npx would run with the option ${word}`);
    }
  }
  throw new LaunchError("npx names no package or command to run");
}

/** The package name of a registry spec (`@scope/name@^1`, `name@latest`), or undefined. */
export function packageName(spec: string): string | undefined {
  const m = /^(@[a-z0-9][\w.-]*\/[a-z0-9][\w.-]*|[a-z0-9][\w.-]*)(@[^/:]+)?$/i.exec(spec);
  return m?.[1];
}

/** The part of a package.json that says what npx runs. */
const BinManifest = z.looseObject({
  bin: z.optional(z.union([z.string(), z.record(z.string(), z.string())])),
});

/** The bin npx runs for a package: its only one, or the one named like the package. */
function binOf(pkgJson: string, name: string): string {
  let parsed: ReturnType<typeof BinManifest.safeParse>;
  try {
    parsed = BinManifest.safeParse(JSON.parse(readFileSync(pkgJson, "utf8")));
  } catch (error) {
    throw new LaunchError(`${pkgJson}: not a package manifest npx can run (${(error as Error).message})`);
  }
  if (!parsed.success) {
    throw new LaunchError(
      `${pkgJson}: not a package manifest npx can run (its bin is neither a path nor a map of paths)`,
    );
  }
  const manifest = parsed.data;
  const unscoped = name.replace(/^@[^/]+\//, "");
  if (typeof manifest.bin === "string") return unscoped;
  const bins = Object.keys(manifest.bin ?? {});
  if (bins.length === 1) return bins[0] as string;
  if (bins.includes(unscoped)) return unscoped;
  throw new LaunchError(
    bins.length === 0
      ? `${name} has no bin for npx to run`
      : `${name} has several bins (${bins.join(", ")}) and none named ${unscoped}`,
  );
}

/** Where npx finds the command: its bin in a `node_modules/.bin` on the PATH npx gives it. */
function locateBin(path: string, npx: NpxCommand): string {
  const explicit = npx.packages.length > 0;
  const name = explicit ? undefined : packageName(npx.command);
  if (!explicit && !name) {
    throw new LaunchError(
      `npx ${npx.command}: only registry packages are resolved before confinement; start it with node <script>`,
    );
  }
  for (const dir of path.split(delimiter)) {
    if (!dir.endsWith(`${join("node_modules", ".bin")}`)) continue;
    let bin = npx.command;
    if (name) {
      const pkgJson = join(dirname(dir), name, "package.json");
      if (!existsSync(pkgJson)) continue;
      bin = binOf(pkgJson, name);
    }
    const candidate = join(dir, bin);
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  throw new LaunchError(`npx installed ${npx.packages.join(", ") || npx.command} but gave no bin to run`);
}

async function resolveNpx(
  npx: NpxCommand,
  npxPath: string,
  options: LaunchOptions,
  viaNpm: boolean,
): Promise<Launch> {
  // The same question to npm itself (`npm exec`, `npm x`) needs its subcommand.
  const subcommand = viaNpm ? ["exec"] : [];
  const { notes, settings, dispose } = await npmSettings(npx, npxPath, options);
  try {
    return await askNpx(npx, npxPath, options, [...subcommand, ...settings], notes);
  } finally {
    dispose();
  }
}

/** npx asked which bin it would run, from its cache first; `leading`: its subcommand and settings. */
async function askNpx(
  npx: NpxCommand,
  npxPath: string,
  options: LaunchOptions,
  leading: string[],
  notes: string[],
): Promise<Launch> {
  const packages = npx.packages.length ? npx.packages : [npx.command];
  const env = unconfinedEnv(options);
  const ask = (flags: string[]) =>
    run(
      npxPath,
      [
        ...leading,
        ...flags,
        // npm runs `-c` with a shell it looks up by name on a PATH of its own, whose first folders
        // are the installed packages' bins: a package with a bin named `sh` ran here. And install
        // scripts would run here too.
        "--script-shell=/bin/sh",
        "--ignore-scripts",
        ...packages.map((p) => `--package=${p}`),
        "-c",
        'printf "%s\\n" "$PATH"',
      ],
      { env, cwd: options.cwd, timeoutMs: 120_000 },
    );
  const offline = npx.flags.includes("--offline") || /^(1|true)$/i.test(options.env.npm_config_offline ?? "");
  const chooses = npx.flags.some((f) => f === "--prefer-online" || f === "--offline");
  // The cache first: a cached server starts without the network.
  let answer = await ask(chooses ? npx.flags : [...npx.flags, "--offline"]);
  if (!answer.ok && !offline && !chooses) answer = await ask(npx.flags);
  if (!answer.ok) {
    throw new LaunchError(
      `npx could not install ${packages.join(", ")}${offline || chooses ? "" : " (from the npm cache or the registry)"}: ${lastLine(answer.stderr)}`,
    );
  }
  const entry = locateBin(answer.stdout.trim().split("\n")[0] ?? "", npx);
  return {
    ...scriptLaunch(entry, npx.args, options.env),
    via: `npx ${packages.join(" ")}`,
    ...(notes.length ? { notes } : {}),
  };
}

/**
 * What npm reads as its settings, where the server may write it. A project's `.npmrc` (in the
 * folder npm takes for the project, which the server may make by writing a package.json) is left
 * out by giving npm a project folder of its own (`--prefix`): a new private folder, outside every
 * write grant, whose `node_modules` is the project's, so that npm finds the same installed packages
 * and installs the others into its cache as before. `--prefix` also moves npm's global settings
 * file, so the one npm would read is named to it (`--globalconfig`, as npm itself says it is). A
 * user configuration the server may write is refused, there being no way to read the user's and
 * not the server's.
 */
async function npmSettings(
  npx: NpxCommand,
  npxPath: string,
  options: LaunchOptions,
): Promise<{ notes: string[]; settings: string[]; dispose: () => void }> {
  const none = { notes: [], settings: [], dispose: () => {} };
  const { writable } = options;
  if (!writable) return none;
  const given = npx.flags.find((f) => f.startsWith("--userconfig="))?.slice("--userconfig=".length);
  const fromEnv = Object.entries(options.env).find(([k]) => k.toLowerCase() === "npm_config_userconfig")?.[1];
  const home = options.env.HOME;
  const user = given ?? fromEnv ?? (home ? join(home, ".npmrc") : undefined);
  const userReach =
    user === undefined ? undefined : writable(isAbsolute(user) ? user : join(options.cwd, user));
  if (userReach) {
    throw new LaunchError(
      `npx would read its user settings from ${user}, where the server may write (${userReach}): ` +
        "they run programs outside the sandbox (script-shell, git); keep them out of the server's write grants",
    );
  }
  const project = writableSettings(options, [".npmrc"]);
  if (!project) return none;
  const own = privateFolder(options);
  const dispose = () => rmSync(own, { recursive: true, force: true });
  try {
    const modules = join(await npmProject(options.cwd), "node_modules");
    if (existsSync(modules)) symlinkSync(modules, join(own, "node_modules"));
    // npm's own answer, asked in the private folder (no project there): what it reads by default.
    const npm = join(dirname(npxPath), "npm-cli.js");
    const asked = await run(existsSync(npm) ? npm : npxPath, ["config", "get", "globalconfig"], {
      env: unconfinedEnv(options),
      cwd: own,
      timeoutMs: 30_000,
    });
    const globalconfig = asked.stdout.trim();
    if (!asked.ok || !isAbsolute(globalconfig))
      throw new LaunchError(`npm could not say where its global settings are: ${lastLine(asked.stderr)}`);
    return {
      notes: [`npx ran without the project's npm settings: the server may write ${project}`],
      settings: [`--prefix=${own}`, `--globalconfig=${globalconfig}`],
      dispose,
    };
  } catch (error) {
    dispose();
    throw error;
  }
}

/**
 * A new folder of this process's own (mkdtemp: 0700) where the server may write nothing: the
 * first place of the temporary folders the server's write grants do not reach (a server granted
 * the temporary folder could otherwise write a `.npmrc` into it while npx runs).
 */
export function privateFolder(options: LaunchOptions): string {
  const candidates = [tmpdir(), "/tmp", "/var/tmp", "/run", "/dev/shm"];
  for (const base of candidates) {
    if (!isAbsolute(base) || options.writable?.(join(base, "mcpguard-npm-probe")) || !existsSync(base))
      continue;
    try {
      return mkdtempSync(join(base, "mcpguard-npm-"));
    } catch {
      // Not writable here (a read-only /run): the next place.
    }
  }
  throw new LaunchError(
    `npx needs a folder of its own outside the server's write grants, and every temporary folder (${candidates.join(", ")}) is in one`,
  );
}

/** The part of a package.json that names a workspace root's members (npm's `workspaces`). */
const WorkspacesManifest = z.looseObject({
  workspaces: z.optional(
    z.union([z.array(z.string()), z.looseObject({ packages: z.optional(z.array(z.string())) })]),
  ),
});

/**
 * The folder npm takes for the project, as @npmcli/config's loadLocalPrefix finds it: the nearest
 * holding a package.json or node_modules, from `cwd` up; or, above it, the nearest whose package.json
 * lists it among its workspaces, where npm hoists their packages.
 */
async function npmProject(cwd: string): Promise<string> {
  let found: string | undefined;
  for (let dir = cwd; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    const hasManifest = isFile(manifest);
    if (!found) {
      if (hasManifest || isDirectory(join(dir, "node_modules"))) found = dir;
    } else if (hasManifest && (await listsWorkspace(manifest, found))) return dir;
    if (dirname(dir) === dir) return found ?? cwd;
  }
}

/** Whether the package.json `manifest` lists `member` (a folder with a package.json) as a workspace. */
async function listsWorkspace(manifest: string, member: string): Promise<boolean> {
  let parsed: ReturnType<typeof WorkspacesManifest.safeParse>;
  try {
    parsed = WorkspacesManifest.safeParse(JSON.parse(readFileSync(manifest, "utf8")));
  } catch {
    // npm moves on past a package.json it cannot read.
    return false;
  }
  const listed = parsed.success ? parsed.data.workspaces : undefined;
  const patterns = Array.isArray(listed) ? listed : (listed?.packages ?? []);
  if (patterns.length === 0 || !isFile(join(member, "package.json"))) return false;
  const { globMatcher } = await import("@mcpguard/readers");
  const root = dirname(manifest);
  let inside = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith("!");
    const matches = globMatcher(join(root, negated ? pattern.slice(1) : pattern), "path");
    if (matches?.(member)) inside = !negated;
  }
  return inside;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Run `script` as the kernel would: through the program its `#!` line names, found on PATH. A
 * Python interpreter keeps the path the line gives (a virtual environment's `bin/python` links to
 * the system's, but started as the link it is that environment's).
 */
function scriptLaunch(script: string, args: string[], env: NodeJS.ProcessEnv): Launch {
  const shebang = shebangOf(script);
  const named = shebang?.[0];
  const asWritten =
    named && isAbsolute(named) && /^python(\d+(\.\d+)?)?$/.test(basename(named)) && existsSync(named)
      ? named
      : undefined;
  const interpreter = shebang
    ? (asWritten ?? envTarget(shebang, env.PATH) ?? which(named as string, env.PATH))
    : undefined;
  if (interpreter && interpreterOf(interpreter)) {
    return { argv: [interpreter, script, ...args], script, args };
  }
  return { argv: [script, ...args], args };
}

interface UvCommand {
  /** The package spec the tool comes from (`--from`, or the command's own `name@version`). */
  from: string;
  /** The command to run from the tool's environment (its console script). */
  command: string;
  args: string[];
  /** uv options to pass on to the resolution (`--python 3.12`, `--with x`, `--offline`, ...). */
  flags: string[];
}

/** uv options of `uvx`/`uv tool run` that take a value. */
const UV_VALUED = new Set([
  "--from",
  "--with",
  "--with-requirements",
  "--with-editable",
  "-p",
  "--python",
  "--index",
  "--default-index",
  "--index-url",
  "--extra-index-url",
  "-i",
  "--cache-dir",
  "--directory",
  "--project",
  "--config-file",
  "--env-file",
]);

/** `uvx [options] <command>[@version] [args...]` (also `uv tool run`), or undefined. */
export function parseUvx(argv: readonly string[]): UvCommand | undefined {
  const name = basename(argv[0] ?? "");
  let rest: string[];
  if (name === "uvx") rest = argv.slice(1);
  else if (name === "uv" && argv[1] === "tool" && (argv[2] === "run" || argv[2] === "uvx"))
    rest = argv.slice(3);
  else return undefined;
  const flags: string[] = [];
  let from: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word === "--") break;
    if (!word.startsWith("-")) {
      const command = word.replace(/@.*$/, "");
      return { from: from ?? word, command, args: rest.slice(i + 1), flags };
    }
    const [option = "", inline] = word.startsWith("--") ? word.split(/=(.*)/s) : [word];
    if (UV_VALUED.has(option)) {
      const value = inline ?? rest[++i];
      if (value === undefined) throw new LaunchError(`uvx: ${option} needs a value`);
      if (option === "--from") from = value;
      else flags.push(option, value);
    } else flags.push(word);
  }
  throw new LaunchError("uvx names no command to run");
}

/**
 * What `uvx` would run: the tool's environment (uv keeps it in its cache, a virtual environment)
 * and the command's console script in it. uv is asked the way npx is: run Python in that
 * environment to print its scripts folder, from uv's cache first (`--offline`), so that a cached
 * tool starts without the network.
 */
async function resolveUvx(
  uv: UvCommand,
  uvxPath: string,
  options: LaunchOptions,
  viaUv: boolean,
): Promise<Launch> {
  // Python isolated (-I) and without site (-S): a `.pth` file the tool's packages installed would
  // run its code here. Without site a venv's sysconfig is the base Python's, so the scripts folder
  // is the one the environment's own python lies in (its `bin`, where uv puts console scripts).
  const code = "import os, sys; print(os.path.dirname(sys.executable))";
  const { notes, settings } = uvSettings(options);
  const env = unconfinedEnv(options);
  const ask = (flags: string[]) =>
    run(
      uvxPath,
      [
        ...(viaUv ? ["tool", "run"] : []),
        ...settings,
        ...flags,
        // A source distribution's build runs its code: here, that would be outside the sandbox.
        "--no-build",
        "--from",
        uv.from,
        "python",
        "-I",
        "-S",
        "-c",
        code,
      ],
      { env, cwd: options.cwd, timeoutMs: 120_000 },
    );
  const chooses = uv.flags.includes("--offline") || uv.flags.includes("--no-offline");
  let answer = await ask(chooses ? uv.flags : [...uv.flags, "--offline"]);
  if (!answer.ok && !chooses) answer = await ask(uv.flags);
  if (!answer.ok) throw new LaunchError(`uvx could not prepare ${uv.from}: ${lastLine(answer.stderr)}`);
  const scripts = answer.stdout.trim().split("\n").at(-1) ?? "";
  const entry = join(scripts, uv.command);
  if (!isAbsolute(scripts) || !existsSync(entry))
    throw new LaunchError(`uvx prepared ${uv.from} but its environment has no ${uv.command} to run`);
  return {
    ...scriptLaunch(entry, uv.args, options.env),
    via: `uvx ${uv.from}`,
    ...(notes.length ? { notes } : {}),
  };
}

/**
 * uv reads its settings from `uv.toml` or a `pyproject.toml` in the folder it runs in or one above
 * it: their indexes and build settings decide what it downloads and builds. Where the server may
 * write one of them, uv runs with `--no-config`, which reads none. What is the user's own (uv's
 * settings folder, with its `uv.toml` and its `.python-version` pin; its cache, where the tool's
 * environment and the Python uv runs here live; its tools folder) the server must not be able to
 * write at all: uv would run what it put there, here. That is refused.
 */
function uvSettings(options: LaunchOptions): { notes: string[]; settings: string[] } {
  const { writable } = options;
  if (!writable) return { notes: [], settings: [] };
  const env = options.env;
  const under = (base: string | undefined, ...rest: string[]) =>
    base && isAbsolute(base) ? join(base, ...rest) : undefined;
  const home = env.HOME;
  const userFolders = [
    env.UV_CONFIG_FILE,
    under(env.XDG_CONFIG_HOME || under(home, ".config"), "uv", "uv.toml"),
    under(env.XDG_CONFIG_HOME || under(home, ".config"), "uv", ".python-version"),
    under(env.UV_CACHE_DIR || under(env.XDG_CACHE_HOME || under(home, ".cache"), "uv"), "x"),
    under(env.UV_TOOL_DIR || under(env.XDG_DATA_HOME || under(home, ".local", "share"), "uv", "tools"), "x"),
    under(
      env.UV_PYTHON_INSTALL_DIR || under(env.XDG_DATA_HOME || under(home, ".local", "share"), "uv", "python"),
      "x",
    ),
  ];
  for (const file of userFolders) {
    if (!file || !isAbsolute(file)) continue;
    const reach = writable(file);
    if (reach) {
      throw new LaunchError(
        `uvx would use ${file.endsWith("/x") ? dirname(file) : file}, where the server may write (${reach}): ` +
          "uv runs what lies there outside the sandbox; keep uv's settings, cache and tools out of the server's write grants",
      );
    }
  }
  const found = writableSettings(options, ["uv.toml", "pyproject.toml"]);
  if (!found) return { notes: [], settings: [] };
  return {
    notes: [`uvx ran without uv's settings files: the server may write ${found}`],
    settings: ["--no-config"],
  };
}

const UNRESOLVED = new Set(["bunx", "pipx", "pnpx"]);

/**
 * What `argv` runs, resolved before confinement: a shim to the interpreter it stands for, npx to
 * `node <the package's bin script>`. Anything else is run as it is.
 */
export async function resolveLaunch(argv: readonly string[], options: LaunchOptions): Promise<Launch> {
  const [command = "", ...rest] = argv;
  const name = basename(command);
  const exe = onPath(command, options.env.PATH);
  if (!exe) throw new LaunchError(`cannot find the server's program "${command}" on its PATH`);
  // A program the server may have written is the server's own: it runs confined, as it is.
  if (options.writable?.(exe)) return { argv: [...argv], ...splitCommand(argv) };
  const shim = await resolveShim(exe, name, options);
  const npx = parseNpx([name, ...rest]);
  const uvx = npx ? undefined : parseUvx([name, ...rest]);
  if (npx || uvx) {
    // The launcher runs here: a shim's choice (pyenv's `npx`) the server may write is the server's.
    const launcher = shim ?? realpathSync(exe);
    const reach = options.writable?.(launcher);
    if (reach) {
      throw new LaunchError(
        `${name} is ${launcher} here, where the server may write (${reach}): it would run outside the sandbox; ` +
          "give the server's installed entry point",
      );
    }
    return npx
      ? resolveNpx(npx, launcher, options, name === "npm")
      : resolveUvx(uvx as UvCommand, launcher, options, name === "uv");
  }
  if (
    UNRESOLVED.has(name) ||
    (name === "pnpm" && rest[0] === "dlx") ||
    (name === "uv" && rest[0] === "run")
  ) {
    throw new LaunchError(
      `${name} is a launcher that mcpguard does not resolve before confinement yet; ` +
        "under L3 start the server's own program (its installed entry point)",
    );
  }
  if (!shim) return { argv: [...argv], ...splitCommand(argv) };
  const launched = [shim, ...rest];
  return {
    argv: launched,
    ...splitCommand(launched),
    via: `${basename(shimOf(exe)?.manager ?? "")} shim ${name}`,
  };
}
