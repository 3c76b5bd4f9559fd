/**
 * What the relay does with each frame, apart from processes and streams: refuse what no reader
 * should see, correlate requests and responses, and let the layers decide and inspect.
 *
 * - Every frame is scanned once before it is decoded (`scanFrame`): a frame nested deeper than
 *   `maxDepth`, or holding a CR that is not part of its line ending, is refused (client: -32600;
 *   server: dropped with one line on stderr). Raw U+2028, U+2029 and U+0085 are forwarded escaped.
 * - With no interceptor (C0, C-ebpf) every other frame passes as the bytes received.
 * - With an interceptor, what the client sends is forwarded as the relay's re-serialization of the
 *   value the layers decided on, so a reader that keeps the first of two duplicate keys sees what
 *   the layers saw.
 * - When the interceptor inspects results (`response`), every server message is inspected, and a
 *   response is forwarded only when its id is exactly (same JSON type and value) the id of a
 *   request in flight. Anything else is dropped with one line on stderr: a client that coerces ids
 *   (`Number(id)`) would otherwise accept an answer no layer inspected.
 * - A server message goes on as the bytes received when no layer changed it, and as those bytes
 *   with the changed values spliced in when one did (`spliceJson`): the server's whitespace, key
 *   order, escapes and number spellings stay everywhere else. Where results are inspected, a frame
 *   in which an object has a key twice is re-encoded whole (the value the layers saw, as JSON.stringify
 *   writes it), changed or not: `JSON.parse` keeps the last of two keys, a client may keep the first,
 *   which no layer read.
 */
import {
  type Classified,
  classify,
  DEFAULT_MAX_DEPTH,
  decodeMessage,
  ErrorCode,
  encodeMessage,
  errorResponse,
  escapeLineSeparators,
  type Frame,
  type FrameTooLargeError,
  hasDuplicateKey,
  type JsonRpcId,
  type Message,
  type PendingRequest,
  PendingRequests,
  recoverId,
  resultResponse,
  SCAN_BARE_CR,
  SCAN_LINE_SEPARATOR,
  SCAN_TOO_DEEP,
  scanFrame,
  spliceJson,
  toolError,
} from "@mcpguard/protocol";
import { type AuditLog, AuditWriteError, digest } from "./audit.js";

/** What the layers decided about one tool call. */
export interface Verdict {
  decision: "allow" | "deny";
  /** The layer that decided ("none" when the config has no layer). */
  layer: string;
  rule: string | null;
  /** Shown to the agent when the call is denied. */
  reason: string;
  /** The grants an L1 refusal lacked (policy's missingGrants), kept on the audit record for policy learn. */
  needs?: { capability: string; value: string }[];
}

/** A tool call as the client sent it. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A layer's change to a message from the server: the message to forward instead, and why. */
export interface ResultChange {
  message: Message;
  layer: string;
  rule: string;
  reason: string;
  /**
   * One audit record per item the layer acted on (a listing's tools, a request's fields), instead
   * of one record for the message; an `allow` record notes what was let through (a tool pinned).
   */
  records?: ItemDecision[];
  /**
   * For a request the server sent: do not forward it, and answer the server with this instead
   * (a layer refused the request on the client's behalf).
   */
  reply?: Message;
}

/** What a layer did to one item of a server's message. */
export interface ItemDecision {
  /** The item: a tool, prompt or resource name, or the method. */
  subject: string;
  decision: "allow" | "deny" | "modify";
  layer: string;
  rule: string;
  reason: string;
}

/** A client request the relay forwarded, which the server has not answered yet. */
export interface ForwardedRequest {
  method: string;
  params: unknown;
  /** Set for `tools/call`. */
  call?: ToolCall;
}

/** Where the defense layers plug into the relay. */
export interface Interceptor {
  /** Decide a `tools/call` before it reaches the server. */
  toolCall(call: ToolCall): Verdict;
  /**
   * The server's answer (result or error) to a request the relay forwarded; a change replaces the
   * message the client gets. Its presence makes the relay match responses by exact id.
   */
  response?(request: ForwardedRequest, message: Message): ResultChange | undefined;
  /** A request or notification the server sends of its own accord (sampling, logging, progress). */
  serverMessage?(method: string, message: Message): ResultChange | undefined;
  /**
   * The arguments the server fills in when a call leaves them out: the top-level defaults of the
   * tool's input schema as the client was last shown it. The layers decide the call with each one
   * it omits put in, so they judge what the server says it will use (an omitted URL is the
   * schema's default URL); the call goes on as the client sent it (a `null` default, common in
   * Python servers, is no value their own validation takes).
   */
  callDefaults?(tool: string): Readonly<Record<string, unknown>> | undefined;
}

export interface RouterOptions {
  config: string;
  interceptor?: Interceptor;
  audit?: AuditLog;
  /** Deepest nesting of objects and arrays accepted in a message. */
  maxDepth?: number;
  /** The server's name for the audit log (never what the server calls itself). */
  serverName: string;
  toServer(bytes: Buffer): void;
  /** The proxy's own answer to a request of the server's (default: {@link toServer}). */
  replyToServer?(bytes: Buffer): void;
  toClient(bytes: Buffer): void;
  /** One line of diagnostics. */
  log(line: string): void;
}

const PASS_THROUGH: Verdict = {
  decision: "allow",
  layer: "none",
  rule: null,
  reason: "the config applies no layer",
};

const own = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;

/** How many cancelled requests are remembered, to drop a late answer to one quietly. */
const MAX_CANCELLED = 1024;

/** Why a scanned frame is refused, or undefined when it may be decoded. */
function refusal(scan: number, maxDepth: number): string | undefined {
  if (scan & SCAN_BARE_CR) {
    return "the message holds a carriage return (CR) that is not part of its line ending, which some readers take for a line break";
  }
  if (scan & SCAN_TOO_DEEP) {
    return `the message nests objects and arrays deeper than ${maxDepth} levels (--max-depth)`;
  }
  return undefined;
}

/** An id as a log line shows it: JSON, shortened. */
function showId(id: JsonRpcId | null): string {
  const text = JSON.stringify(id);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

type Item = Exclude<Classified, { kind: "batch" | "invalid" }>;

export class Router {
  readonly #opts: RouterOptions;
  readonly #maxDepth: number;
  /** Whether a tools/call without an id was dropped already (said once a session). */
  #droppedIdlessCall = false;
  /** Client requests in flight. */
  readonly #pending: PendingRequests<ForwardedRequest>;
  /** Whether client messages are forwarded as the value the layers decided on. */
  readonly #reencodeRequests: boolean;
  /** Whether every server message is inspected, and responses matched by exact id. */
  readonly #inspectsResults: boolean;
  #serverName: string;
  /** What the server calls itself in `initialize`: recorded on the exit record, never its name. */
  #claimedName: string | undefined;
  #answeredInitialize = false;
  #serverGone = false;
  /** Requests the client cancelled, the latest {@link MAX_CANCELLED}, to know a late answer. */
  readonly #cancelled = new Set<JsonRpcId>();

  constructor(options: RouterOptions) {
    this.#opts = options;
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#serverName = options.serverName;
    this.#reencodeRequests = options.interceptor !== undefined;
    this.#inspectsResults = options.interceptor?.response !== undefined;
    // Ids a coercing client would confuse matter only where responses are matched by exact id.
    this.#pending = new PendingRequests({ looseIds: this.#inspectsResults });
  }

  /** The server's name in the audit log. */
  get serverName(): string {
    return this.#serverName;
  }

  /** The server's serverInfo.name, once it has answered `initialize`. */
  get claimedName(): string | undefined {
    return this.#claimedName;
  }

  /** Whether the server has answered `initialize` (with a result or an error). */
  get answeredInitialize(): boolean {
    return this.#answeredInitialize;
  }

  /** Client requests the server has not answered. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** A frame from the client. Whatever it holds, the relay goes on. */
  clientFrame(frame: Frame): void {
    try {
      this.#clientFrame(frame);
    } catch (error) {
      this.#opts.log(`refused a client message the proxy failed to handle: ${(error as Error).message}`);
      this.#reply(
        errorResponse(recoverId(frame.body), {
          code: ErrorCode.InternalError,
          message:
            error instanceof AuditWriteError
              ? "Internal error: mcpguard could not record the message in its audit log; it was not forwarded"
              : "Internal error: mcpguard could not handle the message; it was not forwarded",
        }),
      );
    }
  }

  /** A frame from the server. Whatever it holds, the relay goes on. */
  serverFrame(frame: Frame): void {
    try {
      this.#serverFrame(frame);
    } catch (error) {
      this.#opts.log(`dropped a server message the proxy failed to handle: ${(error as Error).message}`);
    }
  }

  /** A client message over the limit: answered with the id its first bytes hold, so the client is not left waiting. */
  clientTooLarge(error: FrameTooLargeError): void {
    // Only a request is answered: an answer to the server's own request must not reach the client.
    this.#reply(
      errorResponse(isRequestHead(error.head) ? recoverId(error.head) : null, {
        code: ErrorCode.ParseError,
        message: `Parse error: ${error.message}`,
      }),
    );
  }

  /** A server message over the limit: dropped; a request it answered gets an error in its place. */
  serverTooLarge(error: FrameTooLargeError): void {
    this.#opts.log(`dropped a message from the server: ${error.message}`);
    // Only an answer: a request of the server's own with the same id answers nothing.
    const id = isRequestHead(error.head) ? null : recoverId(error.head);
    const request = id === null ? undefined : this.#pending.take(id);
    if (!request) return;
    this.#reply(
      errorResponse(request.id, {
        code: ErrorCode.InternalError,
        message: `Internal error: the server's answer to "${request.method}" was dropped: ${error.message}`,
      }),
    );
  }

  /** The server has exited (or is exiting): requests that arrive now are answered here. */
  serverGone(): void {
    this.#serverGone = true;
  }

  /** Answer every request still in flight with a connection-closed error, saying why when known. */
  failInFlight(status: number, why?: string): void {
    for (const request of this.#pending.drain()) {
      this.#reply(
        errorResponse(request.id, {
          code: ErrorCode.ConnectionClosed,
          message: `Connection closed: the MCP server exited with status ${status} before answering "${request.method}"${why ? `: ${why}` : ""}`,
        }),
      );
    }
  }

  /** A log message of the proxy's own to the client (`notifications/message`, level error). */
  notifyClient(text: string): void {
    this.#reply({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "error", logger: "mcpguard", data: text },
    } as Message);
  }

  #clientFrame(frame: Frame): void {
    if (isBlank(frame.body)) return;
    const scan = scanFrame(frame.body, this.#maxDepth);
    const refused = refusal(scan, this.#maxDepth);
    if (refused) {
      this.#reply(
        errorResponse(recoverId(frame.body), {
          code: ErrorCode.InvalidRequest,
          message: `Invalid request: ${refused}`,
        }),
      );
      return;
    }
    const decoded = decodeMessage(frame.body);
    if (!decoded.ok) {
      this.#reply(
        errorResponse(null, { code: ErrorCode.ParseError, message: `Parse error: ${decoded.detail}` }),
      );
      return;
    }
    const classified = classify(decoded.value);
    if (classified.kind === "batch") {
      this.#clientBatch(frame, scan, classified.items);
      return;
    }
    const message = this.#admit(classified);
    if (message) this.#forward("server", frame, scan, this.#reencodeRequests ? message : undefined);
  }

  /**
   * Every item decided like a single message; what is left goes on as one batch. If deciding one
   * fails (its audit record cannot be written), nothing of the batch goes on, and every request in
   * it that has no answer yet gets one.
   */
  #clientBatch(frame: Frame, scan: number, items: Classified[]): void {
    const kept: Message[] = [];
    for (const [i, item] of items.entries()) {
      let message: Message | undefined;
      try {
        message = this.#admit(item);
      } catch (error) {
        this.#opts.log(`refused a client batch the proxy failed to handle: ${(error as Error).message}`);
        const unanswered = [
          ...items.slice(0, i).filter((it) => it.kind === "request" && this.#pending.take(it.id)),
          ...items.slice(i).filter((it) => it.kind === "request"),
        ];
        for (const it of unanswered) {
          if (it.kind !== "request") continue;
          this.#reply(
            errorResponse(it.id, {
              code: ErrorCode.InternalError,
              message:
                error instanceof AuditWriteError
                  ? "Internal error: mcpguard could not record the batch in its audit log; it was not forwarded"
                  : "Internal error: mcpguard could not handle the batch; it was not forwarded",
            }),
          );
        }
        return;
      }
      if (message) kept.push(message);
    }
    if (kept.length === 0) return;
    if (kept.length === items.length && !this.#reencodeRequests) this.#forward("server", frame, scan);
    else this.#opts.toServer(encodeMessage(kept));
  }

  /** One client message: the message to forward, or undefined when it was answered or dropped here. */
  #admit(item: Classified): Message | undefined {
    switch (item.kind) {
      case "invalid":
        this.#reply(
          errorResponse(item.id, {
            code: ErrorCode.InvalidRequest,
            message: `Invalid request: ${item.reason}`,
          }),
        );
        return undefined;
      case "batch":
        this.#reply(
          errorResponse(null, { code: ErrorCode.InvalidRequest, message: "Invalid request: nested batch" }),
        );
        return undefined;
      case "request":
        return this.#admitRequest(item);
      default:
        if (item.kind === "notification" && item.method === "notifications/cancelled")
          this.#cancel(item.message);
        // A call without an id: no server may run it (nobody could get its answer), and no layer
        // judges it, so a server that ran one anyway would run it unchecked. Dropped, said once.
        if (item.kind === "notification" && item.method === "tools/call" && this.#opts.interceptor) {
          if (!this.#droppedIdlessCall)
            this.#opts.log("dropped a tools/call without an id from the client: a call must be a request");
          this.#droppedIdlessCall = true;
          return undefined;
        }
        return this.#serverGone ? undefined : item.message;
    }
  }

  /**
   * The client gave up on a request: it is no longer in flight (a server need not answer it, and an
   * entry kept for each would grow without end), and a late answer to it is dropped without a word
   * where answers are inspected (the client ignores it), forwarded as it is elsewhere.
   */
  #cancel(message: Message): void {
    const id = own(own(message, "params"), "requestId");
    if ((typeof id !== "string" && typeof id !== "number") || !this.#pending.take(id)) return;
    this.#cancelled.add(id);
    if (this.#cancelled.size > MAX_CANCELLED)
      this.#cancelled.delete(this.#cancelled.values().next().value as JsonRpcId);
  }

  #admitRequest(item: Extract<Classified, { kind: "request" }>): Message | undefined {
    // An id used again after its request was cancelled names the new request from now on.
    this.#cancelled.delete(item.id);
    if (this.#serverGone) {
      this.#reply(
        errorResponse(item.id, {
          code: ErrorCode.ConnectionClosed,
          message: "Connection closed: the MCP server has exited",
        }),
      );
      return undefined;
    }
    if (this.#inspectsResults && this.#pending.hasLoose(item.id)) {
      this.#reply(
        errorResponse(item.id, {
          code: ErrorCode.InvalidRequest,
          message: `Invalid request: a request with id ${showId(item.id)} (or one a client would take for it) is already in flight`,
        }),
      );
      return undefined;
    }
    const params = own(item.message, "params");
    let call: ToolCall | undefined;
    // A call is read only where something reads it: a layer decides it, or the audit log records it.
    if (item.method === "tools/call" && (this.#opts.interceptor || this.#opts.audit)) {
      const read = toToolCall(params, this.#opts.interceptor !== undefined);
      const defaults = read.malformed ? undefined : this.#opts.interceptor?.callDefaults?.(read.call.name);
      call = defaults ? { ...read.call, arguments: withDefaults(read.call.arguments, defaults) } : read.call;
      const verdict = this.#decide(
        call,
        read.malformed
          ? {
              decision: "deny",
              layer: "proxy",
              rule: "proxy.malformed-call",
              reason: `the tools/call ${read.malformed}`,
            }
          : undefined,
      );
      if (verdict.decision === "deny") {
        this.#reply(
          resultResponse(item.id, toolError(`Blocked by mcpguard (${verdict.layer}): ${verdict.reason}`)),
        );
        return undefined;
      }
    }
    this.#pending.add(item.id, item.method, { method: item.method, params, call });
    return item.message;
  }

  /** Decide a call (or record a verdict already reached) and audit the decision. */
  #decide(call: ToolCall, reached?: Verdict): Verdict {
    const started = this.#opts.audit ? process.hrtime.bigint() : 0n;
    let verdict = reached ?? PASS_THROUGH;
    if (!reached && this.#opts.interceptor) {
      try {
        verdict = this.#opts.interceptor.toolCall(call);
      } catch (error) {
        this.#opts.log(
          `a layer failed on a call to ${JSON.stringify(call.name)}: ${(error as Error).message}`,
        );
        verdict = {
          decision: "deny",
          layer: "proxy",
          rule: "proxy.layer-error",
          reason: "a layer failed while checking the call, so it was not made",
        };
      }
    }
    this.#audit(call.name, call.arguments, started, verdict);
    return verdict;
  }

  #serverFrame(frame: Frame): void {
    if (isBlank(frame.body)) return;
    const scan = scanFrame(frame.body, this.#maxDepth);
    const refused = refusal(scan, this.#maxDepth);
    if (refused) {
      this.#opts.log(`dropped a message from the server (${frame.body.length} bytes): ${refused}`);
      return;
    }
    const decoded = decodeMessage(frame.body);
    if (!decoded.ok) {
      this.#opts.log(
        `dropped a malformed line from the server (${frame.body.length} bytes): ${decoded.detail}`,
      );
      return;
    }
    const classified = classify(decoded.value);
    if (classified.kind === "invalid") {
      this.#opts.log(`dropped an invalid message from the server: ${classified.reason}`);
      return;
    }
    if (classified.kind === "batch") {
      this.#serverBatch(frame, scan, decoded.value as unknown[], classified.items);
      return;
    }
    const message = this.#fromServer(classified);
    if (message) this.#toClient(frame, scan, classified.message, message);
  }

  /** Every item handled like a single message; what is left goes on as one batch. */
  #serverBatch(frame: Frame, scan: number, batch: unknown[], items: Classified[]): void {
    const kept: Message[] = [];
    let changed = false;
    let dropped = 0;
    let why = "";
    for (const item of items) {
      if (item.kind === "invalid" || item.kind === "batch") {
        if (dropped++ === 0) why = item.kind === "invalid" ? item.reason : "nested batch";
        changed = true;
        continue;
      }
      const message = this.#fromServer(item);
      if (message !== item.message) changed = true;
      if (message) kept.push(message);
    }
    // One line a batch, however many of its items were invalid.
    if (dropped === 1) this.#opts.log(`dropped an invalid message from a server batch: ${why}`);
    else if (dropped > 1)
      this.#opts.log(`dropped ${dropped} invalid messages from a server batch; the first: ${why}`);
    if (kept.length === 0) return;
    this.#toClient(frame, scan, batch, changed ? kept : batch);
  }

  /**
   * A server's message (or batch) on to the client: `original` is what the frame's body reads as,
   * `message` what the layers decided on (the same object when unchanged). See the header for
   * what is kept of the frame's bytes, and when it is re-encoded whole.
   */
  #toClient(frame: Frame, scan: number, original: unknown, message: unknown): void {
    if (this.#inspectsResults && hasDuplicateKey(frame.body)) {
      this.#opts.toClient(encodeMessage(message));
      return;
    }
    if (message === original) {
      this.#forward("client", frame, scan);
      return;
    }
    let text: string;
    try {
      text = spliceJson(frame.body.toString(), original, message);
    } catch {
      // The body is JSON that JSON.parse read: a splice that fails is a bug, and the re-encoding is safe.
      this.#opts.toClient(encodeMessage(message));
      return;
    }
    const body = escapeLineSeparators(Buffer.from(text));
    this.#opts.toClient(terminated(Buffer.concat([body, frame.raw.subarray(frame.body.length)])));
  }

  /** One server message: the message to forward (changed by a layer or not), or undefined to drop it. */
  #fromServer(item: Item): Message | undefined {
    if (item.kind !== "response") return this.#fromServerOwn(item.method, item.message);
    const request = this.#pending.take(item.id);
    if (!request) {
      if (!this.#inspectsResults) return item.message;
      if (item.id !== null && this.#cancelled.delete(item.id)) return undefined;
      this.#opts.log(
        `dropped a response from the server whose id ${showId(item.id)} is not exactly the id of a request in flight`,
      );
      return undefined;
    }
    this.#noteResponse(request, item.message);
    const hook = this.#opts.interceptor?.response;
    if (!hook) return item.message;
    const { call, params } = request.context;
    const change = this.#inspect(call?.name ?? request.method, call?.arguments ?? params, () =>
      hook(request.context, item.message),
    );
    if (change === "failed") {
      return errorResponse(request.id, {
        code: ErrorCode.InternalError,
        message: "Internal error: mcpguard could not inspect the server's answer, so it was withheld",
      });
    }
    return change?.message ?? item.message;
  }

  #fromServerOwn(method: string, message: Message): Message | undefined {
    const hook = this.#opts.interceptor?.serverMessage;
    if (!hook) return message;
    const change = this.#inspect(method, null, () => hook(method, message));
    if (change === "failed") {
      // Withheld from the client; a request still gets an answer, so the server does not wait for one.
      const id = own(message, "id");
      if (typeof id === "string" || typeof id === "number")
        this.#replyToServer(
          encodeMessage(
            errorResponse(id, {
              code: ErrorCode.InternalError,
              message: "Internal error: mcpguard could not inspect this request, so the client never got it",
            }),
          ),
        );
      return undefined;
    }
    if (change?.reply) {
      // Refused on the client's behalf: the server gets the answer, the client never the request.
      this.#replyToServer(encodeMessage(change.reply));
      return undefined;
    }
    return change?.message ?? message;
  }

  #replyToServer(bytes: Buffer): void {
    if (this.#opts.replyToServer) this.#opts.replyToServer(bytes);
    else this.#opts.toServer(bytes);
  }

  /** Run a result hook, audit a change; "failed" when the layer threw (the message is withheld). */
  #inspect(
    subject: string,
    args: unknown,
    hook: () => ResultChange | undefined,
  ): ResultChange | undefined | "failed" {
    const started = this.#opts.audit ? process.hrtime.bigint() : 0n;
    let change: ResultChange | undefined;
    try {
      change = hook();
    } catch (error) {
      this.#opts.log(
        `a layer failed on a message for ${JSON.stringify(subject)}: ${(error as Error).message}`,
      );
      return "failed";
    }
    try {
      if (change?.records) {
        for (const { subject: item, ...decision } of change.records) {
          this.#audit(item, args, started, decision);
          // An item the agent will not see (a tool withheld from a listing) is said where the operator looks.
          if (decision.decision === "deny")
            this.#opts.log(
              `withheld ${JSON.stringify(item)} from ${subject}: ${decision.reason} (${decision.rule})`,
            );
        }
      } else if (change) {
        const { layer, rule, reason } = change;
        this.#audit(subject, args, started, { decision: "modify", layer, rule, reason });
      }
    } catch (error) {
      // Unrecorded, the change is not made: the message is withheld, and a request still answered.
      this.#opts.log(`withheld a message for ${JSON.stringify(subject)}: ${(error as Error).message}`);
      return "failed";
    }
    return change;
  }

  #audit(
    subject: string,
    args: unknown,
    started: bigint,
    decision: Omit<Verdict, "decision"> & { decision: "allow" | "deny" | "modify" },
  ): void {
    // Without an audit log there is nothing to time or digest.
    if (!this.#opts.audit) return;
    const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
    this.#opts.audit.write({
      type: "decision",
      server: this.#serverName,
      tool: subject,
      config: this.#opts.config,
      layer: decision.layer,
      rule: decision.rule,
      decision: decision.decision,
      reason: decision.reason,
      latencyMs,
      argsDigest: digest(args),
      ...(decision.needs ? { needs: decision.needs } : {}),
    });
  }

  #noteResponse(request: PendingRequest<ForwardedRequest>, message: Message): void {
    if (request.method !== "initialize") return;
    this.#answeredInitialize = true;
    const name = own(own(own(message, "result"), "serverInfo"), "name");
    if (typeof name === "string") this.#claimedName = name.slice(0, 200);
  }

  /**
   * Send a message on: as the bytes received (line separators escaped when it holds any), or as
   * the re-serialization of `value` when one is given.
   */
  #forward(to: "server" | "client", frame: Frame, scan: number, value?: Message): void {
    const bytes =
      value !== undefined
        ? encodeMessage(value)
        : scan & SCAN_LINE_SEPARATOR
          ? terminated(escapeLineSeparators(frame.raw))
          : terminated(frame.raw);
    if (to === "server") this.#opts.toServer(bytes);
    else this.#opts.toClient(bytes);
  }

  #reply(message: Message): void {
    this.#opts.toClient(encodeMessage(message));
  }
}

/**
 * Whether the first bytes of a dropped frame show a request (a `method` member): then its id is
 * the sender's own, not that of a request it answers. A `method` nested in the first bytes of an
 * answer makes it pass for a request, which only leaves that request waiting, as before.
 */
const isRequestHead = (head: Buffer): boolean => /"method"\s*:/.test(head.toString("latin1"));

/**
 * The frame as received, ended by a newline: the last frame of a peer that exits mid-line has none,
 * and whatever the proxy writes after it (its own error for a request left unanswered) would
 * otherwise join the same line.
 */
const terminated = (raw: Buffer): Buffer =>
  raw.length > 0 && raw[raw.length - 1] !== 0x0a ? Buffer.concat([raw, NEWLINE]) : raw;
const NEWLINE = Buffer.from("\n");

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A copy of a call's arguments with the ones it omits put in from its tool's defaults (Interceptor.callDefaults). */
function withDefaults(
  args: Record<string, unknown>,
  defaults: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const filled = { ...args };
  for (const key of Object.keys(defaults)) {
    if (Object.hasOwn(args, key)) continue;
    // An own property whatever its name: `__proto__` set by assignment would change the prototype.
    Object.defineProperty(filled, key, {
      value: defaults[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return filled;
}

/**
 * The name and arguments of a `tools/call`, and (`check`: for the layers) what is wrong with its
 * params if anything: a call the layers could only read by guessing is refused, never coerced into
 * something that passes.
 */
function toToolCall(params: unknown, check: boolean): { call: ToolCall; malformed: string | null } {
  const name = own(params, "name");
  const args = own(params, "arguments");
  const call = { name: typeof name === "string" ? name : "", arguments: isObject(args) ? args : {} };
  const malformed = !check
    ? null
    : !isObject(params)
      ? "params is not an object"
      : typeof name !== "string"
        ? "name is not a string"
        : args !== undefined && !isObject(args)
          ? "arguments is not an object"
          : holdsLoneSurrogate(params)
            ? "holds a string that is not well-formed Unicode (a lone surrogate: a server may read it as another name than the one the layers judged)"
            : null;
  return { call, malformed };
}

/**
 * Whether a string holds no UTF-16 surrogate that is not half of a pair: String.prototype.isWellFormed
 * (ES2024, in every Node.js this runs on; the ES2023 lib does not declare it), native, so a call's
 * megabytes of content cost nothing noticeable on its path.
 */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Whether a string anywhere in `value`, key or value, holds a lone surrogate. JSON's `\udcff` is
 * one: the layers resolve it as U+FFFD (how Node.js encodes it for the file system), while a Python
 * server decodes it with `surrogateescape` to the byte 0xFF, so a path named by it is a different
 * file for the two: a link the layers never saw. (Message depth is bounded before decoding.)
 */
function holdsLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (!wellFormed(item)) return true;
    } else if (Array.isArray(item)) {
      for (const element of item) stack.push(element);
    } else if (typeof item === "object" && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        if (!wellFormed(key)) return true;
        stack.push(element);
      }
    }
  }
  return false;
}

function isBlank(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}
