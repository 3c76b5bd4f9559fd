/**
 * Which pathname unix sockets a server may be granted. The kernel layer compares the name the
 * server gives with a granted one as a string, before the kernel resolves it (bpf/unix.bpf.h).
 * That is exact only where the name leads to the same socket for every process and nothing the
 * server may change stands on its way: so a granted path is the one spelling the kernel reads back
 * (absolute and normal), passes through no symlink (resolved at connect time, by the kernel, in
 * the server's view) and nothing on procfs (whose links, /proc/self/fd/N and /proc/self/cwd, lead
 * wherever the process that follows them points them), and no folder on its way, nor the folder a
 * missing part would be made in, lies in a write grant, where the server could put a symlink to
 * any other socket. The socket itself may be missing (a daemon not yet running).
 */
import { lstatSync, statfsSync } from "node:fs";
import { dirname, isAbsolute, normalize } from "node:path";

/** sizeof(sockaddr_un.sun_path): the longest name a pathname unix socket can have. */
const SUN_PATH_BYTES = 108;
/** statfs(2)'s f_type of procfs. */
const PROC_SUPER_MAGIC = 0x9fa0;

/**
 * Why `path` may not be granted as a unix socket to a server that may write `writable` (canonical
 * paths), or null.
 */
export function socketRefusal(path: string, writable: readonly string[]): string | null {
  if (!isAbsolute(path) || normalize(path) !== path || path.endsWith("/"))
    return `the unix socket ${path} must be an absolute path without ".", ".." or "//"`;
  if (Buffer.byteLength(path) > SUN_PATH_BYTES)
    return `the unix socket ${path} is longer than the ${SUN_PATH_BYTES} bytes a socket's name may have`;
  const parts = path.split("/").slice(1);
  for (let i = 0; i <= parts.length; i++) {
    const why = partRefusal(path, `/${parts.slice(0, i).join("/")}`);
    if (why === null) break; // missing from here on: the write check below covers what may be made
    if (why) return why;
  }
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const grant = writable.find((w) => dir === w || dir.startsWith(w === "/" ? "/" : `${w}/`));
    if (grant)
      return `the unix socket ${path} lies in ${dir}, which the server may write (${grant}): it could put a symlink to any socket in its place`;
    if (dir === "/") return null;
  }
}

/** Why the part `at` of `path` refuses it; null when it does not exist, undefined when it is fine. */
function partRefusal(path: string, at: string): string | null | undefined {
  let symlink: boolean;
  try {
    symlink = lstatSync(at).isSymbolicLink();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    return `the unix socket ${path} cannot be checked: ${at}: ${code}`;
  }
  if (symlink)
    return `the unix socket ${path} passes through the symlink ${at}: grant the path it leads to, and have the server name that one`;
  if (statfsSync(at).type === PROC_SUPER_MAGIC)
    return `the unix socket ${path} lies on procfs (${at}), whose links lead wherever the process that follows them points them`;
  return undefined;
}
