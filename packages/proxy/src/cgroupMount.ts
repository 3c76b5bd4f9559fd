/** Where a cgroup is found below a cgroup filesystem mount (containment.ts, limits.ts). */

/**
 * A cgroup path as this process sees it (/proc/self/cgroup) made relative to a mount of the
 * hierarchy whose root is `root` (field 4 of mountinfo): the same path for a mount of the whole
 * hierarchy, the rest of it below a bind mount of a subtree, undefined when the mount does not hold
 * it (its directory there would be another cgroup).
 */
export function underMountRoot(path: string, root: string): string | undefined {
  if (root === "/") return path;
  if (path === root) return "/";
  return path.startsWith(`${root}/`) ? path.slice(root.length) : undefined;
}
