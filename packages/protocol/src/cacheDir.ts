/**
 * Where mcpguard keeps what it may reuse between starts (the kernel probe), and the only code that
 * reads or writes there. Never derived from HOME or TMPDIR: those are the server's world (the
 * benchmark gives each trial its own), and no harness file may land in it.
 *
 * A cache saves work, never a check:
 * - A cache directory (and each namespace under it) is used only when it is a directory, not a
 *   symlink, owned by the caller and writable by no one else; every directory above it, symlinks
 *   resolved, is owned by root or the caller and writable by no one else unless sticky (/tmp,
 *   /var/tmp). What is missing is created 0700 (with its parents, for MCPGUARD_CACHE_DIR).
 *   Anything else is refused with one line on stderr and the process runs without a cache: the
 *   directory may be another user's plant, so nothing in it is read, and failing instead would
 *   let any local user stop mcpguard by creating /var/tmp/mcpguard-<uid> first.
 * - An entry holds every input its value depends on (`cacheKey`), and is read only for those same
 *   inputs, byte for byte: two checkouts or two kernels never share a value. It is written whole
 *   (temp file, then rename), mode 0600, and parsed with its zod schema on every read: an entry
 *   that fails the schema, holds other inputs, or is not a regular file of the caller's, is a miss.
 */
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import type * as z from "zod/mini";

/** node:crypto on first use: only a write (after a miss) needs it, for its temporary file's random name. */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

function cacheDir(): string {
  if (process.env.MCPGUARD_CACHE_DIR) return process.env.MCPGUARD_CACHE_DIR;
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) {
    try {
      accessSync("/run", constants.W_OK);
      return "/run/mcpguard";
    } catch {
      // No writable /run: fall through.
    }
  }
  return join("/var/tmp", `mcpguard-${uid}`);
}

/** An entry's key: every input its value depends on, in order, as one text, and the entry's file name. */
export interface CacheKey {
  readonly text: string;
  readonly name: string;
}

/**
 * The key of the entry for `inputs`. The file is named by a 64-bit FNV-1a hash of their text, and
 * the entry holds the text itself, which a read compares: two inputs whose names collide share a
 * file, never a value (the later write replaces the earlier, which is then a miss). So the name
 * needs no cryptographic hash (the directory is the caller's alone, see above), and a start that
 * reads the cache does not load node:crypto for it (about 3 ms).
 */
export function cacheKey(...inputs: string[]): CacheKey {
  const text = JSON.stringify(inputs);
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8"))
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return { text, name: hash.toString(16).padStart(16, "0") };
}

const NAMESPACE = /^[a-z][a-z0-9-]{0,31}$/;
const NAME = /^[0-9a-f]{16}$/;
/** Far above any entry; a bigger file is not read. */
const MAX_ENTRY_BYTES = 1 << 20;
const warned = new Set<string>();

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/** Why the directory `path` (its lstat `st`) may not hold a cache, or null. */
function dirProblem(path: string, st: Stats, uid: number): string | null {
  if (st.isSymbolicLink()) return `${path} is a symlink`;
  if (!st.isDirectory()) return `${path} is not a directory`;
  if (st.uid !== uid) return `${path} is owned by uid ${st.uid}, not ${uid}`;
  if (st.mode & 0o022) {
    return `${path} is writable by group or others (mode ${(st.mode & 0o7777).toString(8)})`;
  }
  return null;
}

/** Why a directory above the cache (a real path) would let someone else swap the cache, or null. */
function ancestorProblem(real: string, uid: number): string | null {
  for (let dir = real; ; dir = dirname(dir)) {
    const st = statSync(dir);
    if (st.uid !== 0 && st.uid !== uid) return `${dir}, above the cache, is owned by uid ${st.uid}`;
    if (st.mode & 0o022 && !(st.mode & 0o1000)) {
      return `${dir}, above the cache, is writable by group or others and not sticky`;
    }
    if (dir === dirname(dir)) return null;
  }
}

/** Make `path` (0700) unless it exists, then check it; why it may not be used, or null. */
function ensureDir(path: string, uid: number): string | null {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if (errno(error) !== "EEXIST") return `cannot create ${path}: ${errno(error)}`;
  }
  return dirProblem(path, lstatSync(path), uid);
}

function refuse(why: string): null {
  if (!warned.has(why)) {
    warned.add(why);
    process.stderr.write(`mcpguard: not caching: ${why.replace(/[\r\n]/g, " ")}\n`);
  }
  return null;
}

/**
 * The directory of `namespace` in the cache, created and checked; null when there is none that
 * is safe to use (said once on stderr).
 */
function cacheSubdir(namespace: string): string | null {
  if (!NAMESPACE.test(namespace)) throw new Error(`cache namespace "${namespace}" is not a plain name`);
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const configured = cacheDir();
  if (!isAbsolute(configured) || !basename(configured)) {
    return refuse(`${configured} is not an absolute path below /`);
  }
  try {
    // A directory of the operator's choosing gets its parents; the defaults' (/run, /var/tmp) exist.
    if (process.env.MCPGUARD_CACHE_DIR) mkdirSync(dirname(configured), { recursive: true, mode: 0o700 });
    const parent = realpathSync(dirname(configured));
    const base = join(parent, basename(configured));
    const sub = join(base, namespace);
    const why = ancestorProblem(parent, uid) ?? ensureDir(base, uid) ?? ensureDir(sub, uid);
    return why ? refuse(why) : sub;
  } catch (error) {
    return refuse(`cannot use ${configured}: ${errno(error)}`);
  }
}

function entryFile(namespace: string, key: CacheKey): string | null {
  if (!NAME.test(key.name)) throw new Error("a cache key must come from cacheKey()");
  const dir = cacheSubdir(namespace);
  return dir && join(dir, `${key.name}.json`);
}

/** The text of a regular file of the caller's, not followed through a symlink; undefined otherwise. */
function readEntry(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // No entry, or one that is a link: a cache miss.
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const ours = st.isFile() && st.uid === process.getuid?.() && !(st.mode & 0o022);
    return ours && st.size <= MAX_ENTRY_BYTES ? readFileSync(fd, "utf8") : undefined;
  } catch {
    // Unreadable entry: a cache miss.
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The entry `key` of `namespace`, parsed with `schema` (which must accept its own output as
 * written by `writeCache`); undefined when it is missing, unsafe, or fails the schema.
 */
export function readCache<T>(namespace: string, key: CacheKey, schema: z.ZodMiniType<T>): T | undefined {
  const file = entryFile(namespace, key);
  const text = file ? readEntry(file) : undefined;
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // A torn or foreign entry: a cache miss.
    return undefined;
  }
  // The inputs it was written for, then the value: another key's entry is a miss. Checked field by
  // field: this module is on every start's path (zod is loaded only by a schema that needs it).
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const entry = json as Record<string, unknown>;
  if (Object.keys(entry).length !== 2 || entry.key !== key.text || !Object.hasOwn(entry, "value"))
    return undefined;
  const parsed = schema.safeParse(entry.value);
  return parsed.success ? parsed.data : undefined;
}

/** Store `value` as the entry `key` of `namespace`, atomically; a cache that cannot be written is skipped. */
export function writeCache(namespace: string, key: CacheKey, value: unknown): void {
  const file = entryFile(namespace, key);
  if (!file) return;
  const temp = join(
    dirname(file),
    `.${key.name}.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    const fd = openSync(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      writeFileSync(fd, JSON.stringify({ key: key.text, value }));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch {
    // A cache that cannot be written is skipped (the answer is still computed); the temp file goes.
    try {
      unlinkSync(temp);
    } catch {
      // Never created.
    }
  }
}
