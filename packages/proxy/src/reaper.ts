/**
 * The reaper (bpf/reaper.c): a small static process that outlives the proxy and ends the server
 * when the proxy ends, whatever ends it. It holds nothing of the proxy but one end of a pipe on
 * its stdin; when that pipe reaches end of file (the proxy exited, crashed, or was killed), or the
 * proxy's pidfd turns readable, it kills the server's cgroup (or process group) and removes the
 * cgroups. It runs in a session of its own, so a signal to the proxy's process group does not
 * reach it, and it ignores the signals a terminal sends.
 *
 * The proxy watches it in turn: a reaper that exits first means the server would no longer be
 * ended with the proxy, so the proxy stops the server (fail closed).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Socket } from "node:net";

export class ReaperError extends Error {
  override readonly name = "ReaperError";
}

export interface ReaperOptions {
  binary: string;
  /** The server's cgroup2 directory, and the v1 cgroups of its limits. */
  cgroup?: string;
  v1?: readonly string[];
  /** The reaper exited before release(): called once, saying how. */
  onLost: (how: string) => void;
  readyTimeoutMs?: number;
}

export class Reaper {
  #released = false;
  #ready = false;
  /**
   * Settles once the reaper says it is armed; rejects (a ReaperError) if it exits, cannot start or
   * takes too long first, and it is killed then.
   */
  readonly ready: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    options: ReaperOptions,
  ) {
    this.ready = whenReady(child, options.readyTimeoutMs ?? 5000).then(
      () => {
        this.#ready = true;
        // Neither the reaper nor its pipe keeps the proxy alive; the pipe closes with the proxy. A
        // reaper released before it was ready is waited for (release()).
        if (this.#released) return;
        child.unref();
        (child.stdin as Socket | null)?.unref();
      },
      (error: unknown) => {
        child.kill("SIGKILL");
        throw error;
      },
    );
    this.ready.catch(() => {});
    child.once("exit", (code, signal) => {
      // Before it was ready, `ready` says so.
      if (this.#ready && !this.#released)
        options.onLost(signal ? `was killed by ${signal}` : `exited with status ${code}`);
    });
  }

  /**
   * The reaper spawned, at once: `tell` and `release` work from here, since it reads its stdin
   * whether or not it has said it is ready, and a proxy gone before then is reaped all the same
   * (bpf/reaper.c). Whether it is armed is `ready`.
   */
  static spawn(options: ReaperOptions): Reaper {
    if (!existsSync(options.binary)) throw new ReaperError(`${options.binary} is not built (make -C bpf)`);
    const args = ["--proxy", String(process.pid)];
    if (options.cgroup) args.push("--cgroup", options.cgroup);
    for (const dir of options.v1 ?? []) args.push("--v1", dir);
    const child = spawn(options.binary, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin?.on("error", () => {});
    return new Reaper(child, exited, options);
  }

  /** Hand the reaper a line (e.g. "pgid N", the server's process group). */
  tell(line: string): void {
    if (!this.#released) this.child.stdin?.write(`${line}\n`);
  }

  /**
   * The proxy is done with the server: say so and close the pipe, so the reaper removes whatever
   * cgroup is left (none, after a clean stop) and exits; wait for that (bounded).
   */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // Waited for: the proxy's event loop stays up until the reaper has gone (or 5 s).
    this.child.ref();
    // The proxy ended the server's process group itself; a cgroup left behind is still removed.
    this.child.stdin?.end("released\n");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 5000);
    });
    await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
  }
}

/** Resolve on the reaper's "ready" line; reject if it exits, fails to start, or takes too long. */
function whenReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = "";
    const onError = (error: Error) => done(new ReaperError(`cannot start the reaper: ${error.message}`));
    const onExit = (code: number | null) =>
      done(new ReaperError(`the reaper exited with status ${code} before it was ready`));
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("ready\n")) done();
    };
    const timer = setTimeout(
      () => done(new ReaperError("the reaper did not become ready in time")),
      timeoutMs,
    );
    function done(error?: Error): void {
      clearTimeout(timer);
      child.off("error", onError).off("exit", onExit);
      const stdout = child.stdout?.off("data", onData);
      if (error) reject(error);
      else resolve();
      // Closed once what waits for the reaper has gone on (the server's release, on a start's path).
      setImmediate(() => stdout?.destroy());
    }
    child.once("error", onError).once("exit", onExit);
    child.stdout?.on("data", onData);
  });
}
