/**
 * Canonical paths and path patterns. A path argument is judged on its canonical form: made absolute
 * against the server's working directory, normalised, and with every symlink of its existing part
 * resolved against the real filesystem, so `..`, `//`, and links out of an allowed tree all land on
 * the file the server would really open.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";

export interface CanonicalPath {
  /** Absolute and normalised, symlinks not resolved. */
  lexical: string;
  /**
   * The lexical form with every existing component resolved by realpath, the missing tail appended
   * as is: the file a server opens after normalising the path itself (`os.path.abspath`,
   * `path.resolve`).
   */
  canonical: string;
  /**
   * The file the kernel opens for the path as written: a `..` after a symlink climbs from the
   * link's target, not from the directory that holds the link. Equal to `canonical` without `..`.
   */
  physical: string;
}

function realOrSelf(path: string): string {
  let existing = path;
  const missing: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(existing);
      return missing.length ? join(real, ...missing.reverse()) : real;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      missing.push(basename(existing));
      existing = parent;
    }
  }
}

function physicalPath(input: string, cwd: string): string {
  let current = isAbsolute(input) ? "/" : cwd;
  let pending: string[] = [];
  for (const segment of input.split("/")) {
    if (segment !== "..") {
      pending.push(segment);
      continue;
    }
    current = dirname(realOrSelf(join(current, ...pending)));
    pending = [];
  }
  return realOrSelf(join(current, ...pending));
}

export function canonicalPath(input: string, cwd: string): CanonicalPath {
  const lexical = resolve(cwd, input);
  const canonical = realOrSelf(lexical);
  const climbs = input.split("/").includes("..");
  return { lexical, canonical, physical: climbs ? physicalPath(input, cwd) : canonical };
}

/** Resolves a path argument the way {@link canonicalPath} does. */
export type PathResolver = (input: string, cwd: string) => CanonicalPath;

/**
 * A resolver that asks the filesystem once per path: L1 and L2 share one for the span of a single
 * call, so both judge the very same answer and the call costs one lookup. Never kept longer.
 */
export function callPathResolver(): PathResolver {
  const seen = new Map<string, CanonicalPath>();
  return (input, cwd) => {
    const key = `${cwd}\0${input}`;
    let found = seen.get(key);
    if (found === undefined) {
      found = canonicalPath(input, cwd);
      seen.set(key, found);
    }
    return found;
  };
}

/** `path` is `root` or below it, compared by whole segments (`/work_evil` is not below `/work`). */
export function isWithin(path: string, root: string): boolean {
  if (root === sep) return isAbsolute(path);
  const r = root.endsWith(sep) ? root.slice(0, -1) : root;
  return path === r || path.startsWith(r + sep);
}

function escapeRegex(text: string): string {
  return text.replace(/[.+^${}()|[\]\\]/g, "\\$&");
}

/**
 * A glob over absolute paths: `**` as a whole segment is any number of segments (zero included),
 * `*` any characters within one segment, `?` one character. `/a/**` matches `/a` itself and
 * everything below it.
 */
export function globToRegExp(pattern: string): RegExp {
  const segments = pattern.split("/");
  let out = "";
  segments.forEach((segment, i) => {
    if (segment === "**") {
      out += "(?:/.*)?";
      return;
    }
    if (i > 0) out += "/";
    out += segment
      .split("")
      .map((ch) => (ch === "*" ? "[^/]*" : ch === "?" ? "[^/]" : escapeRegex(ch)))
      .join("");
  });
  return new RegExp(`^${out}$`);
}

/** Compiled path patterns, with the canonical form of each pattern's fixed prefix. */
export class PathSet {
  readonly #patterns: { pattern: string; regex: RegExp }[];
  /** The canonical fixed part of every pattern (the directory before its first wildcard). */
  readonly roots: readonly string[];

  constructor(readonly patterns: readonly string[]) {
    const roots: string[] = [];
    this.#patterns = patterns.map((pattern) => {
      // The fixed directory part of the pattern may itself be a symlink (e.g. /tmp on some hosts):
      // canonicalise it so it compares with canonical arguments.
      const wild = pattern.search(/[*?]/);
      const fixed = wild === -1 ? pattern : pattern.slice(0, pattern.lastIndexOf("/", wild) + 1);
      const canonicalFixed = fixed === "/" ? "/" : canonicalPath(fixed, "/").canonical;
      const rest = pattern.slice(fixed.length);
      const joined = rest ? `${canonicalFixed.replace(/\/$/, "")}/${rest}` : canonicalFixed;
      roots.push(canonicalFixed === "/" ? "/" : canonicalFixed.replace(/\/$/, ""));
      return { pattern, regex: globToRegExp(joined) };
    });
    this.roots = roots;
  }

  /** The first pattern that matches, or undefined. */
  match(path: string): string | undefined {
    return this.#patterns.find((p) => p.regex.test(path))?.pattern;
  }

  get size(): number {
    return this.#patterns.length;
  }
}
