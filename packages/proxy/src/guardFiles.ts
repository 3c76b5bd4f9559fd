/**
 * The guard's own files out of the server's reach. `mcpguard run` reads its policy, overrides,
 * manifest and pin file at start, and writes its audit log with a key: a server that could change
 * one of them would choose its own rules at its next start, or rewrite the record of what it did.
 * Before anything of the server runs, each file the run really uses must pass two rules (mcpguard's
 * own install the first only):
 *
 *  a. it lies in no grant that lets the server write (L1's and AgentBound's write grants, the
 *     kernel's write rules under L3; the key, a secret, in no read rule of the kernel either);
 *  b. it, when it exists, and every folder above it belong to root or to the proxy's user (or, for
 *     a root proxy started through sudo, to the user who ran it) and are writable by nobody else
 *     (ssh's StrictModes), except that a folder with the sticky bit (/tmp) may be: nobody else can
 *     replace our entries there.
 *
 * A file still to be created (a new audit log) is judged where it will be: its nearest existing
 * folder. A symbolic link is judged where it points and where it lies (replacing the link
 * replaces the file). See docs/DESIGN.md, "The guard's own files".
 */
import {
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isRecord } from "@mcpguard/protocol";
import { UsageError } from "./args.js";

/** A path the server may write (or, with `read`, only read), and which rule grants it, for the message. */
export interface Grant {
  path: string;
  /** The grant, as the message names it: "the write grant of tool write_file", "the kernel's write rule". */
  why: string;
  /** A read grant: only a secret (the audit key) must stay out of it. */
  read?: boolean;
}

export interface GuardFile {
  path: string;
  /** What it is, as the message names it: "policy", "pin file", "audit log". */
  what: string;
  /** The server must not read it either (the audit key). */
  secret?: boolean;
  /**
   * mcpguard's own install (its code, code caches and kernel-layer binaries, which run as root at
   * the next start): rule a only; who owns it is the installer's business.
   */
  code?: boolean;
}

/** A guard file in the server's reach: one line, exit status 2. */
class GuardFileError extends UsageError {}

/**
 * `path` made absolute as the kernel reads it: joined to the working directory, with `.` and `..`
 * left to the walk (path.resolve folds `link/..` to the folder holding the link, where the kernel
 * goes to the parent of the link's target).
 */
export function absolute(path: string): string {
  return isAbsolute(path) ? path : `${process.cwd()}/${path}`;
}

/** The links the kernel follows in one walk before it gives up (ELOOP): MAXSYMLINKS. */
const MAX_LINKS = 40;

/**
 * The canonical path of a path that may not exist yet: where the kernel finds the file, or would
 * create it (an open with O_CREAT, as the audit log's). realpath(3) itself (`realpathSync.native`),
 * which walks the path as the kernel does, `..` after a link included; Node's own `realpathSync`
 * walks it again in JavaScript, an lstat per component, about twice as slow. Where nothing is
 * there: a dangling link at the end is followed, as O_CREAT follows it, and otherwise the nearest
 * existing folder is resolved and the rest joined to it. guardFiles.test.ts holds this to the path
 * the kernel gives the descriptor it opens or creates.
 */
export function canonical(path: string): string {
  let abs = absolute(path);
  for (let links = 0; ; links++) {
    try {
      return realpathSync.native(abs);
    } catch {
      // Not there: a dangling link, or a path still to be created.
    }
    const target = links < MAX_LINKS ? linkTarget(abs) : undefined;
    if (target === undefined) break;
    abs = isAbsolute(target) ? target : `${dirname(abs)}/${target}`;
  }
  for (let dir = dirname(abs); ; dir = dirname(dir)) {
    try {
      return join(realpathSync.native(dir), abs.slice(dir.length));
    } catch {
      // Not there yet: resolved from its nearest existing parent.
      if (dirname(dir) === dir) return resolve(abs);
    }
  }
}

/** The target of the symbolic link at `path`, or undefined where there is none. */
function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    // No link there (or none that can be read): the path as it is.
    return undefined;
  }
}

/** Whether `path` is `dir` or lies below it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/**
 * Why the server may write or create `path` under these grants (the grant, as a message names it),
 * or undefined: `path` is a write grant or lies in one, or, for a folder, a write grant is one of
 * its entries (a file the server may put there). Paths are judged where the kernel finds them
 * (canonical), each grant resolved once.
 */
export function writeReach(grants: readonly Grant[]): (path: string) => string | undefined {
  let resolved: { grant: Grant; canonical: string }[] | undefined;
  return (path) => {
    resolved ??= grants.filter((g) => !g.read).map((grant) => ({ grant, canonical: canonical(grant.path) }));
    const place = canonical(path);
    const hit = resolved.find((g) => within(place, g.canonical) || dirname(g.canonical) === place);
    return hit && `${hit.grant.path}, ${hit.grant.why}`;
  };
}

/** Where a file is judged: where it points (first), and where its link lies when it is a symbolic link. */
function places(path: string): string[] {
  const abs = absolute(path);
  const target = canonical(abs);
  const link = join(canonical(dirname(abs)), basename(abs));
  return link === target ? [target] : [target, link];
}

function stat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    // Missing: nothing to guard there.
    return undefined;
  }
}

const mode = (st: Stats) => (st.mode & 0o7777).toString(8).padStart(4, "0");
const writers = (st: Stats) =>
  (st.mode & 0o020 ? ["group"] : []).concat(st.mode & 0o002 ? ["others"] : []).join(" and ");

/** Who may own a guard file and the folders above it: root, the proxy's uid, and under sudo its caller. */
interface Owners {
  uid: number;
  sudoUid?: number;
}

function ownersText({ uid, sudoUid }: Owners): string {
  const you = uid === 0 ? [] : [`you (uid ${uid})`];
  const caller = sudoUid === undefined ? [] : [`the user who ran sudo (uid ${sudoUid})`];
  const all = ["root", ...you, ...caller];
  return all.length === 1 ? "root" : `${all.slice(0, -1).join(", ")} or ${all.at(-1)}`;
}

/**
 * Rule b for one node: owned by root or `uid`, writable by nobody else (a sticky folder excepted).
 * `self`: the node is the file itself, not a folder above it.
 */
function strictModes(file: GuardFile, node: string, st: Stats, owners: Owners, self: boolean): void {
  const where = self ? `the ${file.what} ${file.path}` : `the ${file.what} ${file.path} is in ${node}, which`;
  if (st.uid !== 0 && st.uid !== owners.uid && st.uid !== owners.sudoUid) {
    throw new GuardFileError(
      `${where} is owned by uid ${st.uid}, not by ${ownersText(owners)}: that user could ${
        self ? "rewrite" : "replace"
      } the ${file.what}; chown ${self ? "it" : "the folder"}, or keep the ${file.what} elsewhere`,
    );
  }
  if (st.mode & 0o022 && !(st.isDirectory() && st.mode & 0o1000)) {
    throw new GuardFileError(
      `${where} is writable by ${writers(st)} (mode ${mode(st)}): chmod go-w ${node}, or keep the ${file.what} elsewhere`,
    );
  }
}

/** Rule b: the file where it exists, then every folder above it, up to /. `target`: where the file points. */
function checkStrictModes(file: GuardFile, place: string, target: string, owners: Owners): void {
  const st = stat(place);
  // The link itself has no mode of its own; the folders that hold it are checked below.
  if (st && !st.isSymbolicLink()) strictModes(file, place, st, owners, place === target);
  for (let dir = dirname(place); ; dir = dirname(dir)) {
    const folder = stat(dir);
    if (folder) strictModes(file, dir, folder, owners, dir === target);
    if (dirname(dir) === dir) break;
  }
}

export interface GuardCheck {
  /** What the server may write (and read), with the rule that grants it. */
  grants: readonly Grant[];
  /** The proxy's uid (rule b); undefined where there is none (no rule b). */
  uid?: number;
  /**
   * A root proxy started through sudo (`$SUDO_UID`): the caller's files count as root's. Whoever
   * may run sudo is root already, and a checkout of theirs (CI runs `sudo npm test` in the runner
   * user's) is no less the operator's than root's own.
   */
  sudoUid?: number;
  /** Advice for a file inside a grant, else the general one. */
  advice?: (file: GuardFile) => string | undefined;
}

/** A device, pipe or socket (what `/dev/stdin` and the like lead to), not a file that keeps what is written. */
function special(path: string): boolean {
  const st = statSync(path, { throwIfNoEntry: false });
  return st !== undefined && !st.isFile() && !st.isDirectory();
}

/**
 * Refuse the first guard file in the server's reach (GuardFileError). Devices, pipes and /proc are
 * left to the loaders: a policy read from /dev/stdin, an audit log on /dev/stdout get their own
 * refusal. A file under /dev that is a file (`/dev/shm/audit.ndjson`, on a tmpfs a policy may grant)
 * is judged as any other, and so is a pipe elsewhere (one in a workspace is the server's to feed).
 */
export function checkGuardFiles(files: readonly GuardFile[], check: GuardCheck): void {
  const grants = check.grants.map((g) => ({ ...g, canonical: canonical(g.path) }));
  for (const file of files) {
    const at = places(file.path);
    if (at.some((p) => within(p, "/proc") || (within(p, "/dev") && special(p)))) continue;
    for (const place of at) {
      // An install is a tree: a grant anywhere inside it reaches its code too.
      const grant = grants.find(
        (g) =>
          (!g.read || file.secret) &&
          (within(place, g.canonical) || (file.code === true && within(g.canonical, place))),
      );
      if (grant) {
        const fix =
          check.advice?.(file) ??
          `keep it outside every folder the server may ${file.secret ? "read or write" : "write"}, or narrow the grant`;
        throw new GuardFileError(
          `the ${file.what} ${file.path} ${place === grant.canonical ? "is" : within(place, grant.canonical) ? "lies in" : "holds"} ${grant.path}, ${grant.why}: ` +
            `the server could ${grant.read ? "read" : "rewrite"} it; ${fix}`,
        );
      }
      if (check.uid !== undefined && !file.code)
        checkStrictModes(file, place, at[0] as string, {
          uid: check.uid,
          sudoUid: check.uid === 0 ? check.sudoUid : undefined,
        });
    }
  }
}

/**
 * The client config a policy was wrapped from by an older mcpguard wrap, which kept its files
 * beside the config (`<dir>/<config>` and `<dir>/mcpguard/<name>.json`): the `file` of a
 * `*.mcpguard-wrap.json` record in the policy's grandparent folder that lists this policy.
 */
export function wrappedConfigOf(policy: string): string | undefined {
  const path = resolve(policy);
  const dir = dirname(dirname(path));
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".mcpguard-wrap.json"));
  } catch {
    // Unreadable folder: no wrap record to advise from.
    return undefined;
  }
  for (const name of names) {
    try {
      // Checked by hand, not with wrap's zod schema: `run` reads this before zod loads.
      const state: unknown = JSON.parse(readFileSync(join(dir, name), "utf8"));
      if (!isRecord(state)) continue;
      const servers = isRecord(state.servers) ? Object.values(state.servers) : [];
      const listed = servers.some(
        (s) =>
          isRecord(s) &&
          typeof s.policy === "string" &&
          (s.policy === path || canonical(s.policy) === canonical(path)),
      );
      // The record is the config's own (`<config>.mcpguard-wrap.json` beside it): its text lies where
      // the server may have written it, so it names nothing else.
      const config = join(dir, name.slice(0, -".mcpguard-wrap.json".length));
      if (listed && typeof state.file === "string" && canonical(state.file) === canonical(config))
        return canonical(config);
    } catch {
      // Not a record wrap wrote: no advice from it.
    }
  }
  return undefined;
}
