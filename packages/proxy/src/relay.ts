/**
 * The transparent stdio relay between an MCP client and a server subprocess.
 *
 * Every frame is decoded once to classify it and to correlate ids; a frame nothing changes is
 * forwarded as the exact bytes received. Layers plug in through an {@link Interceptor}; with none
 * (config C0) the relay never re-encodes a message.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import {
  type Classified,
  classify,
  DEFAULT_MAX_MESSAGE_BYTES,
  decodeMessage,
  ErrorCode,
  encodeMessage,
  errorResponse,
  type Frame,
  LineFramer,
  type Message,
  type PendingRequest,
  PendingRequests,
  resultResponse,
  toolError,
} from "@mcpguard/protocol";
import { type AuditLog, digest } from "./audit.js";
import { type Containment, createContainment, signalGroup } from "./containment.js";

/** What the layers decided about one tool call. */
export interface Verdict {
  decision: "allow" | "deny";
  /** The layer that decided ("none" when the config has no layer). */
  layer: string;
  rule: string | null;
  /** Shown to the agent when the call is denied. */
  reason: string;
}

/** A tool call as the client sent it. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A layer's change to a tool result: the message to forward instead, and why. */
export interface ResultChange {
  message: Message;
  layer: string;
  rule: string;
  reason: string;
}

/** Where the defense layers plug into the relay. */
export interface Interceptor {
  /** Decide a `tools/call` before it reaches the server. */
  toolCall(call: ToolCall): Verdict;
  /** The server's answer to an allowed call; a change replaces the message the client gets. */
  toolResult?(call: ToolCall, message: Message): ResultChange | undefined;
}

const PASS_THROUGH: Verdict = {
  decision: "allow",
  layer: "none",
  rule: null,
  reason: "the config applies no layer",
};

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
  audit?: AuditLog;
  interceptor?: Interceptor;
  /** After the client closes stdin: how long the server may take to exit before SIGTERM. */
  closeGraceMs?: number;
  /** After SIGTERM: how long before every remaining process is killed. */
  termGraceMs?: number;
  containment?: Containment;
  /** Name for the audit log until the server reports its own in `initialize`. */
  serverName?: string;
  /** Names of the environment variables the layers withheld from the server (for the audit log). */
  withheld?: string[];
  /**
   * Start the server some other way than the containment's wrapper (the L3 launcher, which joins
   * the cgroup itself); `fd3` is written to the child's descriptor 3.
   */
  launch?: (argv: readonly string[]) => { argv: string[]; fd3?: string };
  /** Extra fields for the audit log's start event (e.g. the L3 backends). */
  startInfo?: Record<string, unknown>;
}

export function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? constants.signals[signal] : undefined;
  return 128 + (n ?? 0);
}

type ServerChild = ChildProcessByStdio<Writable, Readable, null>;

export class Relay {
  readonly #opts: RelayOptions;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #log: (line: string) => void;
  /** Client requests in flight; a tool call carries its name and arguments. */
  readonly #pending = new PendingRequests<ToolCall | undefined>();
  readonly #containment: Containment;
  #child!: ServerChild;
  #serverName: string;
  #serverGone = false;
  #clientClosed = false;
  #timers: NodeJS.Timeout[] = [];

  constructor(options: RelayOptions) {
    this.#opts = options;
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#log = options.log ?? ((line) => process.stderr.write(`mcpguard: ${line}\n`));
    this.#containment = options.containment ?? createContainment();
    this.#serverName = options.serverName ?? options.argv.at(-1) ?? "server";
  }

  /** Start the server and relay until it has exited; resolves with the proxy's exit status. */
  run(): Promise<number> {
    const launch = this.#opts.launch?.(this.#opts.argv) ?? { argv: this.#containment.wrap(this.#opts.argv) };
    const [command, ...args] = launch.argv;
    if (!command) throw new Error("no server command given");
    const child = spawn(command, args, {
      cwd: this.#opts.cwd ?? process.cwd(),
      env: this.#opts.env ?? process.env,
      stdio: launch.fd3 === undefined ? ["pipe", "pipe", "inherit"] : ["pipe", "pipe", "inherit", "pipe"],
      // A new session: no controlling terminal, and the server leads its own process group.
      detached: true,
    }) as ServerChild;
    if (launch.fd3 !== undefined) {
      const extra = child.stdio[3] as Writable;
      extra.on("error", () => {});
      extra.end(launch.fd3);
    }
    this.#child = child;

    const done = new Promise<number>((resolve) => {
      let spawnFailed = false;
      child.once("error", (error) => {
        spawnFailed = true;
        this.#log(`cannot start server ${JSON.stringify(this.#opts.argv[0])}: ${error.message}`);
        void this.#finish(127).then(resolve);
      });
      child.once("exit", (code, signal) => {
        if (spawnFailed) return;
        const status = exitStatus(code, signal);
        void this.#finish(status).then(resolve);
      });
    });

    this.#opts.audit?.write({
      type: "lifecycle",
      event: "start",
      server: this.#serverName,
      config: this.#opts.config,
      pid: child.pid,
      containment: this.#containment.kind,
      ...(this.#opts.withheld?.length ? { withheld: this.#opts.withheld } : {}),
      ...this.#opts.startInfo,
    });

    const maxBytes = this.#opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const fromClient = new LineFramer(
      {
        frame: (frame) => this.#onClientFrame(frame),
        error: (error) =>
          this.#reply(
            errorResponse(null, { code: ErrorCode.ParseError, message: `Parse error: ${error.message}` }),
          ),
      },
      maxBytes,
    );
    const fromServer = new LineFramer(
      {
        frame: (frame) => this.#onServerFrame(frame),
        error: (error) => this.#log(`dropped a message from the server: ${error.message}`),
      },
      maxBytes,
    );

    this.#input.on("data", (chunk: Buffer) => fromClient.push(chunk));
    this.#input.once("end", () => {
      fromClient.end();
      this.#onClientClosed();
    });
    this.#input.once("error", () => this.#onClientClosed());
    child.stdout.on("data", (chunk: Buffer) => fromServer.push(chunk));
    child.stdout.once("end", () => fromServer.end());
    // A server that exits while we write to it surfaces as EPIPE here; its exit is handled above.
    child.stdin.on("error", () => {});
    this.#output.on("error", () => this.#onClientClosed());
    return done;
  }

  /** The server's name in the audit log: as given, else its serverInfo.name once it has answered. */
  get serverName(): string {
    return this.#serverName;
  }

  /** Stop the server and every process it started at once, saying why (a layer can no longer hold). */
  abort(reason: string): void {
    if (this.#serverGone) return;
    this.#log(`stopping the server: ${reason}`);
    void this.#killAll();
  }

  /** Forward a signal to the server's process group, and make sure it ends. */
  forwardSignal(signal: NodeJS.Signals): void {
    if (this.#serverGone || !this.#child?.pid) return;
    signalGroup(this.#child.pid, signal);
    this.#later(this.#opts.termGraceMs ?? 2000, () => void this.#killAll());
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

  #onClientFrame(frame: Frame): void {
    if (isBlank(frame.body)) return;
    const decoded = decodeMessage(frame.body);
    if (!decoded.ok) {
      this.#reply(
        errorResponse(null, { code: ErrorCode.ParseError, message: `Parse error: ${decoded.detail}` }),
      );
      return;
    }
    const classified = classify(decoded.value);
    if (classified.kind === "batch") {
      this.#onClientBatch(frame, classified.items);
      return;
    }
    const verdict = this.#admit(classified);
    if (verdict === "forward") this.#toServer(frame.raw);
  }

  #onClientBatch(frame: Frame, items: Classified[]): void {
    const kept: Message[] = [];
    let changed = false;
    for (const item of items) {
      if (this.#admit(item) === "forward" && item.kind !== "invalid" && item.kind !== "batch") {
        kept.push(item.message);
      } else {
        changed = true;
      }
    }
    if (!changed) this.#toServer(frame.raw);
    else if (kept.length > 0) this.#toServer(encodeMessage(kept));
  }

  /** Decide what happens to one client message: forwarded, or answered / dropped here. */
  #admit(message: Classified): "forward" | "handled" {
    switch (message.kind) {
      case "invalid":
        this.#reply(
          errorResponse(message.id, {
            code: ErrorCode.InvalidRequest,
            message: `Invalid request: ${message.reason}`,
          }),
        );
        return "handled";
      case "request": {
        if (this.#serverGone) {
          this.#reply(
            errorResponse(message.id, {
              code: ErrorCode.ConnectionClosed,
              message: "Connection closed: the MCP server has exited",
            }),
          );
          return "handled";
        }
        let call: ToolCall | undefined;
        if (message.method === "tools/call") {
          const read = toToolCall(message.message.params);
          call = read.call;
          const verdict =
            read.malformed && this.#opts.interceptor
              ? this.#decide(call, {
                  decision: "deny",
                  layer: "proxy",
                  rule: "proxy.malformed-call",
                  reason: `the tools/call ${read.malformed}`,
                })
              : this.#decide(call);
          if (verdict.decision === "deny") {
            this.#reply(
              resultResponse(
                message.id,
                toolError(`Blocked by mcpguard (${verdict.layer}): ${verdict.reason}`),
              ),
            );
            return "handled";
          }
        }
        this.#pending.add(message.id, message.method, call);
        return "forward";
      }
      default:
        return this.#serverGone ? "handled" : "forward";
    }
  }

  #inspectResult(call: ToolCall, message: Message): ResultChange | undefined {
    const hook = this.#opts.interceptor?.toolResult;
    if (!hook) return undefined;
    const started = process.hrtime.bigint();
    const change = hook(call, message);
    if (change) {
      this.#opts.audit?.write({
        type: "decision",
        server: this.#serverName,
        tool: call.name,
        config: this.#opts.config,
        layer: change.layer,
        rule: change.rule,
        decision: "modify",
        reason: change.reason,
        latencyMs: Number(process.hrtime.bigint() - started) / 1e6,
        argsDigest: digest(call.arguments),
      });
    }
    return change;
  }

  /** Decide a call (or record a verdict already reached) and audit the decision. */
  #decide(call: ToolCall, reached?: Verdict): Verdict {
    const started = process.hrtime.bigint();
    const verdict = reached ?? this.#opts.interceptor?.toolCall(call) ?? PASS_THROUGH;
    const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
    this.#opts.audit?.write({
      type: "decision",
      server: this.#serverName,
      tool: call.name,
      config: this.#opts.config,
      layer: verdict.layer,
      rule: verdict.rule,
      decision: verdict.decision,
      reason: verdict.reason,
      latencyMs,
      argsDigest: digest(call.arguments),
    });
    return verdict;
  }

  #onServerFrame(frame: Frame): void {
    if (isBlank(frame.body)) return;
    const decoded = decodeMessage(frame.body);
    if (!decoded.ok) {
      this.#log(`dropped a malformed line from the server (${frame.body.length} bytes): ${decoded.detail}`);
      return;
    }
    const classified = classify(decoded.value);
    switch (classified.kind) {
      case "invalid":
        this.#log(`dropped an invalid message from the server: ${classified.reason}`);
        return;
      case "response": {
        const request = this.#pending.take(classified.id);
        if (request) this.#noteResponse(request, classified.message);
        const call = request?.context;
        const change = call ? this.#inspectResult(call, classified.message) : undefined;
        this.#toClient(change ? encodeMessage(change.message) : frame.raw);
        return;
      }
      case "batch":
        for (const item of classified.items) {
          if (item.kind === "response") this.#pending.take(item.id);
        }
        this.#toClient(frame.raw);
        return;
      default:
        this.#toClient(frame.raw);
    }
  }

  #noteResponse(request: PendingRequest<ToolCall | undefined>, message: Message): void {
    if (request.method !== "initialize") return;
    const info = (message.result as { serverInfo?: { name?: unknown } } | undefined)?.serverInfo;
    if (typeof info?.name === "string" && this.#opts.serverName === undefined) this.#serverName = info.name;
  }

  #reply(message: Message): void {
    this.#toClient(encodeMessage(message));
  }

  #toClient(bytes: Buffer): void {
    if (this.#output.writableEnded || this.#output.destroyed) return;
    if (!this.#output.write(bytes)) {
      this.#child.stdout.pause();
      this.#output.once("drain", () => this.#child.stdout.resume());
    }
  }

  #toServer(bytes: Buffer): void {
    const stdin = this.#child.stdin;
    if (stdin.writableEnded || stdin.destroyed) return;
    if (!stdin.write(bytes)) {
      this.#input.pause();
      stdin.once("drain", () => this.#input.resume());
    }
  }

  async #killAll(): Promise<void> {
    if (this.#child?.pid) await this.#containment.killAll(this.#child.pid);
  }

  async #finish(status: number): Promise<number> {
    this.#serverGone = true;
    for (const timer of this.#timers) clearTimeout(timer);
    // Whatever the server left running (a daemonised child, a detached upload) ends with it.
    await this.#killAll();
    await waitForEnd(this.#child.stdout, 1000);
    for (const request of this.#pending.drain()) {
      this.#reply(
        errorResponse(request.id, {
          code: ErrorCode.ConnectionClosed,
          message: `Connection closed: the MCP server exited with status ${status} before answering "${request.method}"`,
        }),
      );
    }
    this.#containment.dispose();
    this.#opts.audit?.write({
      type: "lifecycle",
      event: "exit",
      server: this.#serverName,
      config: this.#opts.config,
      pid: this.#child.pid,
      status,
    });
    this.#input.pause();
    await new Promise<void>((resolve) => {
      if (this.#output.writableEnded || this.#output.destroyed) resolve();
      else this.#output.write("", () => resolve());
    });
    return status;
  }

  #later(ms: number, fn: () => void): void {
    const timer = setTimeout(fn, ms);
    timer.unref();
    this.#timers.push(timer);
  }
}

/** The name and arguments of a `tools/call`, whatever shape the params arrived in. */
/**
 * The name and arguments of a `tools/call`, and what is wrong with its params if anything: a call
 * the layers could only read by guessing is refused, never coerced into something that passes.
 */
function toToolCall(params: unknown): { call: ToolCall; malformed: string | null } {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const p = isObject(params) ? params : {};
  const args = p.arguments;
  const call = { name: typeof p.name === "string" ? p.name : "", arguments: isObject(args) ? args : {} };
  const malformed = !isObject(params)
    ? "params is not an object"
    : typeof p.name !== "string"
      ? "name is not a string"
      : args !== undefined && !isObject(args)
        ? "arguments is not an object"
        : null;
  return { call, malformed };
}

function isBlank(body: Buffer): boolean {
  for (const byte of body) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
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
