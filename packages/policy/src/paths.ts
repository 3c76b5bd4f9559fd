/**
 * Canonical paths and path patterns. A path argument is judged on its canonical form: made absolute
 * against the server's working directory, normalised, and with every symlink resolved against the
 * real filesystem, dangling ones included (their target decides), so `..`, `//`, and links out of
 * an allowed tree all land on the file the server would really open or create.
 */
import { lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { globMatcher } from "@mcpguard/readers";

export interface CanonicalPath {
  /** Absolute and normalised, symlinks not resolved. */
  lexical: string;
  /**
   * The lexical form with every symlink resolved (a dangling one to its target, relative targets
   * against the link's directory), the missing tail appended as is: the file a server opens or
   * creates after normalising the path itself (`os.path.abspath`, `path.resolve`).
   */
  canonical: string;
  /**
   * The file the kernel opens for the path as written: a `..` after a symlink climbs from the
   * link's target, not from the directory that holds the link. Equal to `canonical` without `..`.
   */
  physical: string;
  /**
   * Set when resolving the path ran into a symlink loop (more than {@link MAX_SYMLINKS} links): the
   * kernel refuses to open it (ELOOP), and a layer refuses the argument. The forms are then lexical.
   */
  loop?: true;
}

/** Links followed in one resolution before it is a loop: the kernel's own limit (MAXSYMLINKS). */
const MAX_SYMLINKS = 40;

/** What {@link walk} made of a path: the file it names, or the loop it ran into. */
interface Walked {
  path: string;
  loop: boolean;
}

/**
 * Resolve `path` (absolute, `..` kept as written) the way the kernel walks it, one component at a
 * time: a symlink is replaced by its target (a relative target read against the link's directory),
 * whether or not that target exists, so a dangling link names the file that opening it with
 * O_CREAT would create; `..` climbs from the directory reached so far; once a component is missing
 * the rest is appended as written. More than {@link MAX_SYMLINKS} links is a loop, as for the
 * kernel (ELOOP).
 */
function walk(path: string): Walked {
  // The components still to walk, the next one last: taking one, and putting a link's target in
  // its place, are both at the end of the array. The directory reached is kept as its components;
  // its text is made only for lstat, which stops being asked once a component is missing (or the
  // text is longer than the kernel reads, ENAMETOOLONG), so a long path costs its length once.
  const pending = path
    .split("/")
    .filter((segment) => segment !== "" && segment !== ".")
    .reverse();
  const reached: string[] = [];
  let missing = false;
  let links = 0;
  while (pending.length > 0) {
    const segment = pending.pop() as string;
    if (segment === "..") {
      reached.pop();
      continue;
    }
    if (missing) {
      reached.push(segment);
      continue;
    }
    const next = `/${reached.join("/")}${reached.length > 0 ? "/" : ""}${segment}`;
    let stats: Stats;
    try {
      stats = lstatSync(next);
    } catch {
      // Missing from here on: the rest of the path is taken as written.
      missing = true;
      reached.push(segment);
      continue;
    }
    if (!stats.isSymbolicLink()) {
      reached.push(segment);
      continue;
    }
    if (++links > MAX_SYMLINKS) return { path: resolve(path), loop: true };
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      // Unreadable link: treated as missing, the rest of the path taken as written.
      missing = true;
      reached.push(segment);
      continue;
    }
    const parts = target.split("/").filter((s) => s !== "" && s !== ".");
    for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i] as string);
    if (isAbsolute(target)) reached.length = 0;
  }
  return { path: `/${reached.join("/")}`, loop: false };
}

/**
 * The file `path` (absolute) names: realpath when every component exists, else the walk of
 * {@link walk}, which also follows dangling links. realpath(3) climbs a `..` from a link's target,
 * as the kernel does, so both agree on paths that keep their `..`.
 */
function resolveReal(path: string): Walked {
  try {
    return { path: realpathSync.native(path), loop: false };
  } catch {
    // Missing or a loop: walked segment by segment instead, which says which.
    return walk(path);
  }
}

/**
 * `input` against `cwd` (absolute; a base argument's value as given, `..` and all), as the server may
 * normalise it (`lexical`, then `canonical`) and as the kernel walks it (`physical`).
 */
export function canonicalPath(input: string, cwd: string): CanonicalPath {
  const lexical = resolve(cwd, input);
  const canonical = resolveReal(lexical);
  // A `..` in the path as walked, the input's or, for a relative input, its base's.
  const climbs = input.split("/").includes("..") || (!isAbsolute(input) && cwd.split("/").includes(".."));
  // As the kernel walks it: `..` left in place, so it climbs from a link's target.
  const physical = climbs ? resolveReal(isAbsolute(input) ? input : `${cwd}/${input}`) : canonical;
  const result: CanonicalPath = { lexical, canonical: canonical.path, physical: physical.path };
  if (canonical.loop || physical.loop) result.loop = true;
  return result;
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

/** Compiled path patterns, with the canonical form of each pattern's fixed prefix. */
export class PathSet {
  readonly #patterns: { pattern: string; matches: (path: string) => boolean }[];
  /** The canonical fixed part of every pattern (the directory before its first wildcard). */
  readonly roots: readonly string[];

  constructor(readonly patterns: readonly string[]) {
    const roots: string[] = [];
    this.#patterns = patterns.flatMap((pattern) => {
      // The fixed directory part of the pattern may itself be a symlink (e.g. /tmp on some hosts):
      // canonicalise it so it compares with canonical arguments.
      const wild = pattern.search(/[*?]/);
      const fixed = wild === -1 ? pattern : pattern.slice(0, pattern.lastIndexOf("/", wild) + 1);
      const canonicalFixed = fixed === "/" ? "/" : canonicalPath(fixed, "/").canonical;
      const rest = pattern.slice(fixed.length);
      const joined = rest ? `${canonicalFixed.replace(/\/$/, "")}/${rest}` : canonicalFixed;
      const matches = globMatcher(joined, "path");
      // A pattern that cannot be read grants nothing: it matches no path and gives the kernel
      // layer no root (fail closed; a PathSet only ever allows).
      if (matches === undefined) return [];
      roots.push(canonicalFixed === "/" ? "/" : canonicalFixed.replace(/\/$/, ""));
      return [{ pattern, matches }];
    });
    this.roots = roots;
  }

  /** The first pattern that matches, or undefined. */
  match(path: string): string | undefined {
    return this.#patterns.find((p) => p.matches(path))?.pattern;
  }

  get size(): number {
    return this.#patterns.length;
  }
}
