/**
 * The harness of the shell reader's differential test (shellDifferential.test.ts): a scratch
 * folder, a PATH of recording stand-ins, a line run by a shell under `env -i` (and strace, where it
 * is installed), and what the run did that a reading does not account for.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import type { Field, FullReading } from "../../src/shell/index.ts";
import { FILES, PASSERS, RECORDERS } from "./shellGenerator.ts";

export const STRACE = ["/usr/bin/strace", "/bin/strace"].find((p) => existsSync(p));
/**
 * A generated line may write anywhere (`> /a:b`, `>> ../x`): it runs in a view where only the
 * scratch folder can be written, the rest of the host read-only (a write elsewhere fails with
 * EROFS, and strace still sees it asked), and with no network. Without bubblewrap (which setup
 * installs) the lines are not run at all: run as they are, they wrote junk files into / as root.
 */
const BWRAP = ["/usr/bin/bwrap", "/bin/bwrap"].find((p) => existsSync(p));
export const SHELLS_PRESENT = existsSync("/bin/dash") && existsSync("/bin/bash") && BWRAP !== undefined;

let scratch: string;
let bin: string;
export let home: string;

/** Makes the scratch folder and its stand-ins. */
export function setUp(): void {
  scratch = mkdtempSync(join(tmpdir(), "mcpguard-shdiff-"));
  bin = join(scratch, "bin");
  home = join(scratch, "home");
  mkdirSync(bin);
  mkdirSync(home);
  const record = `printf '%s\\0' "$#" "\${0##*/}" "$@" >> "$MCPGUARD_LOG"`;
  for (const name of RECORDERS) stub(name, `${record}\n`);
  for (const [name, real] of Object.entries(PASSERS)) stub(name, `${record}\nexec ${real} "$@"\n`);
}

export function tearDown(): void {
  rmSync(scratch, { recursive: true, force: true });
}

function stub(name: string, body: string): void {
  const file = join(bin, name);
  writeFileSync(file, `#!/bin/dash\n${body}`);
  chmodSync(file, 0o755);
}

export interface Run {
  /** Each program's words, the program by its base name. */
  programs: string[][];
  writes: string[];
  reads: string[];
}

/** A fresh folder with the files globs and redirections find. */
function workFolder(at: string): string {
  const work = join(at, "work");
  mkdirSync(join(work, "d"), { recursive: true });
  for (const file of FILES) writeFileSync(join(work, file), "x\n");
  return work;
}

/** bubblewrap's argv for a view of the host that can write only `scratch`. */
function confined(scratch: string): string[] {
  const view = [
    "--ro-bind",
    "/",
    "/",
    "--tmpfs",
    "/tmp",
    "--bind",
    scratch,
    scratch,
    "--dev",
    "/dev",
    "--proc",
    "/proc",
  ];
  return [BWRAP as string, "--die-with-parent", "--unshare-net", ...view];
}

/** Runs `argv` (a shell and its -c line) in a fresh folder: what ran and what the shells opened. */
export function runLine(id: string, shell: string[], line: string): Promise<Run & { work: string }> {
  const at = join(scratch, id);
  mkdirSync(at);
  const work = workFolder(at);
  const log = join(at, "log");
  const trace = join(at, "trace");
  writeFileSync(log, "");
  const env = ["env", "-i", `PATH=${bin}`, `HOME=${home}`, `MCPGUARD_LOG=${log}`, ...shell, "-c", line];
  const argv = STRACE
    ? [STRACE, "-f", "-qq", "-xx", "-e", "trace=open,openat,creat", "-o", trace, ...env]
    : ["/usr/bin/env", ...env.slice(1)];
  argv.unshift(...confined(scratch));
  return new Promise((done) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: work,
      stdio: ["ignore", "ignore", "ignore"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("close", () => {
      clearTimeout(timer);
      const opened =
        STRACE && existsSync(trace) ? opens(readFileSync(trace, "latin1"), work) : { writes: [], reads: [] };
      done({ programs: records(readFileSync(log)), ...opened, work });
    });
  });
}

/** The stand-ins' log: for each run, its count of words, its name, its words. */
function records(log: Buffer): string[][] {
  const parts = log.toString("utf8").split("\0");
  const out: string[][] = [];
  for (let i = 0; i + 1 < parts.length; ) {
    const count = Number(parts[i]);
    out.push(parts.slice(i + 1, i + 2 + count));
    i += 2 + count;
  }
  return out;
}

/** Files under the work folder that a process opened to write, or to read (not a folder). */
function opens(trace: string, work: string): { writes: string[]; reads: string[] } {
  const writes: string[] = [];
  const reads: string[] = [];
  for (const line of trace.split("\n")) {
    const m = /(?:openat\(AT_FDCWD, |open\(|creat\()"((?:\\x[0-9a-f]{2})*)"(?:, ([A-Z_|]+))?/.exec(line);
    if (!m) continue;
    const path = Buffer.from((m[1] as string).replace(/\\x/g, ""), "hex").toString("utf8");
    const flags = m[2] ?? "O_WRONLY|O_CREAT";
    if (path === "" || flags.includes("O_DIRECTORY")) continue;
    const abs = resolve(work, path);
    if (abs !== work && !abs.startsWith(`${work}/`)) continue;
    if (/O_WRONLY|O_RDWR|O_CREAT/.test(flags)) writes.push(abs);
    if (!/O_WRONLY/.test(flags)) reads.push(abs);
  }
  return { writes, reads };
}

/** A glob as a regular expression on one word. */
function globRegex(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        out += `[${pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < pattern.length)
      out += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`, "s");
}

/** Whether the words can be what the fields expand to. */
function matches(fields: readonly Field[], words: readonly string[], fi = 0, wi = 0): boolean {
  if (fi === fields.length) return wi === words.length;
  const f = fields[fi] as Field;
  if (f.unknown) {
    for (let k = 0; wi + k <= words.length; k++) if (matches(fields, words, fi + 1, wi + k)) return true;
    return false;
  }
  if (wi < words.length && words[wi] === f.text && matches(fields, words, fi + 1, wi + 1)) return true;
  if (!f.pattern) return false;
  const re = globRegex(f.text);
  for (let k = 1; wi + k <= words.length && re.test(words[wi + k - 1] as string); k++)
    if (matches(fields, words, fi + 1, wi + k)) return true;
  return false;
}

function fieldNames(field: Field, cwd: string | undefined, path: string): boolean {
  if (field.unknown || cwd === undefined) return true;
  const target = resolve(cwd, field.text);
  if (target === path) return true;
  return !!field.pattern && globRegex(resolve(cwd, field.text)).test(path);
}

/** What the run did that the reading does not account for. */
export function disagreements(reading: FullReading, run: Run, shell: string): string[] {
  const out: string[] = [];
  const dynamic = reading.dynamics.length > 0;
  const predicted = reading.invocations.filter((i) => i.kind === "program").flatMap((i) => i.argvs);
  if (!dynamic) {
    for (const words of run.programs) {
      const [name, ...rest] = words;
      const said = predicted.some((argv) => {
        const head = argv[0] as Field;
        if (head.unknown) return true;
        return basename(head.text) === name && matches(argv.slice(1), rest);
      });
      if (!said) out.push(`${shell} ran ${JSON.stringify(words)}, which the reading does not say`);
    }
  }
  if (dynamic) return out;
  const targets = (ops: string[]) =>
    reading.redirects
      .filter((r) => ops.includes(r.redirect.op))
      .flatMap((r) => r.redirect.targets.map((t) => ({ t, cwd: r.cwd })));
  const writes = targets([">", ">>", ">|", "&>", "&>>", "<>"]);
  const reads = targets(["<", "<>"]);
  for (const path of new Set(run.writes))
    if (!writes.some(({ t, cwd }) => fieldNames(t, cwd, path)))
      out.push(`${shell} opened ${path} to write, which the reading does not say`);
  for (const path of new Set(run.reads))
    if (
      !reads.some(({ t, cwd }) => fieldNames(t, cwd, path)) &&
      !writes.some(({ t, cwd }) => fieldNames(t, cwd, path))
    )
      out.push(`${shell} opened ${path} to read, which the reading does not say`);
  return out;
}
