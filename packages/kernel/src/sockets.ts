/**
 * Which pathname unix sockets a server may be granted. The kernel layer compares the name the
 * server gives with a granted one as a string, before the kernel resolves it (bpf/unix.bpf.h).
 * That is exact only where the name leads to the same socket for every process and nothing the
 * server may change stands on its way. So a granted path is the one spelling the kernel reads back
 * (absolute and normal), and it is walked here as the kernel will walk it, symlinks followed: no
 * folder the walk passes through may be on procfs (whose links, /proc/self/fd/N and /proc/self/cwd,
 * lead wherever the process that follows them points them) or one the server may write, where it
 * could put a symlink to any other socket in the socket's place (a symlink met on the way is fixed,
 * since its folder is not). Whether a folder is one the server may write is a question of the
 * kernel's mounts, not of strings: a folder is judged by its filesystem and its path within it
 * (/proc/self/mountinfo), so a bind mount of a write grant, or a mount beneath one, is the grant.
 * The server cannot change its root (the launcher drops CAP_SYS_CHROOT). A missing part can only
 * be made in the last folder reached, which is judged: the socket may be missing (a daemon not yet
 * running).
 */
import { lstatSync, readFileSync, readlinkSync, statfsSync } from "node:fs";
import { dirname, isAbsolute, normalize, posix } from "node:path";

/** sizeof(sockaddr_un.sun_path): the longest name a pathname unix socket can have. */
const SUN_PATH_BYTES = 108;
/** statfs(2)'s f_type of procfs. */
const PROC_SUPER_MAGIC = 0x9fa0;
/** The kernel's limit of symlinks followed in one lookup. */
const MAX_LINKS = 40;

/** A mount of this process's namespace: its filesystem, the folder of it mounted, and where. */
interface Mount {
  dev: string;
  root: string;
  point: string;
}

/** A tree of one filesystem: its device and the path of the tree's top within it. */
interface Region {
  dev: string;
  inner: string;
  /** The write grant it comes from, for the message. */
  grant: string;
}

/** mountinfo's octal escapes (a space is \040). */
const octalUnescaped = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

function mounts(): Mount[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const f = line.split(" ");
      return { dev: f[2] ?? "", root: octalUnescaped(f[3] ?? "/"), point: octalUnescaped(f[4] ?? "/") };
    });
}

const within = (path: string, top: string) => path === top || path.startsWith(top === "/" ? "/" : `${top}/`);

/** Where a path without symlinks lies: the mount it is in (the last one mounted there) and its path in that filesystem. */
function placeOf(path: string, all: readonly Mount[]): { dev: string; inner: string } {
  let best: Mount | undefined;
  for (const m of all) if (within(path, m.point) && (!best || m.point.length >= best.point.length)) best = m;
  if (!best) return { dev: "?", inner: path };
  return {
    dev: best.dev,
    inner: posix.join(best.root, path.slice(best.point === "/" ? 0 : best.point.length) || "/"),
  };
}

/** What the server may write: each grant's tree, and every mount beneath one (Landlock's rule on the grant covers it). */
function writableRegions(writable: readonly string[], all: readonly Mount[]): Region[] {
  return writable.flatMap((grant) => [
    { ...placeOf(grant, all), grant },
    ...all
      .filter((m) => m.point !== grant && within(m.point, grant))
      .map((m) => ({ dev: m.dev, inner: m.root, grant })),
  ]);
}

/**
 * Why `path` may not be granted as a unix socket to a server that may write `writable` (canonical
 * paths), or null.
 */
export function socketRefusal(path: string, writable: readonly string[]): string | null {
  if (!isAbsolute(path) || normalize(path) !== path || path.endsWith("/"))
    return `the unix socket ${path} must be an absolute path without ".", ".." or "//"`;
  if (Buffer.byteLength(path) > SUN_PATH_BYTES)
    return `the unix socket ${path} is longer than the ${SUN_PATH_BYTES} bytes a socket's name may have`;
  const all = mounts();
  const regions = writableRegions(writable, all);
  const queue = path.split("/").filter(Boolean);
  let dir = "/";
  let links = 0;
  while (queue.length > 0) {
    const why = folderRefusal(path, dir, all, regions);
    if (why) return why;
    const name = queue.shift() as string;
    if (name === ".") continue;
    if (name === "..") {
      dir = dirname(dir);
      continue;
    }
    const next = dir === "/" ? `/${name}` : `${dir}/${name}`;
    let symlink: boolean;
    try {
      symlink = lstatSync(next).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return null; // made, if ever, in `dir`: judged
      return `the unix socket ${path} cannot be checked: ${next}: ${code}`;
    }
    if (symlink) {
      if (++links > MAX_LINKS)
        return `the unix socket ${path} passes through more than ${MAX_LINKS} symlinks`;
      const target = readlinkSync(next);
      queue.unshift(...target.split("/").filter(Boolean));
      if (target.startsWith("/")) dir = "/";
    } else if (queue.length > 0) {
      dir = next;
    }
  }
  return null;
}

/** Why the walk may not pass through the folder `dir` (no symlink in it), or null. */
function folderRefusal(
  path: string,
  dir: string,
  all: readonly Mount[],
  regions: readonly Region[],
): string | null {
  if (statfsSync(dir).type === PROC_SUPER_MAGIC)
    return `the unix socket ${path} leads through procfs (${dir}), whose links lead wherever the process that follows them points them`;
  const at = placeOf(dir, all);
  const region = regions.find((r) => r.dev === at.dev && within(at.inner, r.inner));
  if (region)
    return `the unix socket ${path} leads through ${dir}, which the server may write (${region.grant}): it could put a symlink to any socket in its place`;
  return null;
}
