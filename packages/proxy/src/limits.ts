/**
 * Resource limits of a server's cgroup: how many tasks (processes and threads) it may have and how
 * much memory it may charge, so a fork bomb or a memory hog fails inside the server's cgroup
 * instead of taking the host, the proxy or the client with it.
 *
 * Each limit is set where the kernel can enforce it for the server's cgroup:
 *   cgroup-v2  the controller is enabled in the proxy's cgroup's subtree_control (or can be):
 *              pids.max and memory.max (and memory.swap.max 0) in the server's cgroup;
 *   cgroup-v1  the controller is mounted as a v1 hierarchy (hybrid hosts such as this one): a
 *              cgroup `mcpguard-...` beneath the proxy's own cgroup of that hierarchy, with
 *              pids.max or memory.limit_in_bytes (and memory.memsw.limit_in_bytes), which the
 *              server joins before it execs;
 *   none       neither: the start event and `mcpguard doctor` say why.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { totalmem } from "node:os";
import { join } from "node:path";
import { underMountRoot } from "./cgroupMount.js";

export interface Limits {
  /** Tasks (processes and threads) the server's cgroup may hold. */
  pids: number;
  /** Memory the server's cgroup may charge, in bytes. */
  memoryBytes: number;
  /**
   * The size any one file the server writes may reach, in bytes (RLIMIT_FSIZE: a write past it fails
   * with EFBIG). No default: most servers write no file, and a size that suits one breaks another.
   */
  fileBytes?: number;
}

/** What the server runs under: each limit, and the mechanism that enforces it (or why none). */
export interface LimitsInfo {
  pidsMax: number;
  memoryMaxBytes: number;
  pids: string;
  memory: string;
  /** The size cap of each file (RLIMIT_FSIZE, set where the server is started), when one is asked for. */
  fileMaxBytes?: number;
}

/**
 * What limits what a server writes, as a line for `mcpguard doctor` and the docs: a file's size, and
 * never the total a server may write to a folder of the host, which needs filesystem quotas.
 */
export const WRITE_LIMITS =
  "each file at most limits.fileBytes (RLIMIT_FSIZE, EFBIG past it) where the policy sets it; no total per folder: a quota on a host folder needs filesystem (project) quotas, which mcpguard does not set up";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * 1024 tasks: a Node or Python server runs 10-20 threads, and a tool that starts a pool of
 * workers stays far below, while a fork bomb stops long before the host's pid space (pid_max,
 * 4 million here) or the user's process limit run out. 4 GiB of memory, or half of the host's
 * RAM where that is less: more than any of the 14 servers needs, and enough headroom that the
 * kernel's OOM killer acts inside the server's cgroup before the host as a whole runs short.
 */
export function defaultLimits(): Limits {
  return { pids: 1024, memoryBytes: Math.min(4 * GiB, Math.floor(totalmem() / 2 / MiB) * MiB) };
}

const MAX_PIDS = 4_194_304;
const BYTES_FORM = /^\d+(?:[KMG](?:i?B)?)?$/i;

export class LimitsError extends Error {
  override readonly name = "LimitsError";
}

function refuse(flag: string, value: string, why: string): never {
  throw new LimitsError(`--${flag}: ${why} (got "${value}")`);
}

/** A whole number in [min, max], read as Number() reads it (zod's coerce, without loading zod on the start path). */
function wholeNumber(n: number, flag: string, value: string, min: number, max: number): number {
  if (!Number.isFinite(n)) refuse(flag, value, `Invalid input: expected number, received ${n}`);
  if (!Number.isInteger(n)) refuse(flag, value, "Invalid input: expected int, received number");
  if (n < min) refuse(flag, value, `Too small: expected number to be >=${min}`);
  if (n > max) refuse(flag, value, `Too big: expected number to be <=${max}`);
  return n;
}

function parsePids(value: string): number {
  return wholeNumber(Number(value), "pids-max", value, 1, MAX_PIDS);
}

/** Bytes, or a number with a binary unit: 512M, 4G, 65536K (also KiB, MiB, GiB). */
function parseBytes(value: string, flag = "memory-max"): number {
  if (!BYTES_FORM.test(value))
    refuse(flag, value, "expected bytes, or a number with K, M or G (binary units)");
  const unit = value.replace(/^\d+/, "").charAt(0).toUpperCase();
  const n = Number.parseInt(value, 10) * ({ K: 1024, M: MiB, G: GiB }[unit] ?? 1);
  if (Number.isInteger(n) && n < MiB) refuse(flag, value, "at least 1 MiB");
  return wholeNumber(n, flag, value, MiB, Number.MAX_SAFE_INTEGER);
}

/** The limits to apply: the flags win over the policy (or manifest), which wins over the defaults. */
export function resolveLimits(
  flags: { pidsMax?: string; memoryMax?: string; fileSizeMax?: string },
  fromPolicy: { pids?: number; memoryBytes?: number; fileBytes?: number } = {},
): Limits {
  const defaults = defaultLimits();
  const fileBytes =
    flags.fileSizeMax !== undefined ? parseBytes(flags.fileSizeMax, "file-size-max") : fromPolicy.fileBytes;
  return {
    pids: flags.pidsMax !== undefined ? parsePids(flags.pidsMax) : (fromPolicy.pids ?? defaults.pids),
    memoryBytes:
      flags.memoryMax !== undefined
        ? parseBytes(flags.memoryMax)
        : (fromPolicy.memoryBytes ?? defaults.memoryBytes),
    ...(fileBytes !== undefined ? { fileBytes } : {}),
  };
}

type Controller = "pids" | "memory";

/** The v1 hierarchy of a controller: its mount point and this process's cgroup in it. */
function v1Hierarchy(controller: Controller): { mount: string; self: string } | undefined {
  let mountinfo: string;
  let cgroups: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    cgroups = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    // No /proc: no cgroup v1 limits to find.
    return undefined;
  }
  const self = cgroups
    .split("\n")
    .map((line) => line.split(":"))
    .find(([id, names]) => id !== "0" && names?.split(",").includes(controller))?.[2];
  if (self === undefined) return undefined;
  for (const [head, tail] of mountinfo.split("\n").map((line) => line.split(" - "))) {
    const [fstype, , superOptions] = tail?.split(" ") ?? [];
    if (fstype !== "cgroup" || !superOptions?.split(",").includes(controller)) continue;
    const fields = head?.split(" ") ?? [];
    // A bind mount of a subtree holds this process's cgroup below its own root, or not at all.
    const relative = underMountRoot(self, fields[3] ?? "");
    if (fields[4] && relative !== undefined) return { mount: fields[4], self: relative };
  }
  return undefined;
}

/** The cgroup-v1 directories (pids, memory) this process's limit cgroups are made in, where mounted. */
export function v1LimitParents(): string[] {
  return (["pids", "memory"] as const)
    .map(v1Hierarchy)
    .filter((h): h is { mount: string; self: string } => h !== undefined)
    .map((h) => join(h.mount, h.self));
}

const read = (file: string) => readFileSync(file, "utf8").trim().split(/\s+/);

/** Make a v2 controller available to the server's cgroup: true, or why not. */
function enableV2(parent: string, controller: Controller): true | string {
  try {
    if (!read(join(parent, "cgroup.controllers")).includes(controller))
      return `cgroup v2 has no ${controller} controller here`;
    if (!read(join(parent, "cgroup.subtree_control")).includes(controller))
      writeFileSync(join(parent, "cgroup.subtree_control"), `+${controller}`);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EBUSY"
      ? `cgroup v2 cannot enable ${controller} beneath the proxy's cgroup, which holds processes`
      : `cgroup v2 ${controller}: ${(error as Error).message}`;
  }
}

function writeV2(leaf: string, controller: Controller, limits: Limits): void {
  if (controller === "pids") {
    writeFileSync(join(leaf, "pids.max"), String(limits.pids));
    return;
  }
  writeFileSync(join(leaf, "memory.max"), String(limits.memoryBytes));
  if (existsSync(join(leaf, "memory.swap.max"))) writeFileSync(join(leaf, "memory.swap.max"), "0");
}

function writeV1(dir: string, controller: Controller, limits: Limits): void {
  if (controller === "pids") {
    writeFileSync(join(dir, "pids.max"), String(limits.pids));
    return;
  }
  writeFileSync(join(dir, "memory.limit_in_bytes"), String(limits.memoryBytes));
  // Without swap accounting there is no memsw file, and no swap to escape to either.
  if (existsSync(join(dir, "memory.memsw.limit_in_bytes")))
    writeFileSync(join(dir, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
}

/**
 * Set the limits for the server's cgroup `leaf` (a child of `parent`, both cgroup2 directories):
 * per controller through cgroup v2 where it can, else through a v1 cgroup named `name` (created
 * here; the server must join it, and it must be removed after). Returns what enforces each limit
 * and the v1 cgroups created.
 */
export function applyLimits(
  parent: string,
  leaf: string,
  name: string,
  limits: Limits,
): { info: LimitsInfo; v1: string[] } {
  const via: Record<Controller, string> = { pids: "", memory: "" };
  const v1: string[] = [];
  for (const controller of ["pids", "memory"] as const) {
    const v2 = enableV2(parent, controller);
    try {
      if (v2 === true) {
        writeV2(leaf, controller, limits);
        via[controller] = "cgroup-v2";
        continue;
      }
      const hierarchy = v1Hierarchy(controller);
      if (!hierarchy) {
        via[controller] = `none (${v2}, and no cgroup v1 ${controller} hierarchy is mounted)`;
        continue;
      }
      const dir = join(hierarchy.mount, hierarchy.self, name);
      if (!v1.includes(dir)) {
        mkdirSync(dir);
        v1.push(dir);
      }
      writeV1(dir, controller, limits);
      via[controller] = "cgroup-v1";
    } catch (error) {
      via[controller] = `none (${controller}: ${(error as Error).message})`;
    }
  }
  return {
    info: {
      pidsMax: limits.pids,
      memoryMaxBytes: limits.memoryBytes,
      pids: via.pids,
      memory: via.memory,
      ...(limits.fileBytes !== undefined ? { fileMaxBytes: limits.fileBytes } : {}),
    },
    v1,
  };
}

/** No cgroup of its own (not root, or no writable cgroup2 hierarchy): nothing can be enforced. */
export function noLimits(limits: Limits, why: string): LimitsInfo {
  return {
    pidsMax: limits.pids,
    memoryMaxBytes: limits.memoryBytes,
    pids: `none (${why})`,
    memory: `none (${why})`,
    // A process limit, not a cgroup's: it holds without a cgroup.
    ...(limits.fileBytes !== undefined ? { fileMaxBytes: limits.fileBytes } : {}),
  };
}

/** One line for people: "pids 1024 (cgroup-v1), memory 4 GiB (cgroup-v1)". */
export function describeLimits(info: LimitsInfo): string {
  const size = (bytes: number) =>
    bytes % GiB === 0 ? `${bytes / GiB} GiB` : `${Math.round(bytes / MiB)} MiB`;
  const files = info.fileMaxBytes !== undefined ? `, each file ${size(info.fileMaxBytes)} (rlimit)` : "";
  return `pids ${info.pidsMax} (${info.pids}), memory ${size(info.memoryMaxBytes)} (${info.memory})${files}`;
}

/**
 * The shell words that cap the size of every file a process writes, for a `/bin/sh -c` script:
 * `ulimit -f` counts 512-byte blocks in a POSIX shell (dash, and bash as sh), so the cap is rounded
 * down to one; SIGXFSZ ignored, which exec keeps, so a write past it fails with EFBIG instead of
 * killing the writer.
 */
export function fileSizeWords(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  return `ulimit -f ${Math.max(1, Math.floor(bytes / 512))} && trap '' XFSZ && `;
}
