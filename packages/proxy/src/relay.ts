/**
 * The transparent stdio relay between an MCP client and a server subprocess.
 *
 * The relay owns the processes and the streams; what happens to each frame is the {@link Router}'s
 * business. Layers plug in through an {@link Interceptor}; with none (configs C0 and C-ebpf) the
 * relay never re-encodes a message, apart from escaping raw line separators.
 *
 * Memory stays bounded whatever the peers do: the relay stops reading from the client while its
 * writes to the server or to the client (its own replies included) are backed up, and stops
 * reading from the server while its writes to the client are.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, LineFramer } from "@mcpguard/protocol";
import { type AuditLog, serverNameFromCommand } from "./audit.js";
import { type Containment, createContainment, signalGroup } from "./containment.js";
import { type Interceptor, Router } from "./router.js";

export type { Interceptor } from "./router.js";

export interface RelayOptions {
  /** The server command and its arguments. */
  argv: readonly string[];
  config: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: Readable;
  output?: Writable;
  /** Diagnostics; never the protocol stream. */
  log?: (line: string) => void;
  maxMessageBytes?: number;
  /** Deepest nesting of objects and arrays accepted in a message (default {@link DEFAULT_MAX_DEPTH}). */
  maxDepth?: number;
  audit?: AuditLog;
  interceptor?: Interceptor;
  /** After the client closes stdin: how long the server may take to exit before SIGTERM. */
  closeGraceMs?: number;
  /** After SIGTERM: how long before every remaining process is killed. */
  termGraceMs?: number;
  containment?: Containment;
  /** Name for the audit log (default: from the command, never from the server's `initialize`). */
  serverName?: string;
  /** Names of the environment variables the layers withheld from the server (for the audit log). */
  withheld?: string[];
  /**
   * Start the server some other way than the containment's wrapper (the L3 launcher, which joins
   * the cgroup itself); `fd3` is written to the child's descriptor 3. With {@link hold}, `fd3` is
   * left out: the launcher's ruleset comes with the release.
   */
  launch?: (argv: readonly string[]) => { argv: string[]; fd3?: string };
  /**
   * Hold the server's start until this settles, so that the process that will become the server
   * joins its cgroup (slow) while the proxy's other helpers start. A held process (the cgroup
   * wrapper, or the L3 launcher, both from {@link launch} or the containment) has joined the cgroup
   * but runs nothing of the server: it waits on its fd 3, and execs the server only once the release
   * writes it (`fd3`: the launcher's ruleset; without one, the wrapper's "go"). Until then the relay
   * reads nothing from the client and the audit log has no start event (`startInfo` is added to
   * it). A rejection kills the held process: the server never runs, and run() resolves with 1.
   * Where the containment is a process group (nothing to join ahead), the spawn itself waits.
   */
  hold?: Promise<{ fd3?: string; startInfo?: Record<string, unknown>; ready?: Promise<void> }>;
  /**
   * What the layers still set up once the server is released (layers.ts, `complete`), for a start
   * that is not held; a held start's release carries its own. The relay reads no message, from
   * either side, before it has resolved; when it rejects, the server is stopped.
   */
  ready?: Promise<void>;
  /** Extra fields for the audit log's start event (e.g. the L3 backends). */
  startInfo?: Record<string, unknown>;
  /**
   * Why the server may not have started (the kernel's refusals while it started, under L3), in one
   * line: asked when it exits before answering `initialize` (with its status) and, while it has
   * not answered, after `startWatchMs` (status undefined). The line goes to stderr and the client.
   */
  startFailure?: (status: number | undefined) => string | undefined;
  /** How long the server may take to answer `initialize` before {@link startFailure} is asked (10 s). */
  startWatchMs?: number;
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? constants.signals[signal] : undefined;
  return 128 + (n ?? 0);
}

type ServerChild = ChildProcessByStdio<Writable, Readable, null>;

/** Bytes of the relay's own answers that may wait unread in the server's input (see replyToServer). */
const MAX_UNREAD_REPLIES = 4 * 1024 * 1024;

/**
 * The router says one line per message it drops or refuses; a peer that sends a flood of bad lines
 * would make as many (a server writing junk to its output made 73,000 lines in seconds, written
 * synchronously to a stderr the client may not read). The first LINES_OF_A_KIND lines of each kind
 * (the text before its first "(" or ":", with what is quoted and every number made alike, so a peer
 * cannot make a kind per line) are said; the rest are counted, and said as one line every
 * SUPPRESSED_EVERY_MS while they go on and once at the end. Past MAX_KINDS kinds, all are one.
 */
const LINES_OF_A_KIND = 20;
const SUPPRESSED_EVERY_MS = 10_000;
const MAX_KINDS = 100;

export class LogLimiter {
  readonly #kinds = new Map<string, { said: number; held: number; since: number }>();
  constructor(
    readonly write: (line: string) => void,
    readonly now: () => number = Date.now,
  ) {}

  line(text: string): void {
    const head = (/^[^(:]*/.exec(text)?.[0] ?? text).trim();
    let kind = head.replace(/"(?:[^"\\]|\\.)*"?/g, '"..."').replace(/\d+/g, "N");
    if (!this.#kinds.has(kind) && this.#kinds.size >= MAX_KINDS) kind = "other lines";
    let seen = this.#kinds.get(kind);
    if (seen === undefined) {
      seen = { said: 0, held: 0, since: this.now() };
      this.#kinds.set(kind, seen);
    }
    if (seen.said < LINES_OF_A_KIND) {
      seen.said++;
      this.write(text);
      return;
    }
    seen.held++;
    if (this.now() - seen.since >= SUPPRESSED_EVERY_MS) this.#sayHeld(kind, seen);
  }

  /** Say what is still held back (at the end of a session). */
  flush(): void {
    for (const [kind, seen] of this.#kinds) if (seen.held > 0) this.#sayHeld(kind, seen);
  }

  #sayHeld(kind: string, seen: { held: number; since: number }): void {
    this.write(`${seen.held} more lines like "${kind}" not shown`);
    seen.held = 0;
    seen.since = this.now();
  }
}

const joined = (parts: Buffer[]): Buffer =>
  parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);

export class Relay {
  readonly #opts: RelayOptions;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #log: (line: string) => void;
  /** The router's lines, a few of each kind (see {@link LogLimiter}). */
  readonly #routerLog: LogLimiter;
  /** Created when the server starts, so a relay that never runs leaves no cgroup behind. */
  #containment: Containment | undefined;
  readonly #router: Router;
  #child!: ServerChild;
  #serverGone = false;
  #clientClosed = false;
  #finished = false;
  /** Writes to the client that wait for its pipe to drain. */
  #clientBacklog = false;
  /** Writes to the server that wait for its pipe to drain. */
  #serverBacklog = false;
  /** Bytes of the relay's own answers to the server written since its input last drained. */
  #repliesUnread = 0;
  /** Own answers dropped since then (see {@link Relay#replyToServer}). */
  #repliesDropped = 0;
  #timers: NodeJS.Timeout[] = [];
  /** While a chunk is handled: the bytes it yields for each side, written once it is done. */
  #batching = false;
  readonly #batchClient: Buffer[] = [];
  readonly #batchServer: Buffer[] = [];

  constructor(options: RelayOptions) {
    this.#opts = options;
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#log = options.log ?? ((line) => process.stderr.write(`mcpguard: ${line}\n`));
    this.#routerLog = new LogLimiter(this.#log);
    this.#containment = options.containment;
    this.#router = new Router({
      config: options.config,
      interceptor: options.interceptor,
      audit: options.audit,
      maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
      serverName: options.serverName ?? serverNameFromCommand(options.argv),
      toServer: (bytes) => this.#toServer(bytes),
      replyToServer: (bytes) => this.#replyToServer(bytes),
      toClient: (bytes) => this.#toClient(bytes),
      log: (line) => this.#routerLog.line(line),
    });
  }

  /** Start the server and relay until it has exited; resolves with the proxy's exit status. */
  run(): Promise<number> {
    this.#containment ??= createContainment();
    const containment = this.#containment;
    const hold = this.#opts.hold;
    if (!hold) {
      const child = this.#spawn(containment, false);
      const done = this.#whenDone(child);
      this.#started(child, containment, this.#opts.startInfo, this.#opts.ready);
      return done;
    }
    if (this.#opts.launch === undefined && containment.kind !== "cgroup") {
      return hold.then(
        (release) => {
          // Stopped while held (abort): the server is never spawned.
          if (this.#held) return 1;
          const child = this.#spawn(containment, false);
          const done = this.#whenDone(child);
          this.#started(child, containment, { ...release.startInfo, ...this.#opts.startInfo }, release.ready);
          return done;
        },
        () => 1,
      );
    }
    const child = this.#spawn(containment, true);
    const done = this.#whenDone(child);
    const gate = child.stdio[3] as Writable;
    gate.on("error", () => {});
    this.#gate = gate;
    hold.then(
      (release) => {
        // Stopped while held (abort): end of file on fd 3, so the held process exits without exec,
        // even one that had not joined its cgroup yet when the cgroup was killed.
        if (this.#serverGone || this.#held) {
          gate.end();
          return;
        }
        gate.end(release.fd3 ?? "go\n");
        this.#started(child, containment, { ...release.startInfo, ...this.#opts.startInfo }, release.ready);
      },
      () => {
        // Not exec'd yet: nothing of the server ran. End of file on fd 3 (it exits by itself, in its
        // cgroup or not yet), and killed with everything in its cgroup.
        gate.end();
        if (this.#serverGone) return;
        this.#held = true;
        void this.#killAll();
      },
    );
    return done;
  }

  /** The held process was killed before its release: the server never started. */
  #held = false;
  /** The held process's fd 3: the release writes it; its end without a release means exit. */
  #gate: Writable | undefined;
  /** The audit log has the start event (a held process that never became the server has none, nor an exit). */
  #startLogged = false;

  /** Resolves with the proxy's exit status once the server (or the process that was to become it) has exited. */
  #whenDone(child: ServerChild): Promise<number> {
    return new Promise<number>((resolve) => {
      let spawnFailed = false;
      child.once("error", (error) => {
        spawnFailed = true;
        this.#log(`cannot start server ${JSON.stringify(this.#opts.argv[0])}: ${error.message}`);
        void this.#finish(127).then(resolve);
      });
      child.once("exit", (code, signal) => {
        if (spawnFailed) return;
        const status = this.#held ? 1 : exitStatus(code, signal);
        void this.#finish(status).then(resolve);
      });
    });
  }

  /**
   * The server is on its way: the start event, then the streams and the watch on `initialize`,
   * once what the layers still set up (`ready`) is done, while the server boots. When that fails,
   * the server is stopped, saying why.
   */
  #started(
    child: ServerChild,
    containment: Containment,
    startInfo: Record<string, unknown> | undefined,
    ready?: Promise<void>,
  ): void {
    this.#startLogged = true;
    this.#auditLifecycle({
      type: "lifecycle",
      event: "start",
      server: this.serverName,
      config: this.#opts.config,
      pid: child.pid,
      containment: containment.kind,
      ...(this.#opts.withheld?.length ? { withheld: this.#opts.withheld } : {}),
      ...startInfo,
    });
    const connect = () => {
      if (this.#serverGone) return;
      this.#connect(child);
      this.#watchStart();
    };
    if (!ready) connect();
    else
      ready.then(connect, (error: unknown) =>
        this.abort(`a layer could not be set up: ${(error as Error).message}`),
      );
  }

  /** A server that has not answered `initialize` in time: say why, if the layers know. */
  #watchStart(): void {
    const why = this.#opts.startFailure;
    if (!why) return;
    this.#later(this.#opts.startWatchMs ?? 10_000, () => {
      if (this.#serverGone || this.#router.answeredInitialize) return;
      const line = why(undefined);
      if (!line) return;
      this.#log(line);
      this.#router.notifyClient(`mcpguard: ${line}`);
    });
  }

  /** Spawn the server (`held`: the process that execs it once released, see {@link RelayOptions.hold}). */
  #spawn(containment: Containment, held: boolean): ServerChild {
    const launch = this.#opts.launch?.(this.#opts.argv) ?? {
      argv: containment.wrap(this.#opts.argv, { gate: held }),
    };
    const [command, ...args] = launch.argv;
    if (!command) throw new Error("no server command given");
    const fd3 = held || launch.fd3 !== undefined;
    const child = spawn(command, args, {
      cwd: this.#opts.cwd ?? process.cwd(),
      env: this.#opts.env ?? process.env,
      stdio: fd3 ? ["pipe", "pipe", "inherit", "pipe"] : ["pipe", "pipe", "inherit"],
      // A new session: no controlling terminal, and the server leads its own process group.
      detached: true,
    }) as ServerChild;
    if (!held && launch.fd3 !== undefined) {
      const extra = child.stdio[3] as Writable;
      extra.on("error", () => {});
      extra.end(launch.fd3);
    }
    this.#child = child;
    // Process-group containment learns the server's group here (its reaper is spawned by now, and
    // reads what it is told whether or not it has said it is ready).
    containment.serverStarted();
    return child;
  }

  /** Wire the streams: frames through the router, backpressure both ways. */
  #connect(child: ServerChild): void {
    const maxBytes = this.#opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const router = this.#router;
    const fromClient = new LineFramer(
      { frame: (frame) => router.clientFrame(frame), error: (error) => router.clientTooLarge(error) },
      maxBytes,
    );
    const fromServer = new LineFramer(
      { frame: (frame) => router.serverFrame(frame), error: (error) => router.serverTooLarge(error) },
      maxBytes,
    );
    this.#input.on("data", (chunk: Buffer) => this.#batched(fromClient, chunk));
    this.#input.once("end", () => {
      this.#batched(fromClient, null);
      this.#onClientClosed();
    });
    this.#input.once("error", () => this.#onClientClosed());
    child.stdout.on("data", (chunk: Buffer) => this.#batched(fromServer, chunk));
    child.stdout.once("end", () => {
      this.#batched(fromServer, null);
      this.#onServerOutputClosed();
    });
    // A server that exits while we write to it surfaces as EPIPE here; its exit is handled above.
    child.stdin.on("error", () => {});
    child.stdin.on("drain", () => {
      this.#serverBacklog = false;
      this.#repliesUnread = 0;
      this.#repliesDropped = 0;
      this.#flow();
    });
    this.#output.on("error", () => this.#onClientClosed());
    this.#output.on("drain", () => {
      this.#clientBacklog = false;
      this.#flow();
    });
  }

  /** Whether the server has answered the client's `initialize`. */
  get answeredInitialize(): boolean {
    return this.#router.answeredInitialize;
  }

  /** The server's name in the audit log: as given, else from its command. */
  get serverName(): string {
    return this.#router.serverName;
  }

  /** Stop the server and every process it started at once, saying why (a layer can no longer hold). */
  abort(reason: string): void {
    if (this.#serverGone) return;
    // Still held: the server never starts, and the proxy exits 1 as when nothing was spawned. A held
    // process that has not joined its cgroup yet escapes the kill, so its fd 3 ends too.
    if (this.#opts.hold && !this.#startLogged) {
      this.#held = true;
      this.#gate?.end();
    }
    this.#log(`stopping the server: ${reason}`);
    void this.#killAll();
  }

  /** Forward a signal to the server's process group, and make sure it ends. */
  forwardSignal(signal: NodeJS.Signals): void {
    if (this.#serverGone || !this.#child?.pid) return;
    signalGroup(this.#child.pid, signal);
    this.#later(this.#opts.termGraceMs ?? 2000, () => void this.#killAll());
  }

  /**
   * The server's output ended. At its exit that is all; a server still running a moment later can
   * never answer again (calls to it waited forever), so it is stopped as when the client leaves:
   * its input ends, then SIGTERM, then SIGKILL, and the proxy ends with it.
   */
  #onServerOutputClosed(): void {
    const grace = this.#opts.closeGraceMs ?? 2000;
    this.#later(Math.min(grace, 500), () => {
      // A client that left has the server stopped already (#onClientClosed).
      if (this.#serverGone || this.#clientClosed || !this.#child.pid) return;
      this.#log("the server closed its output but goes on running; stopping it");
      this.#child.stdin.end();
      this.#later(grace, () => {
        if (this.#serverGone || !this.#child.pid) return;
        signalGroup(this.#child.pid, "SIGTERM");
        this.#later(this.#opts.termGraceMs ?? 2000, () => void this.#killAll());
      });
    });
  }

  #onClientClosed(): void {
    if (this.#clientClosed) return;
    this.#clientClosed = true;
    if (this.#serverGone) return;
    this.#child.stdin.end();
    const closeGrace = this.#opts.closeGraceMs ?? 2000;
    this.#later(closeGrace, () => {
      if (this.#serverGone || !this.#child.pid) return;
      signalGroup(this.#child.pid, "SIGTERM");
      this.#later(this.#opts.termGraceMs ?? 2000, () => void this.#killAll());
    });
  }

  /**
   * Handle one chunk so that the messages it yields leave in one write each way, not one write per
   * message: they are collected while it is handled and written, in order, once it is done (before
   * anything else runs). Streams' cork() and an uncork() on the next tick did the same, at a few
   * microseconds more per chunk on every call's path.
   */
  #batched(framer: LineFramer, chunk: Buffer | null): void {
    this.#batching = true;
    try {
      if (chunk) framer.push(chunk);
      else framer.end();
    } finally {
      this.#batching = false;
      const client = this.#batchClient;
      const server = this.#batchServer;
      // Emptied before the writes, so a write that comes back here finds them empty.
      const toClient = client.length ? joined(client) : undefined;
      const toServer = server.length ? joined(server) : undefined;
      client.length = 0;
      server.length = 0;
      if (toClient) this.#writeClient(toClient);
      if (toServer) this.#writeServer(toServer);
    }
  }

  /**
   * Read from the client only while neither of its destinations (the server, and the client
   * itself for the relay's own replies) is backed up; read from the server only while the client
   * is not.
   */
  #flow(): void {
    if (this.#finished) return;
    if (this.#clientBacklog || this.#serverBacklog) this.#input.pause();
    else this.#input.resume();
    if (this.#clientBacklog) this.#child.stdout.pause();
    else this.#child.stdout.resume();
  }

  #toClient(bytes: Buffer): void {
    if (this.#batching) this.#batchClient.push(bytes);
    else this.#writeClient(bytes);
  }

  #toServer(bytes: Buffer): void {
    if (this.#batching) this.#batchServer.push(bytes);
    else this.#writeServer(bytes);
  }

  /**
   * The relay's own answer to a request of the server's (one the layers refused, or could not
   * inspect). The client's messages wait while the server's input is backed up (reading from the
   * client pauses), but these come from reading the server, which goes on: a server that sends
   * requests and never reads the answers grew the proxy's memory without end (1.9 GiB in under
   * five minutes). Past MAX_UNREAD_REPLIES bytes of them unread, they are dropped until the server
   * reads its input again, with one log line; a server that reads them is never short of one.
   */
  #replyToServer(bytes: Buffer): void {
    if (this.#serverBacklog && this.#repliesUnread + bytes.length > MAX_UNREAD_REPLIES) {
      if (this.#repliesDropped++ === 0)
        this.#log(
          "the server sends requests without reading the answers; mcpguard's answers to them are dropped until it reads its input",
        );
      return;
    }
    if (this.#serverBacklog) this.#repliesUnread += bytes.length;
    this.#toServer(bytes);
  }

  #writeClient(bytes: Buffer): void {
    if (this.#output.writableEnded || this.#output.destroyed) return;
    if (!this.#output.write(bytes) && !this.#clientBacklog) {
      this.#clientBacklog = true;
      this.#flow();
    }
  }

  #writeServer(bytes: Buffer): void {
    const stdin = this.#child.stdin;
    if (stdin.writableEnded || stdin.destroyed) return;
    if (!stdin.write(bytes) && !this.#serverBacklog) {
      this.#serverBacklog = true;
      this.#flow();
    }
  }

  async #killAll(): Promise<void> {
    const child = this.#child;
    if (!child?.pid) return;
    // Not reaped yet, the server's first process still holds its pid, so its process group is
    // its own: signalled too, as a process spawned a moment ago may not have joined its cgroup yet
    // (the wrapper's first step), and would exec the server after the cgroup's kill.
    if (child.exitCode === null && child.signalCode === null) signalGroup(child.pid, "SIGKILL");
    await this.#containment?.killAll(child.pid);
  }

  async #finish(status: number): Promise<number> {
    this.#serverGone = true;
    this.#router.serverGone();
    for (const timer of this.#timers) clearTimeout(timer);
    // Whatever the server left running (a daemonised child, a detached upload) ends with it.
    await this.#killAll();
    await waitForEnd(this.#child.stdout, 1000);
    const why = this.#router.answeredInitialize ? undefined : this.#opts.startFailure?.(status);
    if (why) this.#log(why);
    this.#router.failInFlight(status, why);
    this.#routerLog.flush();
    this.#containment?.dispose();
    if (this.#startLogged)
      this.#auditLifecycle({
        type: "lifecycle",
        event: "exit",
        server: this.serverName,
        config: this.#opts.config,
        pid: this.#child.pid,
        status,
        ...(this.#router.claimedName === undefined ? {} : { claimedName: this.#router.claimedName }),
      });
    this.#finished = true;
    this.#input.pause();
    await new Promise<void>((resolve) => {
      if (this.#output.writableEnded || this.#output.destroyed) resolve();
      else this.#output.write("", () => resolve());
    });
    return status;
  }

  /**
   * A start or exit record. One the log cannot take is said on stderr: the server has started, or
   * has exited, whatever the disk holds, and the proxy ends as it would have.
   */
  #auditLifecycle(event: Parameters<AuditLog["write"]>[0] & { event: "start" | "exit" }): void {
    try {
      this.#opts.audit?.write(event);
    } catch (error) {
      this.#log(`${(error as Error).message} (the server's ${event.event} is not recorded)`);
    }
  }

  #later(ms: number, fn: () => void): void {
    const timer = setTimeout(fn, ms);
    timer.unref();
    this.#timers.push(timer);
  }
}

function waitForEnd(stream: Readable, ms: number): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stream.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    stream.once("end", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
