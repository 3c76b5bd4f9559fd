/**
 * The audit log's HMAC key: where it lives, how it is created, and the checks that keep it out of
 * the server's reach. The key itself is never on a command line or in an environment; only its path
 * may be (`--audit-key FILE`, `$MCPGUARD_AUDIT_KEY`), and the proxy removes that variable from the
 * server's environment.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "./args.js";
import { AuditLog } from "./audit.js";
import { keyId } from "./auditChain.js";
import { openHeadsDir } from "./auditHeads.js";
import { canonical, within } from "./guardFiles.js";
import { accountHome, stateHome } from "./stateHome.js";

/** node:crypto on first use: loading it costs a start that needs none (C0 without an audit log) about 5 ms. */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

const AUDIT_KEY_ENV = "MCPGUARD_AUDIT_KEY";

/** A key that cannot be used as it is, or an audit log that cannot be opened: one line, exit status 2. */
export class AuditSetupError extends UsageError {}

export interface AuditKey {
  key: Buffer;
  kid: string;
  path: string;
}

/**
 * Where the key lives unless `--audit-key` or `$MCPGUARD_AUDIT_KEY` says otherwise: for root
 * /var/lib/mcpguard/audit.key; for others `$XDG_STATE_HOME/mcpguard/audit.key`, else
 * `<home>/.local/state/mcpguard/audit.key` with the home from the password database, never from
 * `$HOME` (the benchmark points HOME at each trial's world).
 */
export function defaultAuditKeyPath(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.()): string {
  const home = stateHome(env, uid);
  if (!home)
    throw new AuditSetupError("cannot find your home directory for the audit key: give --audit-key FILE");
  return join(home, "audit.key");
}

/** The key's path: `--audit-key`, else `$MCPGUARD_AUDIT_KEY`, else the default. */
export function auditKeyPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(option || env[AUDIT_KEY_ENV] || defaultAuditKeyPath(env));
}

/** The environment without the key's path, for the server. */
export function withoutAuditKeyPath(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { [AUDIT_KEY_ENV]: _path, ...rest } = env;
  return rest;
}

/** Refuse a key file or directory that is not ours alone. */
function checkPrivate(path: string, st: Stats, what: "directory" | "file"): void {
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new AuditSetupError(`audit key ${what} ${path} is owned by uid ${st.uid}, not by you (uid ${uid})`);
  }
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
    const fix = what === "directory" ? "700" : "600";
    throw new AuditSetupError(`audit key ${what} ${path} is open to others (mode ${mode}): chmod ${fix} it`);
  }
}

function checkDirectory(dir: string): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    // Rethrown as the one-line setup error.
    throw new AuditSetupError(`no audit key directory ${dir}`);
  }
  if (st.isSymbolicLink()) throw new AuditSetupError(`audit key directory ${dir} is a symbolic link`);
  if (!st.isDirectory()) throw new AuditSetupError(`audit key directory ${dir} is not a directory`);
  checkPrivate(dir, st, "directory");
}

function makeDirectory(dir: string): void {
  try {
    mkdirSync(dirname(dir), { recursive: true });
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST") throw new AuditSetupError(`cannot create audit key directory ${dir}: ${code}`);
  }
}

/** Create the key atomically: concurrent first runs agree on one key (link(2) never replaces a file). */
function generate(path: string): void {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}`,
  );
  writeFileSync(temp, `${nodeCrypto().randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temp);
  }
}

function readKey(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new AuditSetupError(`no audit key at ${path} (give --audit-key FILE)`);
    if (code === "ELOOP") throw new AuditSetupError(`audit key file ${path} is a symbolic link`);
    throw new AuditSetupError(`cannot read audit key ${path}: ${code}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new AuditSetupError(`audit key ${path} is not a regular file`);
    checkPrivate(path, st, "file");
    const buffer = Buffer.alloc(128);
    const text = buffer
      .subarray(0, readSync(fd, buffer, 0, buffer.length, 0))
      .toString("utf8")
      .trim();
    if (!/^[0-9a-f]{64}$/.test(text))
      throw new AuditSetupError(`${path} is not an audit key (64 hex digits)`);
    return Buffer.from(text, "hex");
  } finally {
    closeSync(fd);
  }
}

/** Read the key at `path`; with `create`, make its directory (0700) and the key (0600) on first use. */
export function loadAuditKey(path: string, create: boolean): AuditKey {
  const dir = dirname(path);
  if (create) makeDirectory(dir);
  checkDirectory(dir);
  if (create && !existsSync(path)) {
    try {
      generate(path);
    } catch (error) {
      throw new AuditSetupError(`cannot create audit key ${path}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  const key = readKey(path);
  // The id on first use: it needs node:crypto, which a start loads only once the server is released.
  let kid: string | undefined;
  return {
    key,
    path,
    get kid() {
      kid ??= keyId(key);
      return kid;
    },
  };
}

/**
 * Refuse a key inside the server's world: its working directory, HOME or TMPDIR. A directory that
 * holds the account's whole home (`/`, `~` itself) does not count: a server started there shares
 * the account, which is the limit docs/DESIGN.md states for C-app.
 */
export function checkKeyOutsideWorld(path: string, cwd: string, env: NodeJS.ProcessEnv): void {
  const key = canonical(path);
  const home = accountHome();
  const places: [string, string | undefined][] = [
    ["working directory", cwd],
    ["HOME", env.HOME],
    ["TMPDIR", env.TMPDIR || "/tmp"],
  ];
  for (const [label, place] of places) {
    if (!place) continue;
    const dir = canonical(place);
    if (home && within(canonical(home), dir)) continue;
    if (within(key, dir)) {
      throw new AuditSetupError(
        `the audit key ${path} is inside the server's ${label} (${place}): keep it out of the server's reach (--audit-key FILE)`,
      );
    }
  }
}

export interface OpenAuditOptions {
  file: string;
  /** `--audit-key`. */
  keyFile?: string;
  /** The proxy's environment (for `$MCPGUARD_AUDIT_KEY` and `$XDG_STATE_HOME`). */
  env: NodeJS.ProcessEnv;
  /** The server's working directory and environment: its world, where the key must not be. */
  serverCwd: string;
  serverEnv: NodeJS.ProcessEnv;
  maxBytes?: number;
  keep?: number;
}

/** Whether `file` is the file the proxy's stdout writes to (`/dev/stdout`, or stdout redirected to it). */
function isStdout(file: string): boolean {
  try {
    const [a, b] = [statSync(file), fstatSync(1)];
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    // Either is gone: not the same file.
    return false;
  }
}

/** The audit log of `mcpguard run`, with its key found (or created) and checked. */
export function openAuditLog(options: OpenAuditOptions): AuditLog {
  const path = auditKeyPath(options.keyFile, options.env);
  // What the layers let the server read or write is checked before, with the run's other files
  // (guardFiles.ts): the key is one of them.
  checkKeyOutsideWorld(path, options.serverCwd, options.serverEnv);
  // The key id is computed at the log's first record (a getter here: not read now).
  const { key } = loadAuditKey(path, true);
  if (isStdout(options.file)) {
    throw new AuditSetupError(
      `cannot use ${options.file} as the audit log: it is the proxy's stdout, the protocol's own stream`,
    );
  }
  let heads: string;
  try {
    heads = openHeadsDir(path);
  } catch (error) {
    throw new AuditSetupError((error as Error).message);
  }
  try {
    return new AuditLog(options.file, { key, maxBytes: options.maxBytes, keep: options.keep, heads });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AuditSetupError(
      code === "ENOTREG"
        ? `cannot use ${options.file} as the audit log: it is not a regular file (a device or a pipe, such as the proxy's own stdout, cannot be chained or rotated)`
        : `cannot open audit log ${options.file}: ${code}`,
    );
  }
}
