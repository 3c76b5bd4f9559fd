/**
 * `ln -s TARGET LINK`: the target is not opened when the link is made, but whatever later opens
 * the link opens the target, read against the LINK's directory (unless `-r`, which makes the
 * target relative to the working directory first). So L1 judges each target where the link will
 * point, not against the working directory: `ln -s ../data/x.json src/x.json` points at
 * `data/x.json`, and `ln -s /etc/passwd x` points outside the workspace, whatever a later
 * command in the same line does with `x`.
 *
 * GNU ln's forms: `ln TARGET LINK`, `ln TARGET` (the link in the working directory), `ln
 * TARGET... DIR`, `ln -t DIR TARGET...`; `-T` makes the last operand a link name even when it is
 * a directory.
 */
import { existsSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { Field } from "@mcpguard/readers";

/** Options of GNU ln that take a value as the next word. */
const WITH_VALUE = new Set(["-S", "--suffix", "-t", "--target-directory"]);

export interface SymlinkTargets {
  /** Indexes (in argv) of the target operands, judged by {@link SymlinkTargets.targets} instead. */
  skip: Set<number>;
  /** Each target with the directory it is read against; `dir` undefined when not known statically. */
  targets: { field: Field; dir: string | undefined }[];
}

interface LnWords {
  symbolic: boolean;
  relative: boolean;
  noTargetDir: boolean;
  targetDir: Field | undefined;
  operands: { field: Field; index: number }[];
}

function readLn(argv: readonly Field[]): LnWords {
  const w: LnWords = {
    symbolic: false,
    relative: false,
    noTargetDir: false,
    targetDir: undefined,
    operands: [],
  };
  let options = true;
  for (let i = 1; i < argv.length; i++) {
    const field = argv[i] as Field;
    const word = field.text;
    if (options && word === "--") {
      options = false;
    } else if (options && word.startsWith("--") && !field.unknown) {
      const [name = "", value] = word.split("=", 2);
      if (name === "--symbolic") w.symbolic = true;
      else if (name === "--relative") w.relative = true;
      else if (name === "--no-target-directory") w.noTargetDir = true;
      else if (name === "--target-directory") {
        w.targetDir = value !== undefined ? { ...field, text: value } : argv[++i];
      } else if (WITH_VALUE.has(name) && value === undefined) i++;
    } else if (options && word.startsWith("-") && word.length > 1 && !field.unknown) {
      for (let k = 1; k < word.length; k++) {
        const flag = word[k];
        if (flag === "s") w.symbolic = true;
        else if (flag === "r") w.relative = true;
        else if (flag === "T") w.noTargetDir = true;
        else if (flag === "t" || flag === "S") {
          const rest = word.slice(k + 1);
          const value = rest ? { ...field, text: rest } : argv[++i];
          if (flag === "t") w.targetDir = value;
          break;
        }
      }
    } else {
      w.operands.push({ field, index: i });
    }
  }
  return w;
}

function isDirectory(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    // Unreadable is not a directory for this purpose.
    return false;
  }
}

/** The directory each link will sit in, and which operands are targets; undefined when not `ln -s`. */
export function symlinkTargets(argv: readonly Field[], cwd: string | undefined): SymlinkTargets | undefined {
  const w = readLn(argv);
  if (!w.symbolic || w.operands.length === 0) return undefined;
  const known = (f: Field | undefined) => (f && !f.unknown && !f.pattern ? f.text : undefined);
  const resolve = (path: string | undefined) =>
    path === undefined || cwd === undefined ? undefined : posix.resolve(cwd, path);
  let linkDir: string | undefined;
  let targets = w.operands;
  if (w.targetDir) {
    linkDir = resolve(known(w.targetDir));
  } else if (w.operands.length === 1) {
    linkDir = cwd;
  } else {
    const last = w.operands.at(-1) as { field: Field; index: number };
    targets = w.operands.slice(0, -1);
    const lastPath = resolve(known(last.field));
    const intoDir =
      !w.noTargetDir && (w.operands.length > 2 || (lastPath !== undefined && isDirectory(lastPath)));
    linkDir = lastPath === undefined ? undefined : intoDir ? lastPath : posix.dirname(lastPath);
  }
  // With -r, ln makes the target relative for the link itself: it is read against the working directory.
  const dir = w.relative ? cwd : linkDir;
  return {
    skip: new Set(targets.map((t) => t.index)),
    targets: targets.map((t) => ({ field: t.field, dir })),
  };
}
