/**
 * L3 around one server: the loader attaches the BPF programs to the server's cgroup and streams
 * kernel events; the launcher joins that cgroup, applies the Landlock ruleset and the seccomp
 * filter and execs the server. The loader is ready before the server's first instruction. Its
 * cgroup socket programs are attached to the cgroup itself and hold until the cgroup is removed,
 * whatever happens to the loader; its telemetry (and, on BPF LSM hosts, LSM programs) end with it,
 * so a loader that dies under a running server still makes the caller stop the server.
 */
import type { ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { binaries } from "./binaries.js";
import { type AccessPlan, type Compiled, compile, grantedNames, type KernelNeeds } from "./compile.js";
import { type KernelEvent, KernelSetupError, PendingLoader } from "./loader.js";
import { NameResolver, type Upstream } from "./resolver.js";

export { type KernelEvent, KernelSetupError, PendingLoader };

export interface GuardOptions {
  /** The server's cgroup directory (created by the caller, empty). */
  cgroup: string;
  needs: KernelNeeds;
  /** The server's argv and environment, to find what its interpreter needs. */
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  /** planAccess() of the same needs, argv and environment, read once: the ruleset's file rules. */
  plan?: AccessPlan;
  /** Attach the BPF LSM programs too (hosts where the probe loaded one). */
  lsm: boolean;
  /**
   * Attach the pathname unix socket programs too (hosts where the probe loaded them). Default: as
   * the loader given in `loader` was started, else no.
   */
  unix?: boolean;
  onEvent: (event: KernelEvent) => void;
  /** How long the loader may take to load, verify and attach. */
  readyTimeoutMs?: number;
  /** Weaker modes the operator asked for: run without the BPF loader, or without Landlock. */
  withoutLoader?: boolean;
  withoutLandlock?: boolean;
  /** Install the launcher's seccomp filter (default true; false only where the probe says it fails). */
  seccomp?: boolean;
  /** Namespaces of the server's own the launcher makes (see {@link Isolation}). */
  isolate?: Isolation;
  /** The size any one file of the server may reach (RLIMIT_FSIZE). */
  fileBytes?: number;
  /**
   * The loader exited before stop(): its programs are detached, so the server must not go on
   * (fail closed). Called once, saying how the loader ended.
   */
  onLoaderLost?: (how: string) => void;
  /**
   * Called once the loader has been spawned (at once without one), before the policy compiles:
   * the caller may start a launcher that holds on its ruleset (see {@link KernelGuard.launchArgv}).
   */
  onLoaderSpawned?: () => void;
  /**
   * Each step of the start as it is reached, for the start record: "resolverReady", "policyCompiled",
   * "loaderLoaded" and "loaderAttached" (its programs loaded and verified, then attached: at the times
   * the loader gives), "loaderReady" (its ready event read).
   */
  onStep?: (step: string, at?: number) => void;
  /** The loader, spawned ahead (`new PendingLoader`) for the same cgroup; otherwise start() spawns it. */
  loader?: PendingLoader;
  /** Whom the server's resolver asks (resolver.ts); default the name servers of /etc/resolv.conf. */
  dnsUpstream?: readonly Upstream[];
}

/**
 * Namespaces of the server's own (bpf/launcher.c, `--isolate`): an IPC namespace, so that no SysV
 * object or POSIX message queue of the host is reachable (without one the seccomp filter refuses
 * SysV IPC), and, for a server whose policy grants no network, a network namespace with only its
 * loopback, so the abstract unix socket names it binds are its own; and PID and mount namespaces
 * with a /proc of their own (`pid`), which lists no process but the server's and its init, so the
 * ruleset grants /proc read-only.
 */
interface Isolation {
  ipc: boolean;
  net: boolean;
  pid?: boolean;
}

/** What the launcher does beyond joining the cgroups: see {@link KernelGuard.launchArgv}. */
export interface LaunchOptions {
  landlock: boolean;
  seccomp: boolean;
  isolate?: Isolation;
  /** The size any one file of the server may reach (RLIMIT_FSIZE, `--fsize`). */
  fileBytes?: number;
}

export class KernelGuard {
  private constructor(
    readonly compiled: Compiled,
    readonly cgroupId: number,
    readonly programs: string[],
    private readonly loader: ChildProcess | undefined,
    private readonly exited: Promise<void>,
    private readonly options: LaunchOptions,
    private readonly resolver?: NameResolver,
  ) {}

  static async start(options: GuardOptions): Promise<KernelGuard> {
    const launch: LaunchOptions = {
      landlock: !options.withoutLandlock,
      seccomp: options.seccomp !== false,
      isolate: options.isolate,
      fileBytes: options.fileBytes,
    };
    if (options.withoutLoader) {
      options.loader?.abort();
      options.onLoaderSpawned?.();
      const compiled = await compile(options.needs, options.argv, options.env, undefined, {
        privateProc: options.isolate?.pid === true,
        plan: options.plan,
      });
      options.onStep?.("policyCompiled");
      return new KernelGuard(
        compiled,
        statSync(options.cgroup).ino,
        [],
        undefined,
        Promise.resolve(),
        launch,
      );
    }
    // The policy travels on a pipe (fd 3): no file of the harness lands in the server's world. The
    // loader loads and verifies its programs before it reads the policy, so it starts first and
    // the policy is compiled meanwhile; it attaches them as soon as the cgroup exists (guarding
    // nothing until the policy fills their maps: every socket of the cgroup is refused till then).
    const pending = options.loader ?? new PendingLoader(options);
    if (
      pending.cgroup !== options.cgroup ||
      pending.lsm !== options.lsm ||
      (options.unix !== undefined && pending.unix !== options.unix)
    ) {
      pending.abort();
      const programs = (o: { lsm: boolean; unix?: boolean }) =>
        `${o.lsm ? " with" : " without"} LSM,${o.unix ? " with" : " without"} unix socket programs`;
      throw new KernelSetupError(
        `the BPF loader was started for ${pending.cgroup}${programs(pending)}, not for ${options.cgroup}${programs(options)}`,
      );
    }
    pending.onEvent = options.onEvent;
    const loader = pending.process;
    let resolver: NameResolver | undefined;
    try {
      options.onLoaderSpawned?.();
      // A policy that names hosts gets a resolver that answers those names only (resolver.ts),
      // which the loader sends every port-53 connect and send of the cgroup to.
      const names = grantedNames(options.needs);
      if (names.length > 0)
        resolver = await NameResolver.start({
          names,
          upstream: options.dnsUpstream,
          onEvent: options.onEvent,
        });
      if (resolver) options.onStep?.("resolverReady");
      const dns = resolver && { port: resolver.port, ipv6: resolver.ipv6, upstream: options.dnsUpstream };
      const compiled = await compile(options.needs, options.argv, options.env, dns, {
        privateProc: options.isolate?.pid === true,
        plan: options.plan,
      });
      options.onStep?.("policyCompiled");
      pending.sendPolicy(compiled.loaderPolicy);
      const event = await pending.ready;
      for (const [step, key] of [
        ["loaderLoaded", "loadedMs"],
        ["loaderPolicyRead", "policyMs"],
        ["loaderAttached", "attachedMs"],
      ] as const) {
        const ms = event[key];
        if (typeof ms === "number") options.onStep?.(step, pending.spawnedAt + ms);
      }
      options.onStep?.("loaderReady");
      const guard = new KernelGuard(
        compiled,
        Number(event.cgroupId),
        (event.programs as string[]) ?? [],
        loader,
        pending.exited,
        launch,
        resolver,
      );
      loader.once("exit", (code, signal) => {
        if (!guard.stopping)
          options.onLoaderLost?.(signal ? `was killed by ${signal}` : `exited with status ${code}`);
      });
      return guard;
    } catch (error) {
      pending.abort();
      resolver?.close();
      throw error;
    }
  }

  /**
   * How to start the server inside the cgroup (and the cgroup-v1 cgroups of its limits, `join`),
   * under the ruleset and the seccomp filter: the launcher's argv, and the ruleset it reads from
   * fd 3 before closing every descriptor above stderr.
   */
  launch(
    argv: readonly string[],
    cgroup: string,
    join: readonly string[] = [],
  ): { argv: string[]; fd3?: string } {
    const launched = KernelGuard.launchArgv(argv, cgroup, join, this.options);
    return this.options.landlock ? { argv: launched, fd3: this.compiled.ruleset } : { argv: launched };
  }

  /**
   * The launcher's argv for launch(), known before the guard is ready. With Landlock it reads the
   * ruleset from fd 3 after joining the cgroups and before anything else: a launcher started early
   * holds there, and one whose fd 3 ends without a ruleset (the proxy gone) exits without exec.
   */
  static launchArgv(
    argv: readonly string[],
    cgroup: string,
    join: readonly string[],
    options: LaunchOptions,
  ): string[] {
    const args = [binaries().launcher, "--cgroup", cgroup, ...join.flatMap((dir) => ["--join", dir])];
    if (options.isolate?.ipc) args.push("--isolate", "ipc");
    if (options.isolate?.net) args.push("--isolate", "net");
    if (options.isolate?.pid) args.push("--isolate", "pid");
    if (options.seccomp) args.push("--seccomp");
    if (options.fileBytes !== undefined) args.push("--fsize", String(options.fileBytes));
    if (!options.landlock) return [...args, "--", ...argv];
    return [...args, "--ruleset", "/dev/fd/3", "--", ...argv];
  }

  /** What the launcher reads from fd 3 (the Landlock ruleset), or undefined when it reads nothing. */
  get ruleset(): string | undefined {
    return this.options.landlock ? this.compiled.ruleset : undefined;
  }

  #stopping = false;

  /** stop() was called: the loader's exit from here on is expected. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /**
   * Let the loader report what is left and exit (it waits until the cgroup holds no process; the
   * cgroup socket programs go with the cgroup).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (!this.loader) return;
    this.loader.stdin?.end();
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3000).unref());
    await Promise.race([this.exited, timeout]);
    if (this.loader.exitCode === null) this.loader.kill("SIGKILL");
    await this.exited;
    // The cgroup is empty by now (the loader waits for that): no query of the server is left.
    this.resolver?.close();
  }
}
