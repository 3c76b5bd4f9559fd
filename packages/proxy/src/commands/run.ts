import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { KernelNeeds } from "@mcpguard/kernel";
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, MAX_DEPTH_LIMIT } from "@mcpguard/protocol";
import { defineCommand, intOption, UsageError } from "../args.js";
import { type AuditLog, DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_BYTES } from "../audit.js";
import { headsDir } from "../auditHeads.js";
import { auditKeyPath, openAuditLog, withoutAuditKeyPath } from "../auditKey.js";
import { ConfigError, type LayerName, resolveConfig } from "../configs.js";
import {
  type CgroupAhead,
  type Containment,
  ContainmentError,
  containmentName,
  makeCgroupAhead,
  plannedCgroupPath,
  removeCgroupTree,
  warmCgroupLock,
} from "../containment.js";
import { checkGuardFiles, type GuardFile, wrappedConfigOf, writeReach } from "../guardFiles.js";
import { KernelEvents } from "../kernelEvents.js";
import {
  type KernelLayer,
  type PreparedKernelLayer,
  prepareKernelLayer,
  startKernelLayer,
} from "../kernelLayer.js";
import { buildLayers, LayerSetupError, type Layers } from "../layers.js";
import {
  abandonStart,
  type CrashContext,
  installCrashHandlers,
  startServerContainment,
} from "../lifecycle.js";
import { LimitsError, resolveLimits } from "../limits.js";
import { programProblem } from "../program.js";
import { Relay } from "../relay.js";
import { ownBin } from "../self.js";
import { markStep, startSteps } from "../startClock.js";
import { StartupDenials } from "../startupDenials.js";

const RUN = defineCommand({
  name: "mcpguard run",
  description: "Start an MCP server and relay its stdio, applying the layers of one defense config.",
  withCommand: "required",
  options: {
    config: {
      type: "string",
      default: "C0",
      value: "name",
      help: "C0 (default), C-AB, C-app, C-ebpf, C-full or C-AB+ebpf",
    },
    policy: { type: "string", value: "file", help: "the server's L1/L2 policy (needed by C-app and C-full)" },
    overrides: {
      type: "string",
      value: "path",
      help: "operator overrides: a file, or a directory holding <server>.json",
    },
    manifest: {
      type: "string",
      value: "file",
      help: "the server's AgentBound manifest (needed by C-AB and C-AB+ebpf)",
    },
    pins: {
      type: "string",
      value: "file",
      help:
        "the client config's pin file (mcpguard pin): the reviewed tool definitions, by server name; a " +
        "server it lacks is pinned by its first listing. L2 (C-app, C-full) withholds a changed tool " +
        '(policy "pins": {"onChange": "flag"} lists it with a notice instead)',
    },
    "audit-log": { type: "string", value: "file", help: "append every decision as NDJSON to the file" },
    "audit-max-bytes": {
      type: "string",
      value: "n",
      help: "rotate the audit log past n bytes (default 16 MiB)",
    },
    "audit-keep": {
      type: "string",
      value: "n",
      help:
        "rotated audit files kept whole (default 10); older ones are compacted to what is not a kernel " +
        "event, and as many of those kept, past which one goes once every session in it is over",
    },
    "audit-key": {
      type: "string",
      value: "file",
      help:
        "the key that seals the audit log (default: $MCPGUARD_AUDIT_KEY, else /var/lib/mcpguard/audit.key " +
        "for root, ~/.local/state/mcpguard/audit.key)",
    },
    "server-name": {
      type: "string",
      value: "name",
      help:
        "name used in the audit log (default: the policy's or manifest's, else the command's script " +
        "name; what the server calls itself is recorded apart)",
    },
    "max-message-bytes": {
      type: "string",
      value: "n",
      help: `largest JSON-RPC message accepted (default ${DEFAULT_MAX_MESSAGE_BYTES})`,
    },
    "max-depth": {
      type: "string",
      value: "n",
      help: `deepest nesting of objects and arrays accepted in a message (default ${DEFAULT_MAX_DEPTH}, at most ${MAX_DEPTH_LIMIT})`,
    },
    "close-grace-ms": {
      type: "string",
      value: "n",
      help: "after the client closes stdin, wait n ms before SIGTERM (default 2000)",
    },
    "term-grace-ms": {
      type: "string",
      value: "n",
      help: "after SIGTERM, wait n ms before killing every process (default 2000)",
    },
    "dns-upstream": {
      type: "string",
      multiple: true,
      value: "addr:port",
      help:
        "under L3, where the server's resolver (which answers only the names its policy grants) sends " +
        "the queries it answers (repeatable; default: the name servers of /etc/resolv.conf)",
    },
    "l3-allow-partial": {
      type: "boolean",
      help:
        "run an L3 config even where some capability has no kernel backend (those capabilities are " +
        "left open; the audit log says which)",
    },
    "pids-max": {
      type: "string",
      value: "n",
      help:
        "tasks (processes and threads) the server's cgroup may hold (default: the policy's or " +
        "manifest's limits.pids, else 1024)",
    },
    "memory-max": {
      type: "string",
      value: "bytes",
      help:
        "memory the server's cgroup may use, e.g. 512M or 2G (default: the policy's limits.memoryBytes, " +
        "else 4 GiB or half the RAM if less)",
    },
    "file-size-max": {
      type: "string",
      value: "bytes",
      help:
        "the size any one file the server writes may reach, e.g. 256M (RLIMIT_FSIZE: EFBIG past it; default: " +
        "the policy's limits.fileBytes, else none). No total per folder is enforced",
    },
  },
});

type RunValues = NonNullable<ReturnType<typeof RUN.parse>>["values"];

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // A path that cannot be stat'ed is no folder to take as one.
    return false;
  }
}

/**
 * The files this run really uses, which the server must not be able to change: the policy (L1, L2,
 * L3), the overrides (a file, or the folder and its `<server>.json`), the manifest (AB), the pin
 * file (L2), the audit log and its key; and where there are grants, mcpguard's own install
 * (`install`: a project-local one under a write grant would let the server rewrite what the next
 * start runs as root).
 */
function guardFilesOf(
  values: RunValues,
  layers: readonly LayerName[],
  server: string | undefined,
  install: readonly string[],
): GuardFile[] {
  const files: GuardFile[] = install.map((path) => ({ path, what: "mcpguard install", code: true }));
  if (layers.includes("AB")) {
    if (values.manifest) files.push({ path: values.manifest, what: "manifest" });
  } else if (layers.length > 0) {
    if (values.policy) files.push({ path: values.policy, what: "policy" });
    const overrides = values.overrides;
    if (overrides && isDirectory(overrides))
      files.push(
        { path: overrides, what: "overrides folder" },
        { path: join(overrides, `${server ?? "server"}.json`), what: "overrides" },
      );
    else if (overrides) files.push({ path: overrides, what: "overrides" });
  }
  if (layers.includes("L2") && values.pins) files.push({ path: values.pins, what: "pin file" });
  if (values["audit-log"]) {
    files.push({ path: values["audit-log"], what: "audit log" });
    const key = auditKeyPath(values["audit-key"], process.env);
    files.push({ path: key, what: "audit key", secret: true });
    // Beside the key: what proves the log's end (auditHeads.ts).
    files.push({ path: headsDir(key), what: "audit head files" });
  }
  return files;
}

/**
 * Where this mcpguard's code lives: the package, or the checkout's packages (the proxy's bundle and
 * caches, the readers' modules), node_modules and the kernel layer's build, and a
 * `MCPGUARD_BPF_DIR` given instead.
 */
async function installFolders(): Promise<string[]> {
  const { binaries } = await import("@mcpguard/kernel/binaries");
  const bins = binaries();
  const own = dirname(dirname(ownBin()));
  if (bins.source === "MCPGUARD_BPF_DIR") return [own, bins.dir];
  if (bins.source === "none") return [own];
  // The package or checkout that holds `bpf/`, which holds the binaries.
  let bpf = bins.dir;
  while (basename(bpf) !== "bpf" && dirname(bpf) !== bpf) bpf = dirname(bpf);
  const root = dirname(bpf);
  // A checkout holds more than code (docs, data, results): its packages, its modules and its build.
  return bins.source === "checkout" ? [join(root, "packages"), join(root, "node_modules"), bins.dir] : [root];
}

/** The uid that ran sudo to start this proxy, if any (`$SUDO_UID`, a number other than root's). */
function sudoCaller(env: NodeJS.ProcessEnv): number | undefined {
  const uid = Number(env.SUDO_UID);
  return env.SUDO_UID && Number.isInteger(uid) && uid > 0 ? uid : undefined;
}

/** The largest --max-message-bytes: 256 MiB. */
const MAX_MESSAGE_BYTES_LIMIT = 256 * 1024 * 1024;

/** What `run` was asked to do, its options checked: the command, the config and the relay's limits. */
interface RunPlan {
  values: RunValues;
  command: string[];
  config: ReturnType<typeof resolveConfig>;
  maxMessageBytes: number;
  maxDepth: number;
  closeGraceMs: number;
  termGraceMs: number;
}

/** The options as a plan, or a usage error in one line before anything starts. */
function planOf(parsed: NonNullable<ReturnType<typeof RUN.parse>>): RunPlan {
  const { values, command } = parsed;
  if (command.length === 0)
    throw new UsageError("no server command given (mcpguard run [options] -- <command> [args...])");
  let config: ReturnType<typeof resolveConfig>;
  try {
    config = resolveConfig(values.config);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  const maxMessageBytes = intOption(
    values["max-message-bytes"],
    "max-message-bytes",
    DEFAULT_MAX_MESSAGE_BYTES,
  );
  // A message is decoded as one string, and V8's strings end a little below 512 MiB.
  if (maxMessageBytes < 1 || maxMessageBytes > MAX_MESSAGE_BYTES_LIMIT)
    throw new UsageError(
      `--max-message-bytes must be between 1 and ${MAX_MESSAGE_BYTES_LIMIT}, got ${maxMessageBytes}`,
    );
  const maxDepth = intOption(values["max-depth"], "max-depth", DEFAULT_MAX_DEPTH);
  if (maxDepth < 1 || maxDepth > MAX_DEPTH_LIMIT)
    throw new UsageError(`--max-depth must be between 1 and ${MAX_DEPTH_LIMIT}, got ${maxDepth}`);
  const closeGraceMs = intOption(values["close-grace-ms"], "close-grace-ms", 2000);
  const termGraceMs = intOption(values["term-grace-ms"], "term-grace-ms", 2000);
  return { values, command, config, maxMessageBytes, maxDepth, closeGraceMs, termGraceMs };
}

/**
 * A step of the start reached: marked on the start clock, and the cgroup threadgroup lock kept
 * ready for the held process's join, which the steps up to the release come before
 * (containment.ts, warmCgroupLock).
 */
function step(name: string, at?: number): void {
  markStep(name, at);
  warmCgroupLock();
}

export async function main(argv: string[]): Promise<number> {
  step("loaded");
  const parsed = RUN.parse(argv);
  if (!parsed) return 0;
  return new Session(planOf(parsed)).run();
}

/** What releases a held start: the ruleset the launcher reads on fd 3, and what the start record says. */
type Release = { fd3?: string; startInfo?: Record<string, unknown>; ready?: Promise<void> };

/**
 * The server's start, held until the reaper and the kernel layer are ready, while the process that
 * becomes the server joins its cgroup (slow): at once without L3, under L3 once the BPF loader is
 * on its way. That process runs nothing of the server and the relay reads nothing from the client
 * before the release (relay.ts, `hold`); refused, it never becomes the server.
 */
class HeldStart {
  readonly promise: Promise<Release>;
  readonly release: (start: Release) => void;
  readonly refuse: (error: unknown) => void;

  constructor() {
    const settle: { release?: (start: Release) => void; refuse?: (error: unknown) => void } = {};
    this.promise = new Promise<Release>((resolve, reject) => {
      settle.release = resolve;
      settle.refuse = reject;
    });
    this.promise.catch(() => {});
    // The executor above ran synchronously: both are set.
    this.release = settle.release as (start: Release) => void;
    this.refuse = settle.refuse as (error: unknown) => void;
  }
}

/** A layer that cannot be set up, as the one line `run` ends with. */
function layerUsage(config: string, error: unknown): unknown {
  return error instanceof LayerSetupError ? new UsageError(`config ${config}: ${error.message}`) : error;
}

/**
 * One run of a server under a config, phase by phase (docs/ARCHITECTURE.md, "run and wrap, phase
 * by phase"):
 * - resolve: the BPF loader starts (L3), the layers are built, the guard's files checked, the
 *   audit log opened; nothing of the server exists yet.
 * - confine: the server's cgroup and its reaper, and the kernel layer, start together; the process
 *   that becomes the server is held.
 * - start: L1 and L2 learn what the kernel enforces; the held server is released (or, under L3
 *   without Landlock, started now).
 * - relay: messages flow until the server or the client ends.
 * - drain: the loader reports what is left, so its events reach the log before it closes.
 * - teardown: on every way out, one path: a held start refused, the kernel layer stopped, the
 *   cgroup released (killed first on a failed start), the audit log closed, the loader ended.
 * What a callback (the reaper, the kernel layer) learns is kept on the session, not in variables
 * of a closure.
 */
class Session {
  private readonly plan: RunPlan;
  private readonly configName: string;
  private readonly cgroupName = containmentName();
  /** The BPF loader started ahead of the rest (configs with L3). */
  private prepared: PreparedKernelLayer | undefined;
  /** The server's cgroup2 directory, made once the loader that runs is known (configs with L3). */
  private madeAhead: CgroupAhead | undefined;
  private dnsUpstream: import("@mcpguard/kernel").Upstream[] | undefined;
  private layers: Layers | undefined;
  private audit: AuditLog | undefined;
  /** Kernel events go to the log counted (kernelEvents.ts). */
  private kernelEvents: KernelEvents | undefined;
  private crash: CrashContext | undefined;
  /** What the kernel refused before the server answered initialize: why it may not have started. */
  private readonly startup = new StartupDenials();
  private readonly held = new HeldStart();
  private containment: Containment | undefined;
  private kernel: KernelLayer | undefined;
  private relay: Relay | undefined;
  private running: Promise<number> | undefined;
  private drained: Promise<void> | undefined;

  constructor(plan: RunPlan) {
    this.plan = plan;
    this.configName = plan.config.name;
  }

  /** Every phase in order, and teardown on every way out. */
  async run(): Promise<number> {
    let status: number | undefined;
    let failure: { error: unknown } | undefined;
    try {
      await this.resolve();
      await this.confine();
      this.start();
      status = await this.relayMessages();
      await this.drain();
    } catch (error) {
      failure = { error };
    }
    await this.teardown(failure);
    if (failure) throw failure.error;
    return status as number;
  }

  /** The server's name in the log and in kernel events, as the relay has it. */
  private serverName(): string {
    return this.relay?.serverName ?? "server";
  }

  /** What the run reads and checks before anything of the server exists. */
  private async resolve(): Promise<void> {
    const { values, command, config, maxDepth } = this.plan;
    // Under L3 the BPF loader starts first, for the cgroup the server will have: its programs load
    // and verify (most of an L3 start) while the policy loads and the cgroup is made. It opens the
    // cgroup, and attaches anything, only once it has read the policy compiled for it.
    if (config.layers.includes("L3")) {
      try {
        this.prepared = await prepareKernelLayer({
          allowPartial: values["l3-allow-partial"] === true,
          cgroup: plannedCgroupPath(this.cgroupName),
          onStep: step,
        });
      } catch (error) {
        throw layerUsage(config.name, error);
      }
      // The server's cgroup, made now rather than in confine(): the loader attaches its programs
      // to it as soon as they are loaded, while the layers load here, instead of after the policy
      // (about 10 ms of the start). Made once the probe has settled which loader runs, so no loader
      // that is killed here has attached anything to it. The loader refuses every socket of the
      // cgroup until its policy arrives; nothing runs in it before the release.
      if (this.prepared.loader) this.madeAhead = makeCgroupAhead(this.cgroupName);
    }
    this.dnsUpstream = await dnsUpstreams(values["dns-upstream"]);
    let layers: Layers;
    try {
      layers = await buildLayers({
        layers: config.layers,
        policy: values.policy,
        overrides: values.overrides,
        manifest: values.manifest,
        env: withoutAuditKeyPath(process.env),
        cwd: process.cwd(),
        maxDepth,
        pins: values.pins,
        serverName: values["server-name"],
        defer: true,
      });
    } catch (error) {
      throw layerUsage(config.name, error);
    }
    step("layersBuilt");
    this.layers = layers;

    // The guard's own files, out of the server's reach before anything of it runs (guardFiles.ts).
    const install = config.layers.length > 0 ? await installFolders() : [];
    checkGuardFiles(guardFilesOf(values, config.layers, layers.server, install), {
      grants: layers.grants,
      uid: process.getuid?.(),
      sudoUid: sudoCaller(process.env),
      advice: (file) => {
        if (file.secret) return "keep the key elsewhere (--audit-key FILE)";
        // A config wrapped by an older mcpguard wrap, whose files lie in the project.
        const wrapped = values.policy ? wrappedConfigOf(values.policy) : undefined;
        return wrapped
          ? `run mcpguard wrap --relocate ${wrapped} to move wrap's files out of the project`
          : undefined;
      },
    });

    // Under L3 the kernel layer resolves the program, and refuses a missing one in its own words.
    if (!layers.kernelNeeds) {
      const problem = programProblem(command[0] as string, layers.env.PATH, process.cwd());
      if (problem) throw new UsageError(problem);
    }

    if (layers.draft) {
      // One line: a draft runs, but never without a word.
      process.stderr.write(
        `mcpguard: warning: ${values.policy} is a draft policy ("draft": true) that nobody has reviewed: ` +
          "check its grants (its description says what to look at), then remove the mark\n",
      );
    }
    if (values["audit-key"] && !values["audit-log"]) throw new UsageError("--audit-key needs --audit-log");
    this.openAudit(layers);
    step("resolved");
  }

  /** The audit log, the kernel events counted into it, and the crash handlers that write its end. */
  private openAudit(layers: Layers): void {
    const { values } = this.plan;
    const audit = values["audit-log"]
      ? openAuditLog({
          file: values["audit-log"],
          keyFile: values["audit-key"],
          env: process.env,
          serverCwd: process.cwd(),
          serverEnv: layers.env,
          maxBytes: intOption(values["audit-max-bytes"], "audit-max-bytes", DEFAULT_AUDIT_MAX_BYTES),
          keep: intOption(values["audit-keep"], "audit-keep", DEFAULT_AUDIT_KEEP),
        })
      : undefined;
    this.audit = audit;
    // Kernel events go to the log counted (kernelEvents.ts): a server that repeats a refused call in a
    // loop costs a few records a second. Counted events are written before each decision, so a
    // call's first refusal follows it, and before the log closes, on every way out. They name the
    // server as the relay does.
    const kernelEvents =
      audit && layers.kernelNeeds
        ? new KernelEvents({
            write: (event) => audit.write(event),
            server: () => this.serverName(),
            config: this.configName,
          })
        : undefined;
    this.kernelEvents = kernelEvents;
    if (audit && kernelEvents) audit.beforeDecision = () => kernelEvents.flush();
    this.crash = {
      config: this.configName,
      audit,
      kernelEvents,
      server: () => this.serverName(),
    };
    installCrashHandlers(this.crash);
  }

  /**
   * The server's cgroup and its reaper, and the kernel layer, started together; the process that
   * becomes the server is spawned held (without L3 as soon as the reaper is spawned, under L3 by
   * the kernel layer's launcher). Resolves once both are ready, or throws what failed.
   */
  private async confine(): Promise<void> {
    const { values, config } = this.plan;
    const layers = this.layers as Layers;
    // Ready when the reaper is: the server is not spawned before.
    let armed: Promise<void>;
    try {
      const limits = resolveLimits(
        {
          pidsMax: values["pids-max"],
          memoryMax: values["memory-max"],
          fileSizeMax: values["file-size-max"],
        },
        layers.limits,
      );
      ({ armed } = await startServerContainment({
        limits,
        name: this.cgroupName,
        madeAhead: this.madeAhead,
        kernel: layers.kernelNeeds !== undefined,
        // Lost before the server starts: nothing to stop, but it must not start.
        onReaperLost: (reason) =>
          this.relay ? this.relay.abort(reason) : abandonStart(this.containment as Containment, reason),
        // Without L3 the process that becomes the server joins its cgroup while the reaper starts.
        onReaperSpawned: (created) => {
          step("cgroupMade");
          this.contain(created);
          if (!layers.kernelNeeds) this.startRelay(undefined, true);
        },
      }));
    } catch (error) {
      if (error instanceof LimitsError || error instanceof ContainmentError)
        throw new UsageError(error.message);
      throw layerUsage(config.name, error);
    }
    // The kernel layer starts while the reaper does.
    const kernelStart = layers.kernelNeeds ? this.startKernel(layers.kernelNeeds) : undefined;
    // (A failed reaper is reported from `armed` itself, below.)
    armed.then(
      () => step("reaperReady"),
      () => {},
    );
    // Under L3 the release waits for the reaper to be armed (fail closed); without L3 only for its
    // spawn, which has happened (lifecycle.ts). What `armed` then throws is not the reaper's
    // absence, which it says as a warning, but a bug: it ends the run as one (installCrashHandlers).
    if (!layers.kernelNeeds)
      armed.catch((error: unknown) =>
        queueMicrotask(() => {
          throw error;
        }),
      );
    const [reaperStart, kernelStarted] = await Promise.allSettled([
      layers.kernelNeeds ? armed : undefined,
      kernelStart,
    ]);
    if (kernelStarted.status === "fulfilled") this.kernel = kernelStarted.value;
    if (reaperStart.status === "rejected") throw layerUsage(config.name, reaperStart.reason);
    if (kernelStarted.status === "rejected") throw layerUsage(config.name, kernelStarted.reason);
  }

  /** The server's containment, as the crash handlers and the reaper's loss see it. */
  private contain(created: Containment): void {
    this.containment = created;
    (this.crash as CrashContext).containment = created;
  }

  /** The kernel layer for the server's cgroup, its events counted into the log. */
  private startKernel(needs: KernelNeeds): Promise<KernelLayer> {
    const { command, config, values } = this.plan;
    const layers = this.layers as Layers;
    const containment = this.containment as Containment;
    // A config with L3 prepared it above: never a start without it.
    if (!this.prepared) throw new Error(`config ${config.name} has kernel needs but no kernel layer`);
    return startKernelLayer({
      config: config.name,
      prepared: this.prepared,
      needs,
      argv: command,
      env: layers.env,
      launcherEnv: withoutAuditKeyPath(process.env),
      cwd: process.cwd(),
      writable: writeReach(layers.grants),
      secrets: values["audit-log"]
        ? [
            {
              path: auditKeyPath(values["audit-key"], process.env),
              what: "audit key",
              advice: "keep the key elsewhere (--audit-key FILE)",
            },
          ]
        : [],
      containment,
      onEvent: (event) => {
        if (!this.relay?.answeredInitialize) this.startup.note(event);
        this.kernelEvents?.add(event);
      },
      onLoaderLost: (how) => {
        const reason = `the BPF loader ${how}, so its programs no longer hold`;
        this.audit?.write({
          type: "kernel",
          event: "loader-lost",
          decision: "deny",
          server: this.serverName(),
          config: config.name,
          reason,
        });
        // Not one more instruction of the server until it is killed.
        containment.freeze();
        this.relay?.abort(reason);
      },
      onLauncher: (launch) => this.startRelay(launch, true),
      onStep: step,
      dnsUpstream: this.dnsUpstream,
    });
  }

  /** The relay over the server (held: its process waits for the release), and the signals it forwards. */
  private startRelay(
    launch: KernelLayer["launch"] | undefined,
    held: boolean,
    startInfo = {},
    ready?: Promise<void>,
  ): void {
    const { values, command, config, maxMessageBytes, maxDepth } = this.plan;
    const layers = this.layers as Layers;
    const containment = this.containment as Containment;
    const started = new Relay({
      argv: command,
      config: config.name,
      audit: this.audit,
      env: layers.env,
      withheld: layers.withheld,
      interceptor: layers.interceptor,
      containment,
      launch,
      ...(held ? { hold: this.held.promise } : { ready }),
      startInfo: {
        ...startInfo,
        ...(containment.limits ? { limits: containment.limits } : {}),
        ...(layers.draft ? { draft: true } : {}),
        world: worldOf(process.cwd(), layers.env),
      },
      serverName: values["server-name"] ?? layers.server,
      startFailure: layers.kernelNeeds ? (status) => this.startup.summary(status) : undefined,
      maxMessageBytes,
      maxDepth,
      closeGraceMs: this.plan.closeGraceMs,
      termGraceMs: this.plan.termGraceMs,
    });
    this.relay = started;
    step("serverSpawned");
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.on(signal, () => started.forwardSignal(signal));
    }
    this.running = started.run();
  }

  /** The layers told what the kernel enforces, and the held server released (or started now). */
  private start(): void {
    const layers = this.layers as Layers;
    const kernel = this.kernel;
    // L1 and L2 leave to the kernel what it really enforces in this run, and only that.
    if (kernel) layers.confine?.(kernel.startInfo.l3 as Record<string, string>, kernel.readerLauncher);
    markStep("released");
    const startInfo = { ...kernel?.startInfo, startMs: startSteps() };
    // What the layers leave for now (L2's validator) is set up while the server boots, once the
    // release is written: in the next turn of the event loop, not in a microtask that would run
    // before the relay's (a dynamic import in the bundle is one). The relay reads no message before.
    const complete = layers.complete;
    const ready = complete && new Promise<void>((resolve) => setImmediate(resolve)).then(complete);
    ready?.catch(() => {});
    // Under L3 without Landlock the launcher cannot hold: it starts now that everything is ready.
    if (!this.running) this.startRelay(kernel?.launch, false, startInfo, ready);
    else this.held.release({ fd3: kernel?.ruleset, startInfo, ready });
  }

  /** Messages flow until the server or the client ends: the server's exit status. */
  private relayMessages(): Promise<number> {
    // While the server starts: a parser loads, off the relay's path.
    this.layers?.warm?.();
    return this.running as Promise<number>;
  }

  /** The loader reports what is left, then detaches: its events belong in the log before it closes. */
  private drain(): Promise<void> {
    this.drained ??= this.kernel?.stop() ?? Promise.resolve();
    return this.drained;
  }

  /**
   * The one way out, whatever phase was reached: a start that failed is refused (the held process
   * never becomes the server: killed, and gone before its cgroup is), then the kernel layer is
   * stopped, the cgroup released (killed first when the start failed), the audit log closed, and
   * the loader ended if the kernel layer never took it over (a bad policy, a refused start).
   */
  private async teardown(failure: { error: unknown } | undefined): Promise<void> {
    if (failure) {
      this.held.refuse(failure.error);
      // Its own failure, if any, is not the one this run ends with.
      await this.running?.catch(() => 1);
    }
    await this.drain();
    if (failure) this.containment?.dispose();
    // Made ahead, and the run ended before a containment took it over.
    if (this.madeAhead && this.containment?.cgroupPath !== this.madeAhead.path)
      removeCgroupTree(this.madeAhead.path);
    await this.containment?.release();
    this.kernelEvents?.close();
    this.audit?.close();
    this.prepared?.abort();
  }
}

/** `--dns-upstream` as resolver addresses, or a usage error. */
async function dnsUpstreams(
  values: string[] | undefined,
): Promise<import("@mcpguard/kernel").Upstream[] | undefined> {
  if (!values?.length) return undefined;
  const { parseUpstream } = await import("@mcpguard/kernel");
  try {
    return values.map(parseUpstream);
  } catch (error) {
    throw new UsageError(`--dns-upstream: ${(error as Error).message}`);
  }
}

/**
 * What the policy's variables stood for in this run ({{cwd}}, {{home}}, {{tmp}}), on the start
 * record: `mcpguard policy learn` writes the paths it proposes with them again.
 */
function worldOf(cwd: string, env: NodeJS.ProcessEnv): { cwd: string; home?: string; tmp?: string } {
  return { cwd, ...(env.HOME ? { home: env.HOME } : {}), ...(env.TMPDIR ? { tmp: env.TMPDIR } : {}) };
}
