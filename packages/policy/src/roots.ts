/**
 * The folders and files a server is given on its command line: what `mcpguard policy derive`
 * grants its path tools, instead of whatever folder the proxy happens to start in. A desktop
 * client starts servers in `/` or in its own folder; the server's roots are in its arguments
 * (`server-filesystem /home/me/project`), in options (`--root DIR`, `--allowed=DIR`) and in
 * `key=path` words.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { isRecord } from "@mcpguard/protocol";

export interface ServerRoots {
  /** Existing directories the server is pointed at, absolute, in the order given. */
  roots: string[];
  /** Files it is pointed at (a database, a store): existing, or new in an existing folder. */
  files: string[];
  /**
   * Those of them written as relative paths: the server resolves them against its working
   * directory, so a draft grants them as `{{cwd}}/...` and holds wherever the client starts it.
   */
  relative: string[];
}

/** Option names whose value is a folder or file the server works in. */
const PATH_OPTION =
  /^(root|roots|dir|dirs|directory|directories|folder|folders|path|paths|repo|repository|allowed|allow|allowed[-_]?(dir|dirs|directory|directories|path|paths|roots?)|workspace|project|base[-_]?dir|data[-_]?dir|home|db|db[-_]?path|database|file|store|storage|[a-z]+[-_](dir|path|file|root))$/i;

function kind(path: string): "dir" | "file" | undefined {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    // Missing or unreadable: not a root to offer.
    return undefined;
  }
}

/** `value` as a path the server is given: an existing folder or file, or a new file in a folder. */
function classify(value: string, cwd: string, named: boolean, out: ServerRoots): boolean {
  if (value === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  const path = resolve(cwd, value);
  const found = kind(path);
  if (found === "dir") out.roots.push(path);
  else if (found === "file") out.files.push(path);
  // A file that does not exist yet counts when an option names it as one and its folder exists.
  else if (
    named &&
    kind(dirname(path)) === "dir" &&
    (value.includes("/") || /\.[A-Za-z0-9]{1,8}$/.test(value))
  )
    out.files.push(path);
  else return false;
  if (!isAbsolute(value)) out.relative.push(path);
  return true;
}

/** Every part of a comma-separated list, or the value itself. */
function parts(value: string): string[] {
  return value.includes(",") ? value.split(",").filter(Boolean) : [value];
}

/**
 * The roots and files in a server's own arguments (after its interpreter and script): positional
 * words that name existing folders or files, the values of path-like options (`--root DIR`,
 * `--allowed-dir=DIR`, `-d DIR`), and `key=path` words.
 */
export function serverRoots(args: readonly string[], cwd: string): ServerRoots {
  const out: ServerRoots = { roots: [], files: [], relative: [] };
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    const option = /^--?([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(word);
    if (option) {
      const [, name = "", inline] = option;
      if (inline !== undefined) {
        if (PATH_OPTION.test(name)) for (const p of parts(inline)) classify(p, cwd, true, out);
        continue;
      }
      const next = args[i + 1];
      // `--root DIR`: the next word is the option's value when it is a path.
      if (next !== undefined && !next.startsWith("-") && (PATH_OPTION.test(name) || name.length === 1)) {
        if (
          parts(next)
            .map((p) => classify(p, cwd, PATH_OPTION.test(name), out))
            .some(Boolean)
        )
          i++;
      }
      continue;
    }
    const pair = /^([A-Za-z_][\w.-]*)=(.+)$/s.exec(word);
    if (pair) {
      for (const p of parts(pair[2] as string)) classify(p, cwd, PATH_OPTION.test(pair[1] as string), out);
      continue;
    }
    classify(word, cwd, false, out);
  }
  const unique = (list: string[]) => [...new Set(list)];
  return { roots: unique(out.roots), files: unique(out.files), relative: unique(out.relative) };
}

/** Where a server kept in its package keeps its data, when its tools cannot say. */
export interface ServerData {
  files: string[];
  /** The variables that choose the location: the server must keep them at spawn. */
  keepEnv: string[];
  notes: string[];
}

/** The npm package a script belongs to (the nearest package.json with a name): its name and folder. */
export function packageOf(script: string): { name: string; dir: string } | undefined {
  for (let dir = dirname(script); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        // Checked by hand: the package entry keeps zod out (its schemas are at @mcpguard/policy/schema).
        const json: unknown = JSON.parse(readFileSync(manifest, "utf8"));
        if (isRecord(json) && typeof json.name === "string") return { name: json.name, dir };
      } catch {
        // Not JSON: keep looking up.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Servers whose purpose is clear from their tools but whose store is not: where it is, from the
 * same variables and defaults the server uses.
 */
const KNOWN: Record<string, (script: string, env: NodeJS.ProcessEnv) => ServerData> = {
  // Its knowledge graph, in MEMORY_FILE_PATH (relative to its own code) or beside its code.
  "@modelcontextprotocol/server-memory": (script, env) => {
    const set = env.MEMORY_FILE_PATH;
    const file = set ? resolve(dirname(script), set) : join(dirname(script), "memory.jsonl");
    return {
      files: [file],
      keepEnv: ["MEMORY_FILE_PATH"],
      notes: set
        ? []
        : [`its memory is kept beside its code (${file}); set MEMORY_FILE_PATH to keep it elsewhere`],
    };
  },
};

/** The data of a server known by its package (the script's), or nothing. */
export function knownServerData(script: string | undefined, env: NodeJS.ProcessEnv): ServerData {
  const pkg = script && isAbsolute(script) ? packageOf(script) : undefined;
  const known = pkg && Object.hasOwn(KNOWN, pkg.name) ? KNOWN[pkg.name] : undefined;
  return known ? known(script as string, env) : { files: [], keepEnv: [], notes: [] };
}

/**
 * A folder or file of the server's as a draft writes it: `{{cwd}}` for the working directory and
 * what lies below it where the command line named it relatively (or derive fell back to it), so a
 * draft derived in one folder holds in the folder the client starts the server in.
 */
export function asDrafted(path: string, cwd: string, relative: ReadonlySet<string>): string {
  if (!relative.has(path)) return path;
  if (path === cwd) return "{{cwd}}";
  return path.startsWith(`${cwd.replace(/\/$/, "")}/`)
    ? `{{cwd}}${path.slice(cwd.replace(/\/$/, "").length)}`
    : path;
}
