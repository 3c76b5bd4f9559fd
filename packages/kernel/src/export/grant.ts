/**
 * A server's grant as a whole, in a form every exporter reads: the same file plan the kernel layer
 * compiles into its Landlock ruleset (planAccess: the tools' needs and the interpreter's), the
 * symbolic links on the way to what it grants, the network destinations, the environment the policy
 * keeps and the limits of its cgroup. It is plain data, so a test can build one by hand.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import {
  interpreterOf,
  type KernelNeeds,
  planAccess,
  SYSTEM_READ,
  splitDestination,
  which,
} from "../compile.js";

export class ExportError extends Error {
  override readonly name = "ExportError";
}

/** One path of the grant with its Landlock rights, and what they amount to. */
export interface GrantedPath {
  path: string;
  rights: string[];
  read: boolean;
  write: boolean;
  exec: boolean;
  /** A directory on this host (false for a file or a device node). */
  directory: boolean;
  /** A character or block device (/dev/null, /dev/urandom). */
  device: boolean;
}

export interface Grant {
  server: string;
  /**
   * What runs under the profile (empty when the export was made without a command): the server's
   * argv with its launcher resolved as `mcpguard run` resolves it under the kernel layer (see
   * `launcher`), its program as the server's PATH finds it, links unresolved.
   */
  command: string[];
  /** The command as given, when it starts a launcher (npx, uvx, a version manager's shim). */
  launcher?: { command: string[]; via: string };
  cwd: string;
  home: string | null;
  tmp: string | null;
  /** Canonical paths, sorted. */
  paths: GrantedPath[];
  /** Symbolic links on the way to granted files (`/bin` -> `usr/bin`), as they are on this host. */
  links: { path: string; target: string }[];
  /** Network destinations; port 0 is any port. */
  network: { host: string; port: number }[];
  /** Pathname unix sockets the server may connect to, as the policy names them. */
  sockets: string[];
  /** Programs the policy lets the server run (names or paths), `sh` first when a tool runs shell commands. */
  programs: string[];
  env: {
    /** Variables the policy keeps beyond the world's (HOME, PATH, TMPDIR, LANG, ...). */
    kept: string[];
    /** Variables of the environment at export time that the policy withholds. */
    withheld: string[];
  };
  limits: { pids: number; memoryBytes: number; from: string };
  /**
   * What stands directly in / and /usr on this host (symbolic links aside): the units a
   * whitelisting sandbox (firejail) replaces or hides.
   */
  hostEntries: string[];
  /** What planning the grant had to approximate (from the kernel layer's planner). */
  notes: string[];
}

export interface GrantInput {
  server: string;
  needs: KernelNeeds;
  /** What runs: the server's command, its launcher already resolved (launchers.ts, resolveLaunch). */
  argv: readonly string[];
  /** The command as given and how its launcher was resolved, when it names one. */
  launcher?: { command: readonly string[]; via: string };
  /** The server's environment at spawn, before the policy filters it (PATH, HOME, TMPDIR). */
  env: NodeJS.ProcessEnv;
  cwd: string;
  keptEnv: readonly string[];
  withheldEnv: readonly string[];
  limits: Grant["limits"];
}

const WRITE_RIGHTS = ["write_file", "truncate", "make_reg", "make_dir", "remove_file", "remove_dir"];

function kindOf(path: string): { directory: boolean; device: boolean } {
  try {
    const st = statSync(path);
    return { directory: st.isDirectory(), device: st.isCharacterDevice() || st.isBlockDevice() };
  } catch {
    // Missing: granted as a plain path.
    return { directory: false, device: false };
  }
}

/**
 * The symbolic links met on the way from `path` to the file it names, each once, resolved the way
 * the kernel does (a relative target from the link's directory). Stops at a missing component.
 */
export function symlinkChain(path: string): { path: string; target: string }[] {
  const links: { path: string; target: string }[] = [];
  let pending = path.split("/").filter(Boolean);
  let current = "/";
  for (let hops = 0; pending.length > 0 && hops < 64; hops++) {
    const next = join(current, pending.shift() as string);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      // A missing segment ends the chain of links.
      return links;
    }
    if (!isLink) {
      current = next;
      continue;
    }
    const target = readlinkSync(next);
    if (!links.some((l) => l.path === next)) links.push({ path: next, target });
    const resolved = isAbsolute(target) ? target : join(current, target);
    pending = [...resolved.split("/").filter(Boolean), ...pending];
    current = "/";
  }
  return links;
}

/**
 * The name by which the server's PATH reaches the program the kernel layer grants for `name`
 * (`/usr/bin/python3` for `python3`, whose target is `/usr/bin/python3.11`), links unresolved. An
 * earlier match the kernel layer does not grant (a version manager's shim) is skipped, as a shell
 * skips it when the sandbox refuses it.
 */
function lexicalWhich(name: string, path: string | undefined): string | undefined {
  if (isAbsolute(name)) return name;
  const target = which(name, path);
  if (!target) return undefined;
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (realpathSync(candidate) === target) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Names by which the server reaches what it is granted: system paths, programs, their ELF loaders. */
function namesToKeep(programs: readonly string[], argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const names = new Set<string>(SYSTEM_READ);
  for (const program of programs) {
    const found = lexicalWhich(program, env.PATH);
    if (!found) continue;
    names.add(found);
    const loader = interpreterOf(found);
    if (loader) names.add(loader);
  }
  const script = argv.slice(1).find((a) => !a.startsWith("-"));
  if (script && isAbsolute(script)) names.add(script);
  return [...names];
}

function hostEntries(): string[] {
  const out: string[] = [];
  for (const dir of ["/", "/usr"]) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isSymbolicLink()) out.push(join(dir, entry.name));
    }
  }
  return out.sort();
}

export function buildGrant(input: GrantInput): Grant {
  const plan = planAccess(input.needs, input.argv, input.env);
  const paths: GrantedPath[] = [...plan.fs]
    .map(([path, set]) => {
      const rights = [...set].sort();
      return {
        path,
        rights,
        read: set.has("read_file") || set.has("read_dir"),
        write: rights.some((r) => WRITE_RIGHTS.includes(r)),
        exec: set.has("execute"),
        ...kindOf(path),
      };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const run = [
    ...(input.argv[0] ? [input.argv[0]] : []),
    ...(input.needs.shell ? ["sh", "/bin/sh"] : []),
    ...input.needs.exec.map(programOf),
  ];
  const links = new Map<string, string>();
  for (const name of namesToKeep(run, input.argv, input.env)) {
    for (const link of symlinkChain(name)) links.set(link.path, link.target);
  }
  const [program, ...args] = input.argv;
  return {
    server: input.server,
    command: program === undefined ? [] : [lexicalWhich(program, input.env.PATH) ?? program, ...args],
    ...(input.launcher
      ? { launcher: { command: [...input.launcher.command], via: input.launcher.via } }
      : {}),
    cwd: input.cwd,
    home: input.env.HOME || null,
    tmp: input.env.TMPDIR || null,
    paths,
    links: [...links]
      .map(([path, target]) => ({ path, target }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    network: input.needs.network.map(splitDestination),
    sockets: [...(input.needs.sockets ?? [])],
    programs: [...new Set([...(input.needs.shell ? ["sh"] : []), ...input.needs.exec])],
    env: { kept: [...input.keptEnv].sort(), withheld: [...input.withheldEnv].sort() },
    limits: input.limits,
    hostEntries: hostEntries(),
    notes: [...plan.notes],
  };
}

/** A character a profile format would take for a line break or a terminator: C0 controls and DEL. */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** `path` is `root` or below it, by whole segments. */
export function within(path: string, root: string): boolean {
  return root === "/" || path === root || path.startsWith(`${root}/`);
}

/** A destination as srt and the policy write it: `host`, `host:port`, `[v6]:port`. */
export function destinationText(d: { host: string; port: number }): string {
  const host = d.host.includes(":") ? `[${d.host}]` : d.host;
  return d.port > 0 ? `${host}:${d.port}` : host;
}

/** The program of an exec entry (`git log` -> `git`). */
const programOf = (entry: string) => entry.split(" ")[0] as string;
