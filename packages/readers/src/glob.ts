/**
 * Globs, matched by one function on picomatch (`globMatcher`), in the two flavours the project
 * reads: a policy's path patterns and one file name of a shell's pathname expansion. `globFiles`
 * lists the files a shell pattern argument matches now, so that it is judged by the files the shell
 * would hand the program (a symlink among them included), not only by its directory.
 *
 * A shell's string patterns (`case`, `${v#pat}`, `${v/pat/x}`) are not file globs (`*` crosses
 * `/`, a leading `.` is not special): the shell reader matches them itself (shell/text.ts).
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import picomatch from "picomatch";

/**
 * - `path`: an absolute path pattern of a policy: `**` as a whole segment is any number of segments
 *   (zero included, so `/a/**` matches `/a` itself), `*` any characters within one segment, `?` one
 *   character; every other character is itself (`[`, `{`, `(` included: a policy names paths, and
 *   its fixed prefix, which the kernel layer grants, ends at the first `*` or `?`).
 * - `name`: one file name as a shell's pathname expansion matches it: `*`, `?`, bracket
 *   expressions (`[a-z]`, `[!x]`, `[[:alpha:]]`), backslash escapes. A leading `.` is the caller's
 *   to treat (the shell hides dot files from a pattern that does not start with `.`).
 */
export type GlobFlavour = "path" | "name";

const OPTIONS: picomatch.PicomatchOptions = {
  // Throw on a pattern whose regex does not build: without it picomatch returns /$^/, which
  // matches the empty string.
  debug: true,
  dot: true,
  nobrace: true,
  noextglob: true,
  nonegate: true,
  posix: true,
  strictSlashes: true,
};

/** Characters picomatch reads as syntax (regex groups, braces, extglobs) that a shell pattern and a policy take as themselves. */
const LITERAL_TO_SHELL = new Set(["(", ")", "{", "}", "+", "@", "|", "$", ".", ","]);

/** A matcher for `pattern`, or undefined when it cannot be read (callers decide which way that fails). */
export function globMatcher(pattern: string, flavour: GlobFlavour): ((text: string) => boolean) | undefined {
  const source = flavour === "path" ? pathSource(pattern) : nameSource(pattern);
  if (source === undefined) return undefined;
  let test: (text: string) => boolean;
  try {
    const re = picomatch.makeRe(source, OPTIONS);
    test = (text) => re.test(text);
  } catch {
    // picomatch throws on a pattern it cannot compile: the caller gets "cannot be read".
    return undefined;
  }
  if (flavour === "path" && pattern.endsWith("/**")) {
    // `/a/**` is `/a` and everything below it.
    const self = pattern.slice(0, -3) || "/";
    return (text) => text === self || test(text);
  }
  return test;
}

/** A policy pattern for picomatch: only `*` and `?` are syntax, `**` only as a whole segment. */
function pathSource(pattern: string): string {
  return pattern
    .split("/")
    .map((segment) =>
      segment === "**"
        ? "**"
        : [...segment]
            .map((ch) => (ch === "*" || ch === "?" ? ch : /[A-Za-z0-9_-]/.test(ch) ? ch : `\\${ch}`))
            .join("")
            // picomatch reads `**` inside a segment as `*`, as the policy means it.
            .replace(/\*\*+/g, "*"),
    )
    .join("/");
}

/**
 * A shell file name pattern for picomatch: a backslash escapes the next character (`\b` is `b`,
 * not a regex word boundary), characters picomatch would read as extglob or brace syntax are
 * escaped, bracket expressions pass as they are. Undefined for a name holding `/` (not one name).
 */
function nameSource(pattern: string): string | undefined {
  if (pattern.includes("/")) return undefined;
  let out = "";
  let inBracket = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) out += "\\\\";
      else out += /[A-Za-z0-9]/.test(next) ? next : `\\${next}`;
      i++;
    } else if (inBracket) {
      out += ch;
      if (ch === "]") inBracket = false;
      else if (ch === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2);
        if (end !== -1) {
          out += pattern.slice(i + 1, end + 2);
          i = end + 1;
        }
      }
    } else if (ch === "[" && bracketCloses(pattern, i)) {
      inBracket = true;
      out += ch;
      // `[!` and `[^` negate; a `]` right after the opening (or the negation) is a member.
      if (pattern[i + 1] === "!" || pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "]") out += `\\${pattern[++i]}`;
    } else if (ch === "[" || ch === "]" || LITERAL_TO_SHELL.has(ch) || ch === "!" || ch === "^") {
      out += `\\${ch}`;
    } else out += ch;
  }
  return out;
}

/** Whether the `[` at `open` starts a bracket expression (a later `]` closes it), as a shell reads it. */
function bracketCloses(pattern: string, open: number): boolean {
  let i = open + 1;
  if (pattern[i] === "!" || pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "]") return true;
    if (ch === "/") return false;
    if (ch === "[" && pattern[i + 1] === ":") {
      const end = pattern.indexOf(":]", i + 2);
      if (end !== -1) i = end + 1;
    }
  }
  return false;
}

/** Most names read while matching one pattern; past it only the pattern's directory is judged. */
const MAX_ENTRIES = 512;

/**
 * The paths `pattern` matches under `cwd` (absolute), or undefined when there are too many or a
 * segment cannot be read as a pattern (the caller then judges the pattern's text alone).
 */
export function globFiles(pattern: string, cwd: string): string[] | undefined {
  const absolute = isAbsolute(pattern);
  const segments = pattern.split("/").filter((s, i) => s !== "" || i === 0);
  let paths = [absolute ? "/" : cwd];
  let seen = 0;
  for (const segment of absolute ? segments.slice(1) : segments) {
    if (!/[*?[]/.test(segment)) {
      paths = paths.map((p) => join(p, segment));
      continue;
    }
    const matches = globMatcher(segment, "name");
    if (matches === undefined) return undefined;
    const next: string[] = [];
    for (const dir of paths) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        // A directory that cannot be listed expands to nothing, as in the shell.
        continue;
      }
      seen += names.length;
      if (seen > MAX_ENTRIES) return undefined;
      for (const name of names) {
        if (name.startsWith(".") && !segment.startsWith(".")) continue;
        if (matches(name)) next.push(join(dir, name));
      }
    }
    paths = next;
  }
  return paths;
}
