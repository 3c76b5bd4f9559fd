/**
 * The BPF loader (bpf/loader.c) on its way, apart from the rest of the kernel layer so that it can
 * be spawned first, before the kernel package and its schemas load: it loads and verifies its
 * programs, then waits for its policy on fd 3, and opens its cgroup (which need not exist when it
 * starts) and attaches anything only once it has read that policy. KernelGuard.start() takes it
 * over.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { isRecord } from "@mcpguard/protocol";
import { binaries } from "./binaries.js";

/** One line of the loader's stdout (bpf/emit.c): an object with its `type`, the rest by type. */
export interface KernelEvent {
  type: string;
  [key: string]: unknown;
}

export class KernelSetupError extends Error {
  override readonly name = "KernelSetupError";
}

/**
 * A BPF loader on its way: loading and verifying its programs, then waiting for its policy on
 * fd 3. `ready` settles with its `ready` event, or rejects with why it failed (its exit status
 * and stderr, or a timeout).
 */
export class PendingLoader {
  readonly cgroup: string;
  readonly process: ChildProcess;
  /**
   * performance.now() just before it was spawned: the times its ready event gives, counted from its
   * own start, added to this are never later than when they happened.
   */
  readonly spawnedAt = performance.now();
  readonly ready: Promise<KernelEvent>;
  readonly exited: Promise<void>;
  readonly #policyPipe: Writable;
  /** Where the events after `ready` go (set by KernelGuard.start). */
  onEvent: (event: KernelEvent) => void = () => {};
  #timer: NodeJS.Timeout | undefined;
  #readyTimeoutMs: number;
  #timeout: () => void = () => {};

  /** Whether it loads the BPF LSM programs too (--lsm). */
  readonly lsm: boolean;
  /** Whether it loads the pathname unix socket programs too (--unix). */
  readonly unix: boolean;

  constructor(options: { cgroup: string; lsm: boolean; unix?: boolean; readyTimeoutMs?: number }) {
    const bins = binaries();
    this.cgroup = options.cgroup;
    this.lsm = options.lsm;
    this.unix = !!options.unix;
    const args = [
      "--cgroup",
      options.cgroup,
      "--policy",
      "/dev/fd/3",
      ...(options.lsm ? ["--lsm"] : []),
      ...(options.unix ? ["--unix"] : []),
    ];
    const loader = spawn(bins.loader, args, { stdio: ["pipe", "pipe", "pipe", "pipe"] });
    this.process = loader;
    // A loader that fails early closes these: its exit status tells why, not the EPIPE.
    loader.stdin?.on("error", () => {});
    this.#policyPipe = (loader.stdio[3] as Writable).on("error", () => {});
    const stdout = loader.stdout as Readable;
    let stderr = "";
    (loader.stderr as Readable).on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    this.exited = new Promise<void>((resolve) => loader.once("close", () => resolve()));
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
    this.ready = new Promise<KernelEvent>((resolve, reject) => {
      let buffer = "";
      this.#timeout = () => reject(new KernelSetupError("the BPF loader did not become ready in time"));
      loader.once("error", (error) =>
        reject(new KernelSetupError(`cannot start the BPF loader ${bins.loader}: ${error.message}`)),
      );
      // "close", not "exit": the loader's stderr (why it failed) is read to its end by then.
      loader.once("close", (code, signal) =>
        reject(
          new KernelSetupError(
            stderr.trim() ||
              (signal
                ? `the BPF loader was killed by ${signal}`
                : `the BPF loader exited with status ${code}`),
          ),
        ),
      );
      stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        let nl = buffer.indexOf("\n");
        while (nl !== -1) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          nl = buffer.indexOf("\n");
          const event = parseEvent(line);
          // A line that is not an event (stray output of the loader's libraries) is not ours to judge.
          if (event === undefined) continue;
          if (event.type === "ready") {
            clearTimeout(this.#timer);
            resolve(event);
          } else {
            this.onEvent(event);
          }
        }
      });
    });
    // Settled while the policy compiles, or before start() is called: awaited there.
    this.ready.catch(() => {});
  }

  /**
   * Send the policy (fd 3). The time the loader has to become ready starts here, not at its spawn:
   * until then it waits on the proxy (a slow policy read, a probe), and ends with it at EOF.
   */
  sendPolicy(policy: string | Buffer): void {
    this.#policyPipe.end(policy);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#timeout, this.#readyTimeoutMs);
  }

  /**
   * Kill the loader: its programs are not going to be used. Its links go with it; programs it
   * attached to the cgroup stay until the cgroup is removed, which the caller does.
   */
  abort(): void {
    clearTimeout(this.#timer);
    this.process.kill("SIGKILL");
  }
}

function parseEvent(line: string): KernelEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Not JSON: not an event.
    return undefined;
  }
  // Checked by hand, not with a zod schema: this module is loaded before zod, to spawn the loader early.
  return isRecord(value) && typeof value.type === "string" ? { ...value, type: value.type } : undefined;
}
