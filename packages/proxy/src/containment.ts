/**
 * Keeps track of every process a server starts, so that none outlives the proxy.
 *
 * Where the cgroup v2 hierarchy is writable (root on these machines), the server runs in a leaf
 * cgroup of its own, created beneath the proxy's cgroup: a child that starts its own session
 * (setsid) or double-forks is still found, and `cgroup.kill` ends them all. Elsewhere the server is
 * the leader of a new process group and clean-up signals that group.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Containment {
  readonly kind: "cgroup" | "process-group";
  /** Absolute path of the server's cgroup directory, when there is one. */
  readonly cgroupPath: string | undefined;
  /**
   * The argv to spawn so that the process joins the containment before the server's code runs.
   * With `newSession`, the process also starts a session of its own (for spawners that cannot
   * detach, such as the SDK's stdio transport).
   */
  wrap(argv: readonly string[], options?: { newSession?: boolean }): string[];
  /** SIGKILL every process of the server, then wait (bounded) until none is left. */
  killAll(pid: number): Promise<void>;
  /** Remove what the containment created. Safe to call more than once. */
  dispose(): void;
}

let sequence = 0;

/** The cgroup2 mount point and this process's own cgroup path in it, or undefined. */
export function findCgroup2(): { mount: string; self: string } | undefined {
  let mountinfo: string;
  let selfCgroup: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    selfCgroup = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  let mount: string | undefined;
  for (const line of mountinfo.split("\n")) {
    const sep = line.indexOf(" - ");
    if (sep === -1) continue;
    const fstype = line.slice(sep + 3).split(" ")[0];
    if (fstype === "cgroup2") {
      mount = line.split(" ")[4];
      break;
    }
  }
  const self = selfCgroup
    .split("\n")
    .find((l) => l.startsWith("0::"))
    ?.slice(3);
  if (!mount || self === undefined) return undefined;
  return { mount, self };
}

/** Signal the server's process group (the server is its leader: it runs in a session of its own). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

class ProcessGroupContainment implements Containment {
  readonly kind = "process-group";
  readonly cgroupPath = undefined;

  wrap(argv: readonly string[], options: { newSession?: boolean } = {}): string[] {
    return options.newSession ? ["setsid", ...argv] : [...argv];
  }

  async killAll(pid: number): Promise<void> {
    signalGroup(pid, "SIGKILL");
  }

  dispose(): void {}
}

class CgroupContainment implements Containment {
  readonly kind = "cgroup";
  #disposed = false;

  constructor(readonly cgroupPath: string) {}

  wrap(argv: readonly string[], options: { newSession?: boolean } = {}): string[] {
    // The shell writes its own pid into the cgroup and then becomes the server (same pid), so not a
    // single instruction of the server runs outside it.
    const exec = options.newSession ? 'exec setsid "$@"' : 'exec "$@"';
    return ["/bin/sh", "-c", `echo $$ > "$0" && ${exec}`, join(this.cgroupPath, "cgroup.procs"), ...argv];
  }

  async killAll(pid: number): Promise<void> {
    try {
      writeFileSync(join(this.cgroupPath, "cgroup.kill"), "1");
    } catch {
      signalGroup(pid, "SIGKILL");
    }
    const deadline = Date.now() + 2000;
    while (this.#populated() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = removeCgroupTree(this.cgroupPath);
  }

  #populated(): boolean {
    try {
      return /^populated 1$/m.test(readFileSync(join(this.cgroupPath, "cgroup.events"), "utf8"));
    } catch {
      return false;
    }
  }
}

/**
 * Remove a cgroup and the cgroups nested in it (a proxy killed with SIGKILL leaves its server's
 * cgroup behind inside the caller's), deepest first. False if one is still populated.
 */
export function removeCgroupTree(path: string): boolean {
  let ok = true;
  try {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) ok = removeCgroupTree(join(path, entry.name)) && ok;
    }
    rmdirSync(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" && ok;
  }
  return ok;
}

/** A cgroup when one can be created here, otherwise a process group. */
export function createContainment(options: { name?: string } = {}): Containment {
  const cg = findCgroup2();
  if (cg) {
    const path = join(cg.mount, cg.self, options.name ?? `mcpguard-${process.pid}-${++sequence}`);
    try {
      mkdirSync(path);
      return new CgroupContainment(path);
    } catch {
      // Not writable (no root, or not delegated): fall through.
    }
  }
  return new ProcessGroupContainment();
}
