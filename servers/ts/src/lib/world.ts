/**
 * The trial world as a server sees it: the home dir `H` and the temp dir `T` come from `HOME` and
 * `TMPDIR`, and only when one is unset or empty from the trial layout beside the workspace (the cwd).
 */
import path from "node:path";

function fromEnv(name: string, sibling: string): string {
  const value = process.env[name];
  return value ? value : path.resolve(process.cwd(), "..", sibling);
}

/** `H`: `HOME`, or `<cwd>/../home`. */
export function homeDir(): string {
  return fromEnv("HOME", "home");
}

/** `T`: `TMPDIR`, or `<cwd>/../tmp`. */
export function tempDir(): string {
  return fromEnv("TMPDIR", "tmp");
}
