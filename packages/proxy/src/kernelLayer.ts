/**
 * L3 for one server start, in two steps:
 * - prepareKernelLayer(), first thing: spawn the BPF loader for the cgroup the server will have,
 *   which it opens only once it has read its policy, then probe the backends and refuse (fail
 *   closed) when a capability has none. Its programs verify while the policy loads and the cgroup
 *   is made.
 * - startKernelLayer(), once the layers and the server's containment are built: the kernel guard
 *   on that cgroup, with the policy compiled for the loader and the launcher.
 * The kernel package is loaded only by configs that use it.
 */
import { existsSync } from "node:fs";
import type { KernelEvent, KernelNeeds, PendingLoader } from "@mcpguard/kernel";
import type { HelperLauncher } from "@mcpguard/readers";
import type { Containment } from "./containment.js";
import { canonical, within } from "./guardFiles.js";
import { LayerSetupError } from "./layers.js";
import { confinedHelper } from "./pythonReader.js";

export interface KernelLayer {
  /** Start the server confined: what its command resolved to, through the launcher. */
  launch: (argv: readonly string[]) => { argv: string[]; fd3?: string };
  /** What a launcher started early (KernelLayerOptions.onLauncher) reads on fd 3 when released. */
  ruleset: string | undefined;
  /** The backend of each capability, and what the compilation approximated. */
  startInfo: Record<string, unknown>;
  /** How the Python reader's helper starts confined (with Landlock; pythonReader.ts). */
  readerLauncher?: HelperLauncher;
  stop: () => Promise<void>;
}

type Kernel = typeof import("@mcpguard/kernel");

/** What prepareKernelLayer() found and started: pass it to startKernelLayer(), or abort() it. */
export interface PreparedKernelLayer {
  kernel: Kernel;
  probe: Awaited<ReturnType<Kernel["probeBackends"]>>;
  backends: ReturnType<Kernel["capabilityBackends"]> & ReturnType<Kernel["hardeningBackends"]>;
  /** The loader, when there is a cgroup to plan for and a backend that needs it. */
  loader: PendingLoader | undefined;
  /** The server will not start: kill the loader. */
  abort(): void;
}

/**
 * Spawn the loader for `cgroup`, the server's cgroup to be (containment.ts, plannedCgroupPath), when
 * one is planned; then probe the backends and refuse what cannot be enforced. The loader is spawned
 * before the probe (whose cache read loads the kernel package and zod, about 10 ms), as the probe
 * usually answers on this kind of host: without the BPF LSM programs. It attaches nothing before
 * the cgroup exists, which `run` makes only once this has returned (makeCgroupAhead), so when the
 * probe answers otherwise it is killed with nothing attached, and one with --lsm started, or none
 * where the loader cannot run.
 */
export async function prepareKernelLayer(options: {
  allowPartial: boolean;
  cgroup: string | undefined;
  onStep?: (step: string) => void;
}): Promise<PreparedKernelLayer> {
  const { binaries } = await import("@mcpguard/kernel/binaries");
  const bins = binaries();
  // No launcher to start the server with at all (another machine's build, or none): nothing to
  // leave partial, so --l3-allow-partial does not apply.
  if (bins.unusable) throw new LayerSetupError(`needs L3, but ${bins.unusable}`);
  const { PendingLoader } = await import("@mcpguard/kernel/loader");
  let loader =
    options.cgroup !== undefined && existsSync(bins.loader)
      ? new PendingLoader({ cgroup: options.cgroup, lsm: false, unix: true })
      : undefined;
  if (loader) options.onStep?.("loaderSpawned");
  const abort = () => loader?.abort();
  try {
    const kernel = await import("@mcpguard/kernel");
    const probe = await kernel.probeBackends();
    options.onStep?.("probed");
    const backends = { ...kernel.capabilityBackends(probe), ...kernel.hardeningBackends(probe) };
    const names = [...kernel.CAPABILITIES, ...kernel.HARDENING];
    const missing = names.filter((c) => backends[c].backend === null);
    if (missing.length > 0 && !options.allowPartial) {
      const why = missing.map((c) => `${c}: ${backends[c].detail}`).join("; ");
      throw new LayerSetupError(
        `needs L3 enforcement of ${missing.join(", ")}, which no backend provides here (${why}); ` +
          "see `mcpguard doctor`, or pass --l3-allow-partial to run with those left open",
      );
    }
    if (
      loader &&
      (backends.net.backend === null || loader.lsm !== probe.lsm || loader.unix !== probe.unixBpf)
    ) {
      loader.abort();
      loader =
        backends.net.backend !== null && options.cgroup !== undefined
          ? new PendingLoader({ cgroup: options.cgroup, lsm: probe.lsm, unix: probe.unixBpf })
          : undefined;
    }
    return { kernel, probe, backends, loader, abort };
  } catch (error) {
    abort();
    throw error;
  }
}

export interface KernelLayerOptions {
  config: string;
  /** From prepareKernelLayer(), which this call takes over (it aborts it on failure). */
  prepared: PreparedKernelLayer;
  needs: KernelNeeds;
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  /**
   * The proxy's environment and working directory, in which a launcher (npx, a pyenv shim) is
   * resolved before confinement: npm's and pyenv's settings are the user's, not the server's.
   */
  launcherEnv: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * Why the server may write a path (guardFiles.ts, writeReach): what the launcher runs here, outside
   * the sandbox, and the settings it reads, must not be the server's.
   */
  writable: (path: string) => string | undefined;
  /**
   * Files the server must not read (the audit key), checked against the compiled ruleset, which
   * holds more than the policy's reads: what the server's interpreter, script and environment add.
   */
  secrets?: readonly { path: string; what: string; advice: string }[];
  /** The server's containment: it must be a cgroup. The caller disposes of it. */
  containment: Containment;
  onEvent: (event: KernelEvent) => void;
  /** The loader died under a running server: the server must be stopped (fail closed). */
  onLoaderLost: (how: string) => void;
  /**
   * Once the loader is on its way, the launcher can be: its argv, when it holds on fd 3 until
   * released with the ruleset (with Landlock; not called without, where it would not hold).
   */
  onLauncher?: (launch: (argv: readonly string[]) => { argv: string[] }) => void;
  /** Each step of the kernel layer's start as it is reached (or at the time given), for the start record. */
  onStep?: (step: string, at?: number) => void;
  /** Whom the server's DNS resolver asks (`--dns-upstream`); default the host's name servers. */
  dnsUpstream?: readonly import("@mcpguard/kernel").Upstream[];
}

/** The namespaces the launcher gives the server, from the backends the probe found. */
function isolationOf(
  backends: PreparedKernelLayer["backends"],
  network: boolean,
): { ipc: boolean; net: boolean; pid: boolean } {
  return {
    ipc: backends["sysv-ipc"].backend === "ipc-namespace",
    // A network namespace leaves the server nothing but its loopback: only where it may reach nothing.
    net: backends["abstract-unix-bind"].backend === "net-namespace" && !network,
    // PID and mount namespaces with a /proc of the server's own, which the ruleset then grants
    // read-only. MCPGUARD_NO_PRIVATE_PROC=1 turns them off, for measuring what they cost only:
    // /proc is then denied whole, as where they cannot be made.
    pid: backends.procfs.backend === "pid-namespace" && process.env.MCPGUARD_NO_PRIVATE_PROC !== "1",
  };
}

/** How the launcher starts the server: with Landlock, seccomp, namespaces and a file size cap where they hold. */
function launchOf(options: KernelLayerOptions) {
  const { backends } = options.prepared;
  return {
    landlock: backends.file.backend !== null,
    seccomp: backends["memfd-exec"].backend !== null,
    isolate: isolationOf(backends, options.needs.network.length > 0),
    fileBytes: options.containment.limits?.fileMaxBytes,
  };
}

/**
 * The backend of a hardening capability in this run: /proc is Landlock's (denied whole) where its
 * private one is not made, and a file's metadata is left open without the mount namespace.
 */
function hardeningBackend(
  backends: PreparedKernelLayer["backends"],
  isolate: { pid: boolean },
  c: keyof PreparedKernelLayer["backends"],
): string {
  if (c === "procfs" && backends.procfs.backend === "pid-namespace" && !isolate.pid) return "landlock";
  if (c === "file-metadata" && !isolate.pid) return "none";
  return backends[c].backend ?? "none";
}

/**
 * Refuse the start, before anything is loaded for it, when a secret lies beneath a path the
 * ruleset's file rules (`plan`, which the ruleset is then compiled from) let the server read: its
 * interpreter's and script's reads included.
 */
function secretsOutOfReach(
  options: Pick<KernelLayerOptions, "secrets">,
  plan: { fs: ReadonlyMap<string, ReadonlySet<string>> },
): void {
  if (!options.secrets?.length) return;
  const readable = [...plan.fs].filter(([, r]) => r.has("read_file") || r.has("read_dir")).map(([p]) => p);
  for (const secret of options.secrets) {
    const at = canonical(secret.path);
    const rule = readable.find((path) => within(at, canonical(path)));
    if (rule)
      throw new LayerSetupError(
        `the ${secret.what} ${secret.path} lies in ${rule}, which the kernel's ruleset lets the server read (its interpreter's, script's or environment's files included): ${secret.advice}`,
      );
  }
}

/** What the start record's `l3Notes` say: the ruleset's notes, the launcher's, and what a network grant leaves open. */
function startNotes(
  options: KernelLayerOptions,
  compiled: readonly string[],
  launcher: readonly string[] | undefined,
): string[] {
  const notes = [...compiled, ...(launcher ?? [])];
  if (options.needs.network.length > 0 && options.prepared.backends["abstract-unix-bind"].backend !== null)
    notes.push(
      "the policy grants network, so the server shares the host's network namespace: the abstract unix socket names it binds are the host's",
    );
  return notes;
}

export async function startKernelLayer(options: KernelLayerOptions): Promise<KernelLayer> {
  const { kernel, probe, backends, loader } = options.prepared;
  const { containment } = options;
  if (containment.kind !== "cgroup" || !containment.cgroupPath) {
    options.prepared.abort();
    throw new LayerSetupError(
      "L3 needs a cgroup of its own for the server: run as root on a host with a writable cgroup2 hierarchy",
    );
  }
  const cgroup = containment.cgroupPath;
  const launch = launchOf(options);
  const isolate = launch.isolate;
  try {
    // The launcher runs here, unconfined; the server it would start runs confined.
    const resolved = await kernel.resolveLaunch(options.argv, {
      env: options.launcherEnv,
      cwd: options.cwd,
      writable: options.writable,
    });
    // The file rules read once: what is judged here is what the ruleset is compiled from.
    const plan = kernel.planAccess(options.needs, resolved.argv, options.env);
    secretsOutOfReach(options, plan);
    const guard = await kernel.KernelGuard.start({
      cgroup,
      needs: options.needs,
      argv: resolved.argv,
      env: options.env,
      plan,
      lsm: probe.lsm,
      loader,
      onEvent: options.onEvent,
      onLoaderLost: options.onLoaderLost,
      withoutLoader: backends.net.backend === null,
      dnsUpstream: options.dnsUpstream,
      withoutLandlock: !launch.landlock,
      seccomp: launch.seccomp,
      isolate,
      fileBytes: launch.fileBytes,
      onStep: options.onStep,
      onLoaderSpawned: () => {
        if (!launch.landlock || !options.onLauncher) return;
        const argv = kernel.KernelGuard.launchArgv(resolved.argv, cgroup, containment.v1Paths, launch);
        options.onLauncher(() => ({ argv }));
      },
    });
    // The loader opened the cgroup by its path: it must be the one the proxy made, not one put there since.
    if (containment.cgroupId !== undefined && guard.cgroupId !== containment.cgroupId) {
      throw new LayerSetupError(
        `the BPF loader attached to cgroup ${guard.cgroupId}, not to the server's (${containment.cgroupId} at ${cgroup})`,
      );
    }
    const notes = startNotes(options, guard.compiled.notes, resolved.notes);
    return {
      launch: () => guard.launch(resolved.argv, cgroup, containment.v1Paths),
      ruleset: guard.ruleset,
      readerLauncher: launch.landlock
        ? confinedHelper(kernel, {
            seccomp: launch.seccomp,
            isolateNet: backends["abstract-unix-bind"].backend === "net-namespace",
          })
        : undefined,
      startInfo: {
        ...(resolved.via ? { launcher: resolved.via, launched: resolved.argv } : {}),
        l3: Object.fromEntries(kernel.CAPABILITIES.map((c) => [c, backends[c].backend ?? "none"])),
        l3Hardening: Object.fromEntries(
          kernel.HARDENING.map((c) => [c, hardeningBackend(backends, isolate, c)]),
        ),
        ...(notes.length ? { l3Notes: notes } : {}),
      },
      stop: () => guard.stop(),
    };
  } catch (error) {
    options.prepared.abort();
    if (error instanceof kernel.KernelSetupError) throw new LayerSetupError(error.message);
    if (error instanceof kernel.LaunchError) throw new LayerSetupError(`under L3: ${error.message}`);
    throw error;
  }
}
