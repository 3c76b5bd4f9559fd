/**
 * Where the launcher, the loader and the reaper are, in this order:
 * - `$MCPGUARD_BPF_DIR`, when set: an explicit choice wins, taken as it is (no architecture check);
 * - the build a packed mcpguard carries (`npm --prefix packages/proxy run pack:bin`):
 *   `<package>/bpf/<machine>/`, described by `<package>/bpf/kernel-layer.json`;
 * - `bpf/.output/` of the checkout this module is in.
 * Both are found from this module's own file upwards (in the packed bundle, its file is a path
 * inside the package: bundle.mjs). Never from the working directory: these run as root, and a
 * folder someone hands you may hold a `bpf/.output/mcpguard-exec` of theirs.
 * Loaded on its own (`@mcpguard/kernel/binaries`) by configs without L3.
 */
import { existsSync, readFileSync } from "node:fs";
import { machine } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isRecord } from "@mcpguard/protocol";

/** The file a packed package describes its kernel layer in, under `<package>/bpf/`. */
export const KERNEL_LAYER_MANIFEST = "kernel-layer.json";
/** The files the kernel layer runs, by their names in the build folder. */
export const KERNEL_LAYER_FILES = ["mcpguard-exec", "mcpguard-loader", "mcpguard-reaper"] as const;

/** What `<package>/bpf/kernel-layer.json` says of one build (packages/proxy/pack-kernel.mjs). */
export interface PackedBuild {
  /** The folder under `<package>/bpf/` that holds it. */
  dir: string;
  [fact: string]: unknown;
}

/**
 * The builds `<package>/bpf/kernel-layer.json` carries, by architecture, or why it is not such a
 * manifest. Checked by hand, not with a zod schema: the loader is spawned from here before zod loads.
 */
function packedBuilds(value: unknown): { builds: Record<string, PackedBuild> } | { damaged: string } {
  if (!isRecord(value)) return { damaged: "not a JSON object" };
  if (value.builds === undefined) return { builds: {} };
  if (!isRecord(value.builds)) return { damaged: "builds is not an object" };
  const builds: Record<string, PackedBuild> = {};
  for (const [arch, build] of Object.entries(value.builds)) {
    if (!isRecord(build) || typeof build.dir !== "string")
      return { damaged: `builds.${arch}.dir is not a folder name` };
    builds[arch] = { ...build, dir: build.dir };
  }
  return { builds };
}

export interface Binaries {
  dir: string;
  launcher: string;
  loader: string;
  reaper: string;
  /** Which place they come from. */
  source: "MCPGUARD_BPF_DIR" | "package" | "checkout" | "none";
  /** With source "package": what the package says of the build. */
  packed?: PackedBuild;
  /** Why none of them can run here (a package packed for another machine, or no build at all). */
  unusable?: string;
}

type Located = Omit<Binaries, "launcher" | "loader" | "reaper">;

function moduleDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * The nearest package (a `bpf/kernel-layer.json`) or checkout (a `bpf/Makefile`) above `start`,
 * and what it holds for `arch` (os.machine()). Exported for the tests; binaries() is what to call.
 */
export function locateBinaries(start: string, arch: string): Located {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, "bpf", KERNEL_LAYER_MANIFEST);
    if (existsSync(manifest)) return packaged(join(dir, "bpf"), manifest, arch);
    if (existsSync(join(dir, "bpf", "Makefile")))
      return { dir: join(dir, "bpf", ".output"), source: "checkout" };
    if (dirname(dir) === dir) break;
  }
  return {
    dir: join(start, "bpf", ".output"),
    source: "none",
    unusable:
      "no build of the kernel layer found: this mcpguard is neither a package that carries one nor in a " +
      "checkout; build bpf/ (make -C bpf) and set MCPGUARD_BPF_DIR to its .output folder",
  };
}

function packaged(bpf: string, manifest: string, arch: string): Located {
  let builds: Record<string, PackedBuild> = {};
  let damaged: string | undefined;
  try {
    const read = packedBuilds(JSON.parse(readFileSync(manifest, "utf8")));
    if ("builds" in read) builds = read.builds;
    else damaged = read.damaged;
  } catch (error) {
    // Unreadable or not JSON: the package's kernel layer is reported damaged, with why.
    damaged = error instanceof Error ? error.message : String(error);
  }
  const build = Object.hasOwn(builds, arch) ? builds[arch] : undefined;
  if (build && typeof build.dir === "string" && !damaged)
    return { dir: join(bpf, build.dir), source: "package", packed: build };
  const carried = Object.keys(builds);
  return {
    dir: join(bpf, arch),
    source: "package",
    unusable: damaged
      ? `this mcpguard package's ${manifest} cannot be read (${damaged}); reinstall it`
      : `this mcpguard package carries its kernel layer for ${carried.join(", ") || "no machine"} only, and this ` +
        `machine is ${arch}: pack it on ${arch} (npm --prefix packages/proxy run pack:bin), or build bpf/ ` +
        "here (make -C bpf) and set MCPGUARD_BPF_DIR to its .output folder",
  };
}

let located: Located | undefined;

export function binaries(): Binaries {
  const override = process.env.MCPGUARD_BPF_DIR;
  if (!override && !located) located = locateBinaries(moduleDir(), machine());
  const where: Located = override ? { dir: override, source: "MCPGUARD_BPF_DIR" } : (located as Located);
  return {
    ...where,
    launcher: join(where.dir, "mcpguard-exec"),
    loader: join(where.dir, "mcpguard-loader"),
    reaper: join(where.dir, "mcpguard-reaper"),
  };
}

/** Why `file`, one of `bins`, is not there, in the words of where it was looked for. */
export function whyAbsent(bins: Binaries, file: string): string {
  if (bins.unusable) return bins.unusable;
  if (bins.source === "package") return `${file} is missing from this mcpguard package; reinstall it`;
  return `${file} is not built (make -C bpf)`;
}
