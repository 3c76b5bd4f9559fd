/**
 * Which backend enforces what, found by really loading programs and applying a ruleset (the
 * loader's and the launcher's `--probe`), never by reading /sys/kernel/security/lsm: on these
 * machines `bpf` is listed there while BPF LSM programs are refused at load.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { binaries, whyAbsent } from "./binaries.js";
import { type ProbeResult, probeCacheKey, readProbeCache, writeProbeCache } from "./probeCache.js";

export type { ProbeResult } from "./probeCache.js";

const run = promisify(execFile);

/** What `mcpguard-loader --probe` prints (bpf/probe.c). */
const LoaderProbe = z.looseObject({
  cgroupBpf: z.optional(z.boolean()),
  tpBtf: z.optional(z.boolean()),
  unixBpf: z.optional(z.boolean()),
  lsm: z.optional(z.boolean()),
  errors: z.optional(z.record(z.string(), z.string())),
});

/** What `mcpguard-exec --probe` prints (bpf/launcher.c). */
const LauncherProbe = z.looseObject({
  landlockAbi: z.int().check(z.nonnegative()),
  error: z.optional(z.string()),
  seccomp: z.optional(z.boolean()),
  seccompError: z.optional(z.string()),
  namespaces: z.optional(z.boolean()),
  namespacesError: z.optional(z.string()),
  pidNamespace: z.optional(z.boolean()),
  pidNamespaceError: z.optional(z.string()),
});

const because = (why: string | undefined) => (why ? `: ${why}` : "");

export type Capability = "file" | "exec" | "net" | "unix";
export const CAPABILITIES: readonly Capability[] = ["file", "exec", "net", "unix"];

export interface CapabilityBackend {
  /** The backend that enforces the capability here, or null when none does. */
  backend: string | null;
  detail: string;
}

/** Landlock features by ABI: TCP ports from 4, scopes from 6. */
export const LANDLOCK_MIN_ABI = 6;

export function capabilityBackends(p: ProbeResult): Record<Capability, CapabilityBackend> {
  const landlock = p.landlockAbi >= LANDLOCK_MIN_ABI;
  const landlockWhy = p.landlockAbi
    ? `Landlock ABI ${p.landlockAbi} (ABI ${LANDLOCK_MIN_ABI} needed)`
    : `Landlock unavailable${because(p.errors.landlock ?? p.errors.launcher)}`;
  const fileExec = (what: string): CapabilityBackend =>
    p.lsm
      ? { backend: "bpf-lsm", detail: `BPF LSM ${what} hooks, Landlock underneath` }
      : landlock
        ? {
            backend: "landlock",
            detail: `Landlock ABI ${p.landlockAbi}: ${what} rules inherited by every descendant`,
          }
        : { backend: null, detail: landlockWhy };
  const net: CapabilityBackend = p.lsm
    ? { backend: "bpf-lsm", detail: "socket_connect and socket_sendmsg hooks by address and port" }
    : p.cgroupBpf
      ? {
          backend: "cgroup-bpf",
          detail:
            "connect4/6, sendmsg4/6 by address and port (TCP, UDP, IPv6, v4-mapped); raw and packet sockets refused (sock_create, and the launcher drops CAP_NET_RAW)",
        }
      : {
          backend: null,
          detail: `cgroup BPF did not load${because(p.errors.cgroupBpf ?? p.errors.loader)}${p.root ? "" : " (needs root)"}`,
        };
  const unix: CapabilityBackend = !landlock
    ? { backend: null, detail: landlockWhy }
    : p.unixBpf
      ? {
          backend: "landlock+cgroup-bpf",
          detail:
            "abstract unix sockets and signals scoped to the sandbox (Landlock); pathname sockets only those the policy names (connect_unix, sendmsg_unix)",
        }
      : {
          backend: "landlock",
          detail: `abstract unix sockets and signals scoped to the sandbox; pathname sockets are not mediated: ${p.errors.unixBpf ?? "no cgroup unix socket programs here"}`,
        };
  return { file: fileExec("file"), exec: fileExec("exec"), net, unix };
}

/**
 * What the launcher adds beneath Landlock and cgroup BPF, which cannot see it (bpf/seccomp.h,
 * bpf/launcher.c): exec of a memfd (a file on an internal mount that Landlock lets through);
 * sockets of families the cgroup sock_create hook never runs for (vsock, packet, netlink other
 * than NETLINK_ROUTE, ...); user namespaces (in one a server holds every capability over new
 * namespaces); the kernel keyring and SysV IPC, shared with the host's other processes of the
 * user; and abstract unix socket names, which Landlock's scope keeps the server from connecting
 * to but not from binding; and /proc, which Landlock cannot grant file by file (a rule on a procfs
 * entry lasts only as long as its dentry), so it is granted whole, read-only, where the server has
 * a /proc of its own that shows no other process; and a change of a file's mode, owner, times or
 * extended attributes, which Landlock does not mediate at all (a server running as root could make
 * a shell set-user-ID), refused outside the write grants by mounts made read-only in the server's
 * own mount namespace.
 */
export type Hardening =
  | "memfd-exec"
  | "socket-families"
  | "user-namespaces"
  | "keyring"
  | "sysv-ipc"
  | "abstract-unix-bind"
  | "procfs"
  | "file-metadata";
export const HARDENING: readonly Hardening[] = [
  "memfd-exec",
  "socket-families",
  "user-namespaces",
  "keyring",
  "sysv-ipc",
  "abstract-unix-bind",
  "procfs",
  "file-metadata",
];

export function hardeningBackends(p: ProbeResult): Record<Hardening, CapabilityBackend> {
  // Without a launcher that ran, nothing was tried: say why it did not run.
  const noFilter = p.errors.launcher
    ? `no seccomp filter: ${p.errors.launcher}`
    : `the launcher's seccomp filter does not work here${because(p.errors.seccomp)}`;
  const noNamespaces = p.errors.launcher
    ? `no namespaces of the server's own: ${p.errors.launcher}`
    : `no namespaces of the server's own here${because(p.errors.namespaces)}`;
  const filter = (detail: string): CapabilityBackend =>
    p.seccomp ? { backend: "seccomp", detail } : { backend: null, detail: noFilter };
  return {
    "memfd-exec": filter(
      "memfd_create only with MFD_NOEXEC_SEAL (else ENOSYS); no execveat of a descriptor (EACCES)",
    ),
    "socket-families": filter(
      "socket() and socketpair() for unix, inet, inet6 and netlink route only (else EAFNOSUPPORT)",
    ),
    "user-namespaces": filter(
      "unshare() and clone() with CLONE_NEWUSER fail (EPERM), clone3 is ENOSYS (the C library falls back to clone)",
    ),
    keyring: filter("add_key, request_key and keyctl fail with ENOSYS"),
    "sysv-ipc": p.namespaces
      ? {
          backend: "ipc-namespace",
          detail: "an IPC namespace of the server's own: no SysV object or POSIX message queue of the host",
        }
      : p.seccomp
        ? {
            backend: "seccomp",
            detail: `SysV IPC and POSIX message queues fail with ENOSYS (${noNamespaces})`,
          }
        : { backend: null, detail: `${noNamespaces}; ${noFilter}` },
    "abstract-unix-bind": p.namespaces
      ? {
          backend: "net-namespace",
          detail:
            "a server whose policy grants no network gets a network namespace of its own (loopback only), so the abstract names it binds are its own; under a network grant they are the host's",
        }
      : { backend: null, detail: noNamespaces },
    // Without a /proc of its own the server is denied /proc whole (stricter, not weaker): no backend is missing.
    procfs: p.pidNamespace
      ? {
          backend: "pid-namespace",
          detail:
            "PID and mount namespaces of the server's own, with a /proc mounted in them: it lists the server's processes and its init only, and is granted read-only (no write, no exec)",
        }
      : {
          backend: p.landlockAbi >= LANDLOCK_MIN_ABI ? "landlock" : null,
          detail: `/proc is not granted at all (the runtime's reads of its own entries fail): no PID namespace of the server's own here${because(p.errors.pidNamespace ?? p.errors.launcher)}`,
        },
    "file-metadata": p.pidNamespace
      ? {
          backend: "read-only-mounts",
          detail:
            "in the server's mount namespace every mount is read-only but its write grants: chmod, chown, utimes and setxattr elsewhere fail with EROFS (Landlock does not mediate them); a move between two write grants is EXDEV, as between filesystems",
        }
      : {
          backend: null,
          detail: `chmod, chown, utimes and setxattr are not mediated anywhere: no mount namespace of the server's own here${because(p.errors.pidNamespace ?? p.errors.launcher)}`,
        },
  };
}

/** The probe, cached for the boot, the kernel and the launcher and loader binaries that answered it. */
export async function probeBackends(options: { fresh?: boolean } = {}): Promise<ProbeResult> {
  const bins = binaries();
  const key = probeCacheKey(bins);
  const cached = key && !options.fresh ? readProbeCache(key) : undefined;
  if (cached) return cached;
  const result = await probeNow(bins);
  if (key) writeProbeCache(key, result);
  return result;
}

async function probeNow(bins: ReturnType<typeof binaries>): Promise<ProbeResult> {
  const result: ProbeResult = {
    root: process.getuid?.() === 0,
    landlockAbi: 0,
    cgroupBpf: false,
    tpBtf: false,
    unixBpf: false,
    lsm: false,
    seccomp: false,
    namespaces: false,
    pidNamespace: false,
    errors: {},
  };
  if (bins.unusable || !existsSync(bins.launcher)) {
    result.errors.launcher = whyAbsent(bins, bins.launcher);
  } else {
    try {
      const { stdout } = await run(bins.launcher, ["--probe"], { timeout: 5000 });
      const parsed = LauncherProbe.parse(JSON.parse(stdout));
      result.landlockAbi = parsed.landlockAbi;
      result.seccomp = parsed.seccomp === true;
      result.namespaces = parsed.namespaces === true;
      if (parsed.error) result.errors.landlock = parsed.error;
      if (parsed.seccompError) result.errors.seccomp = parsed.seccompError;
      if (parsed.namespacesError) result.errors.namespaces = parsed.namespacesError;
      result.pidNamespace = parsed.pidNamespace === true;
      if (parsed.pidNamespaceError) result.errors.pidNamespace = parsed.pidNamespaceError;
    } catch (error) {
      result.errors.launcher = `${bins.launcher} --probe: ${(error as Error).message.trim()}`;
    }
  }
  if (bins.unusable || !existsSync(bins.loader)) {
    result.errors.loader = whyAbsent(bins, bins.loader);
    return result;
  }
  try {
    const { stdout } = await run(bins.loader, ["--probe"], { timeout: 20_000 });
    const parsed = LoaderProbe.parse(JSON.parse(stdout));
    result.cgroupBpf = parsed.cgroupBpf === true;
    result.tpBtf = parsed.tpBtf === true;
    result.unixBpf = parsed.unixBpf === true;
    result.lsm = parsed.lsm === true;
    Object.assign(result.errors, parsed.errors ?? {});
  } catch (error) {
    result.errors.cgroupBpf = (error as Error).message;
  }
  return result;
}
