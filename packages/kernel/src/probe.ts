/**
 * Which backend enforces what, found by really loading programs and applying a ruleset (the
 * loader's and the launcher's `--probe`), never by reading /sys/kernel/security/lsm: on these
 * machines `bpf` is listed there while BPF LSM programs are refused at load.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { binaries } from "./binaries.js";
import { probeCacheKey, readProbeCache, writeProbeCache } from "./probeCache.js";

const run = promisify(execFile);

export interface ProbeResult {
  root: boolean;
  landlockAbi: number;
  cgroupBpf: boolean;
  tpBtf: boolean;
  lsm: boolean;
  /** The launcher's seccomp filter installs and refuses what it must (memfd exec, socket families). */
  seccomp: boolean;
  /** Why something is unavailable, by what was tried. */
  errors: Record<string, string>;
}

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
    : `Landlock unavailable${p.errors.landlock ? `: ${p.errors.landlock}` : ""}`;
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
          detail: `cgroup BPF did not load${p.errors.cgroupBpf ? `: ${p.errors.cgroupBpf}` : ""}${p.root ? "" : " (needs root)"}`,
        };
  const unix: CapabilityBackend = landlock
    ? {
        backend: "landlock",
        detail: "abstract unix sockets and signals scoped to the sandbox; pathname sockets are not mediated",
      }
    : { backend: null, detail: landlockWhy };
  return { file: fileExec("file"), exec: fileExec("exec"), net, unix };
}

/**
 * What the launcher's seccomp filter adds beneath Landlock and cgroup BPF, which cannot see it: exec
 * of a memfd (a file on an internal mount that Landlock lets through), and sockets of families the
 * cgroup sock_create hook never runs for (vsock, packet, netlink other than NETLINK_ROUTE, ...).
 */
export type Hardening = "memfd-exec" | "socket-families";
export const HARDENING: readonly Hardening[] = ["memfd-exec", "socket-families"];

export function hardeningBackends(p: ProbeResult): Record<Hardening, CapabilityBackend> {
  if (!p.seccomp) {
    const why = `the launcher's seccomp filter does not work here${p.errors.seccomp ? `: ${p.errors.seccomp}` : ""}`;
    return {
      "memfd-exec": { backend: null, detail: why },
      "socket-families": { backend: null, detail: why },
    };
  }
  return {
    "memfd-exec": {
      backend: "seccomp",
      detail: "memfd_create only with MFD_NOEXEC_SEAL (else ENOSYS); no execveat of a descriptor (EACCES)",
    },
    "socket-families": {
      backend: "seccomp",
      detail: "socket() and socketpair() for unix, inet, inet6 and netlink route only (else EAFNOSUPPORT)",
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
    lsm: false,
    seccomp: false,
    errors: {},
  };
  if (!existsSync(bins.launcher)) {
    result.errors.landlock = `${bins.launcher} is not built (make -C bpf)`;
  } else {
    try {
      const { stdout } = await run(bins.launcher, ["--probe"], { timeout: 5000 });
      const parsed = JSON.parse(stdout) as {
        landlockAbi: number;
        error?: string;
        seccomp?: boolean;
        seccompError?: string;
      };
      result.landlockAbi = parsed.landlockAbi;
      result.seccomp = parsed.seccomp === true;
      if (parsed.error) result.errors.landlock = parsed.error;
      if (parsed.seccompError) result.errors.seccomp = parsed.seccompError;
    } catch (error) {
      result.errors.landlock = (error as Error).message;
    }
  }
  if (!existsSync(bins.loader)) {
    result.errors.cgroupBpf = `${bins.loader} is not built (make -C bpf)`;
    return result;
  }
  try {
    const { stdout } = await run(bins.loader, ["--probe"], { timeout: 20_000 });
    const parsed = JSON.parse(stdout) as Partial<ProbeResult> & { errors?: Record<string, string> };
    result.cgroupBpf = parsed.cgroupBpf === true;
    result.tpBtf = parsed.tpBtf === true;
    result.lsm = parsed.lsm === true;
    Object.assign(result.errors, parsed.errors ?? {});
  } catch (error) {
    result.errors.cgroupBpf = (error as Error).message;
  }
  return result;
}
