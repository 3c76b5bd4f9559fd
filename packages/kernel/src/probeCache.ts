/**
 * The probe's cache entry: keyed by everything its answer depends on (the boot, the kernel
 * release, the caller, and the identity of the launcher and loader that answered), so two
 * checkouts or two builds never share or overwrite an entry, and read back only through the
 * schema of a probe result.
 */
import { readFileSync, statSync } from "node:fs";
import { release } from "node:os";
import { type CacheKey, cacheKey, readCache, writeCache } from "@mcpguard/protocol";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import type { binaries } from "./binaries.js";

export interface ProbeResult {
  root: boolean;
  landlockAbi: number;
  cgroupBpf: boolean;
  tpBtf: boolean;
  /** The cgroup unix socket programs load and attach (kernel 6.7): pathname sockets are mediated. */
  unixBpf: boolean;
  lsm: boolean;
  /** The launcher's seccomp filter installs and refuses what it must (memfd exec, socket families, ...). */
  seccomp: boolean;
  /** The launcher can give the server IPC and network namespaces of its own (CAP_SYS_ADMIN). */
  namespaces: boolean;
  /** The launcher can start the server in PID and mount namespaces of its own, over a /proc of their own. */
  pidNamespace: boolean;
  /**
   * Why something is unavailable, by what was tried; `launcher` and `loader` when that program
   * could not be run at all (not built, or built for another machine than this one).
   */
  errors: Record<string, string>;
}

const NAMESPACE = "probe";
/** Changes when the entry's layout changes, so an older layout is never read. */
const FORMAT = "probe-result/6";

/** Typed against ProbeResult: a field added there and not here fails the typecheck. */
const ProbeResultSchema: z.ZodMiniType<ProbeResult> = z.strictObject({
  root: z.boolean(),
  landlockAbi: z.int().check(z.nonnegative()),
  cgroupBpf: z.boolean(),
  tpBtf: z.boolean(),
  unixBpf: z.boolean(),
  lsm: z.boolean(),
  seccomp: z.boolean(),
  namespaces: z.boolean(),
  pidNamespace: z.boolean(),
  errors: z.record(z.string(), z.string()),
});

/** A binary as it is on disk now: a rebuild, a copy or another checkout is another identity. */
function identity(file: string): string {
  try {
    const st = statSync(file);
    return `${file} dev=${st.dev} ino=${st.ino} size=${st.size} mtime=${st.mtimeMs} ctime=${st.ctimeMs}`;
  } catch {
    // A missing binary is part of the identity, as absent.
    return `${file} absent`;
  }
}

/** The cache key of a probe by these binaries, or null (no caching) without a boot id. */
export function probeCacheKey(bins: ReturnType<typeof binaries>): CacheKey | null {
  let bootId: string;
  try {
    bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // No boot id: no cache key, so the probe runs each time.
    return null;
  }
  const uid = String(process.getuid?.() ?? "");
  return cacheKey(FORMAT, bootId, release(), uid, identity(bins.launcher), identity(bins.loader));
}

export function readProbeCache(key: CacheKey): ProbeResult | undefined {
  return readCache(NAMESPACE, key, ProbeResultSchema);
}

export function writeProbeCache(key: CacheKey, result: ProbeResult): void {
  writeCache(NAMESPACE, key, result);
}
