/**
 * `mcpguard run`'s containment across every way the proxy can end: the server's containment with
 * its limits and its reaper (which outlives the proxy), and the handlers that, when the proxy's
 * own code fails, kill the server's cgroup before anything else and exit 70.
 */
import { existsSync } from "node:fs";
import type { AuditLog } from "./audit.js";
import { type CgroupAhead, type Containment, createContainment } from "./containment.js";
import { LayerSetupError } from "./layers.js";
import type { Limits } from "./limits.js";
import { ReaperError } from "./reaper.js";

/** sysexits' EX_SOFTWARE: the proxy itself failed. */
const EXIT_INTERNAL = 70;

export interface ServerContainmentOptions {
  limits: Limits;
  /** The cgroup's name (containment.ts, containmentName), when it was planned ahead. */
  name?: string;
  /** Its cgroup2 directory, when it was made ahead (containment.ts, makeCgroupAhead). */
  madeAhead?: CgroupAhead;
  /** An L3 config: without a reaper it does not start (fail closed); others run with a warning. */
  kernel: boolean;
  /** The reaper exited while the proxy runs: the server must be stopped, for this reason. */
  onReaperLost: (reason: string) => void;
  /**
   * Called with the containment once the reaper is spawned, before it is ready: a held start of the
   * server may begin here (relay.ts, `hold`), never the server itself.
   */
  onReaperSpawned?: (containment: Containment) => void;
  log?: (line: string) => void;
}

/**
 * The server's containment with its limits applied, its reaper starting: `armed` settles once the
 * reaper is ready (or, for a config without L3, has failed with a warning), so that the caller can
 * start other helpers (the kernel layer) meanwhile. When it rejects (the error to report), the
 * caller disposes of the containment. Under L3 the server must not start before `armed` has
 * resolved (fail closed). Without L3 it may start once this has returned: the reaper is spawned by
 * then, and it ends the server with the proxy whether or not it has said it is armed (it reads its
 * stdin to the end either way, reaper.c); one that never is leaves the server with the warning
 * `armed` writes, as it would have before the server started.
 */
export async function startServerContainment(
  options: ServerContainmentOptions,
): Promise<{ containment: Containment; armed: Promise<void> }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`mcpguard: ${line}\n`));
  const { binaries, whyAbsent } = await import("@mcpguard/kernel/binaries");
  const bins = binaries();
  const reaper = bins.reaper;
  const containment = createContainment({
    limits: options.limits,
    name: options.name,
    madeAhead: options.madeAhead,
  });
  // The reaper is spawned first (supervise() spawns it before it awaits anything), so that a proxy
  // killed from here on leaves no cgroup behind either; the held start may begin while it gets ready.
  // Another machine's build (or none) is never run.
  const supervised = bins.unusable
    ? Promise.reject(new ReaperError(bins.unusable))
    : containment.supervise(reaper, (how) =>
        options.onReaperLost(`the reaper (mcpguard-reaper) ${how}, so the server would outlive the proxy`),
      );
  const armed = supervised.catch((error: unknown) => {
    if (!(error instanceof ReaperError)) throw error;
    // Not there: say why in the words of where it was looked for (a package, a checkout).
    const why = existsSync(reaper) ? error.message : whyAbsent(bins, reaper);
    if (options.kernel)
      throw new LayerSetupError(`cannot contain the server beyond the proxy's life: ${why}`);
    log(`warning: ${why}; the server is not stopped if the proxy dies`);
  });
  // Awaited by the caller, maybe after other work: its failure is not unhandled meanwhile.
  armed.catch(() => {});
  options.onReaperSpawned?.(containment);
  return { containment, armed };
}

/**
 * The reaper died before the server started: start nothing. The cgroup is still empty, so it
 * goes now, and the proxy exits 1 with one line.
 */
export function abandonStart(containment: Containment, reason: string): never {
  containment.dispose();
  process.stderr.write(`mcpguard: not starting the server: ${reason}\n`);
  process.exit(1);
}

/** What a crash handler needs, filled in as `mcpguard run` sets things up. */
export interface CrashContext {
  config: string;
  containment?: Containment;
  audit?: AuditLog;
  /** The kernel events counted for the log (kernelEvents.ts): written before the exit record. */
  kernelEvents?: { close(): void };
  server?: () => string;
}

/**
 * Handlers for an exception nothing caught and a promise rejection nothing handled: one line on
 * stderr (the stack only with MCPGUARD_DEBUG), the server's cgroup killed at once (synchronously:
 * nothing may run after the handler), the kernel events counted so far and an `exit` record in the
 * audit log when one is open, and exit status 70. The reaper then removes what is left when it sees the proxy gone.
 */
export function installCrashHandlers(ctx: CrashContext): void {
  const crash = (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`mcpguard: internal error: ${message.split("\n")[0]}\n`);
    if (process.env.MCPGUARD_DEBUG && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    try {
      ctx.containment?.killNow();
    } catch {
      // The reaper kills it when this process is gone.
    }
    const record = {
      type: "lifecycle" as const,
      event: "exit" as const,
      server: ctx.server?.() ?? "server",
      config: ctx.config,
      status: EXIT_INTERNAL,
      reason: `internal error: ${message.split("\n")[0]}`,
    };
    try {
      ctx.kernelEvents?.close();
      ctx.audit?.write(record);
      // The session is over: its head file says so (auditHeads.ts).
      ctx.audit?.close();
    } catch {
      // An audit log that cannot be written may be why we crashed.
    }
    process.exit(EXIT_INTERNAL);
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
}
