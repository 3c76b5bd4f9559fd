/**
 * The files a glob pattern matches now, so that a pattern argument is judged by the files the
 * shell would hand the program (a symlink among them included), not only by its directory.
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { globSource } from "./shell/text.js";

/** Most names read while matching one pattern; past it only the pattern's directory is judged. */
const MAX_ENTRIES = 512;

/** The paths `pattern` matches under `cwd` (absolute), or undefined when there are too many. */
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
    const re = new RegExp(`^(?:${globSource(segment)})$`);
    const next: string[] = [];
    for (const dir of paths) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      seen += names.length;
      if (seen > MAX_ENTRIES) return undefined;
      for (const name of names) {
        if (name.startsWith(".") && !segment.startsWith(".")) continue;
        if (re.test(name)) next.push(join(dir, name));
      }
    }
    paths = next;
  }
  return paths;
}
