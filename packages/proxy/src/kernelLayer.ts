/**
 * L3 for one server start: probe the backends, refuse (fail closed) when a capability the config
 * needs has none, then start the kernel guard on the server's cgroup (the caller's containment).
 * The kernel package is loaded only by configs that use it.
 */
import type { KernelEvent, KernelNeeds } from "@mcpguard/kernel";
import type { AuditEvent } from "./audit.js";
import type { Containment } from "./containment.js";
import { LayerSetupError } from "./layers.js";

export interface KernelLayer {
  /** Start the server confined: what its command resolved to, through the launcher. */
  launch: (argv: readonly string[]) => { argv: string[]; fd3?: string };
  /** What a launcher started early (KernelLayerOptions.onLauncher) reads on fd 3 when released. */
  ruleset: string | undefined;
  /** The backend of each capability, and what the compilation approximated. */
  startInfo: Record<string, unknown>;
  stop: () => Promise<void>;
}

export interface KernelLayerOptions {
  config: string;
  needs: KernelNeeds;
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  /**
   * The proxy's environment and working directory, in which a launcher (npx, a pyenv shim) is
   * resolved before confinement: npm's and pyenv's settings are the user's, not the server's.
   */
  launcherEnv: NodeJS.ProcessEnv;
  cwd: string;
  /** The operator accepts running with the capabilities no backend enforces left open. */
  allowPartial: boolean;
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
}

/** A kernel event as an audit log line. */
export function kernelAuditEvent(event: KernelEvent, server: string, config: string): AuditEvent {
  const { type, ...rest } = event;
  const decision = type === "deny" || type === "denied" ? "deny" : "observe";
  return { ...rest, type: "kernel", event: type, decision, server, config };
}

export async function startKernelLayer(options: KernelLayerOptions): Promise<KernelLayer> {
  const kernel = await import("@mcpguard/kernel");
  const probe = await kernel.probeBackends();
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
  const { containment } = options;
  if (containment.kind !== "cgroup" || !containment.cgroupPath) {
    throw new LayerSetupError(
      "L3 needs a cgroup of its own for the server: run as root on a host with a writable cgroup2 hierarchy",
    );
  }
  const cgroup = containment.cgroupPath;
  try {
    // The launcher runs here, unconfined; the server it would start runs confined.
    const resolved = await kernel.resolveLaunch(options.argv, { env: options.launcherEnv, cwd: options.cwd });
    const guard = await kernel.KernelGuard.start({
      cgroup,
      needs: options.needs,
      argv: resolved.argv,
      env: options.env,
      lsm: probe.lsm,
      onEvent: options.onEvent,
      onLoaderLost: options.onLoaderLost,
      withoutLoader: backends.net.backend === null,
      withoutLandlock: backends.file.backend === null,
      seccomp: backends["memfd-exec"].backend !== null,
      onLoaderSpawned: () => {
        if (backends.file.backend === null || !options.onLauncher) return;
        const argv = kernel.KernelGuard.launchArgv(resolved.argv, cgroup, containment.v1Paths, {
          landlock: true,
          seccomp: backends["memfd-exec"].backend !== null,
        });
        options.onLauncher(() => ({ argv }));
      },
    });
    return {
      launch: () => guard.launch(resolved.argv, cgroup, containment.v1Paths),
      ruleset: guard.ruleset,
      startInfo: {
        ...(resolved.via ? { launcher: resolved.via, launched: resolved.argv } : {}),
        l3: Object.fromEntries(kernel.CAPABILITIES.map((c) => [c, backends[c].backend ?? "none"])),
        l3Hardening: Object.fromEntries(kernel.HARDENING.map((c) => [c, backends[c].backend ?? "none"])),
        ...(guard.compiled.notes.length ? { l3Notes: guard.compiled.notes } : {}),
      },
      stop: () => guard.stop(),
    };
  } catch (error) {
    if (error instanceof kernel.KernelSetupError) throw new LayerSetupError(error.message);
    if (error instanceof kernel.LaunchError) throw new LayerSetupError(`under L3: ${error.message}`);
    throw error;
  }
}
