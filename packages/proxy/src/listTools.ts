/**
 * Start a server, complete the MCP handshake and read its `tools/list` (every page): what
 * `mcpguard policy derive` works from. The server runs in its own containment and is stopped after.
 *
 * The client declares what it can so that the server lists every tool it has: a server registers
 * some tools only for clients with roots, sampling or elicitation. Roots are answered with the
 * roots given; sampling and elicitation requests are refused (a draft is made from listings, not
 * calls). A tool whose listing does not fit the MCP schema is skipped with the reason, never read
 * in half; a server that does not start or answer is a {@link ListingError} in one line.
 */
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { classify, decodeMessage, encodeMessage, LineFramer, type Message } from "@mcpguard/protocol";
import { InitializeResult, Tool } from "@mcpguard/protocol/mcp";

import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { type Containment, createContainment } from "./containment.js";
import { hold } from "./helperExit.js";
import { ReaperError } from "./reaper.js";

const PROTOCOL_VERSION = "2025-11-25";

/** How long a server that announces tool changes may take to announce one after a listing. */
const SETTLE_MS = 300;

/** What a shell's exit status says about a command it could not run. */
const EXIT_MEANING: Record<number, string> = { 126: ": cannot execute", 127: ": command not found" };

export interface ServerListing {
  serverInfo: { name: string; version: string };
  tools: Tool[];
  /** Tools whose listing does not fit the MCP schema: left out, with why. */
  skipped: { name: string; reason: string }[];
}

export interface ListOptions {
  /** Folders to declare as the client's roots (absolute), answered on `roots/list`. */
  roots?: readonly string[];
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** A server that could not be listed: one line saying why. */
export class ListingError extends Error {
  override readonly name = "ListingError";
}

/**
 * The most pages of tools/list read, and tools kept: a server whose cursor never ends (or that
 * lists without end) is refused in one line, well before the time limit, and never fills memory.
 */
const MAX_PAGES = 1000;
const MAX_TOOLS = 100_000;

const Page = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.optional(z.string()) });

function firstIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join(".") || "(root)"}: ${issue?.message}`;
}

/** Each tool of a page read alone: the ones that fit, and the others with the reason. */
function readPage(value: unknown, listing: Pick<ServerListing, "tools" | "skipped">): string | undefined {
  const page = Page.safeParse(value);
  if (!page.success) {
    throw new ListingError(
      `the server's tools/list result does not fit the MCP schema: ${firstIssue(page.error)}`,
    );
  }
  page.data.tools.forEach((raw, i) => {
    const tool = Tool.safeParse(raw);
    if (tool.success) {
      listing.tools.push(tool.data);
      return;
    }
    const name = (raw as { name?: unknown } | null)?.name;
    listing.skipped.push({
      name: typeof name === "string" ? name : `#${i + 1}`,
      reason: `does not fit the MCP schema: ${firstIssue(tool.error)}`,
    });
  });
  return page.data.nextCursor;
}

/** The client's answer to a request the server sends it during the listing. */
function answerServer(method: string, roots: readonly string[]): { result?: unknown; error?: unknown } {
  switch (method) {
    case "ping":
      return { result: {} };
    case "roots/list":
      return {
        result: { roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir })) },
      };
    case "elicitation/create":
      return { result: { action: "decline" } };
    case "sampling/createMessage":
      return { error: { code: -1, message: "mcpguard policy derive does not sample" } };
    default:
      return { error: { code: -32601, message: `Method not found: ${method}` } };
  }
}

/** What the listing client declares: roots, and sampling, elicitation and tasks it refuses. */
const CAPABILITIES = {
  roots: { listChanged: false },
  sampling: {},
  elicitation: { form: {}, url: {} },
  tasks: {
    list: {},
    cancel: {},
    requests: { sampling: { createMessage: {} }, elicitation: { create: {} } },
  },
};

/** A server started for a short exchange: its handshake done, requests answered in turn, then stopped. */
export interface ShortSession {
  init: z.infer<typeof InitializeResult>;
  /** Send a request; its result, or a {@link ListingError} (the server refused, exited or timed out). */
  request(method: string, params: unknown): Promise<unknown>;
  /** Send a notification. */
  notify(method: string): void;
  /** How many times the server said its tools changed. */
  toolsChanged(): number;
  /** Settles once the server has asked for the client's roots (a server that never asks: never). */
  rootsAsked: Promise<void>;
  onToolsChanged: (() => void) | undefined;
  /** Stop the server and everything it started. */
  close(): Promise<void>;
}

/**
 * Start `argv` in a containment of its own, complete the MCP handshake (the client declaring
 * `roots` and answering them), and hand back a session. `clientName` names the client to the server.
 * The server is held (helperExit.ts) until close(): a signal to the helper stops it and removes its
 * cgroup, and so does the exit of the helper by any path; a reaper, where one is built, does so
 * when the helper is killed outright.
 */
// long: one start-to-handshake sequence whose every way out shares the cleanup closures it builds
export async function openShortSession(
  argv: readonly string[],
  options: ListOptions & { cwd?: string; clientName?: string; graceMs?: number } = {},
): Promise<ShortSession> {
  const { roots = [], timeoutMs = 15_000, graceMs = 0 } = options;
  const containment = createContainment();
  let child: ReturnType<typeof spawnServer> | undefined;
  let closing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  // Each way the session ends: the server (and what it started) stopped, its cgroup removed.
  const close = (signal?: NodeJS.Signals): Promise<void> => {
    closing ??= (async () => {
      clearTimeout(timer);
      const pid = child?.pid;
      if (pid && graceMs > 0 && child?.exitCode === null && child.signalCode === null) {
        // It may stop on its own first: at the end of its input, or on the helper's signal.
        if (signal) child.kill(signal);
        child.stdin.end();
        await containment.settled(pid, graceMs);
      }
      child?.stdin.end();
      if (pid) await containment.killAll(pid);
      containment.dispose();
      await containment.release();
      letGo();
    })();
    return closing;
  };
  const letGo = hold({
    stop: (signal) => close(signal),
    stopNow: () => {
      clearTimeout(timer);
      containment.killSync(child?.pid);
      containment.dispose();
    },
  });
  try {
    await superviseShortSession(containment);
    child = spawnServer(containment, argv, options);
    containment.serverStarted();
  } catch (error) {
    await close();
    throw error;
  }
  const server = child;
  const waiting = new Map<number, (message: Message) => void>();
  let changed = 0;
  let rootsAsked!: () => void;
  const asked = new Promise<void>((resolve) => {
    rootsAsked = resolve;
  });
  const session: Partial<ShortSession> & { onToolsChanged: (() => void) | undefined } = {
    onToolsChanged: undefined,
  };
  const framer = new LineFramer({
    frame: ({ body }) => {
      const decoded = decodeMessage(body);
      if (!decoded.ok) return;
      const c = classify(decoded.value);
      if (c.kind === "response" && typeof c.id === "number") waiting.get(c.id)?.(c.message);
      else if (c.kind === "request") {
        const reply = answerServer(c.method, roots);
        server.stdin.write(encodeMessage({ jsonrpc: "2.0", id: c.id, ...reply } as Message));
        if (c.method === "roots/list") rootsAsked();
      } else if (c.kind === "notification" && c.method === "notifications/tools/list_changed") {
        changed++;
        session.onToolsChanged?.();
      }
    },
    error: () => {},
  });
  server.stdout.on("data", (chunk: Buffer) => framer.push(chunk));
  server.stdin.on("error", () => {});
  let nextId = 0;
  let step = "initialize";
  const failed = new Promise<never>((_, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new ListingError(
          error.code === "ENOENT"
            ? `cannot start the server: ${argv[0]} not found`
            : `cannot start the server: ${error.message}`,
        ),
      ),
    );
    server.once("exit", (code, signal) =>
      reject(
        new ListingError(
          `the server exited (${signal ? `killed by ${signal}` : `status ${code}${EXIT_MEANING[code ?? -1] ?? ""}`}) before answering ${step}`,
        ),
      ),
    );
  });
  failed.catch(() => {});
  // One timer: the time-out is said before the kill, whose exit would otherwise race it to the reason.
  // A server given a grace is stopped by close(), which the caller's handling of the error runs.
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ListingError(`the server did not answer ${step} within ${timeoutMs / 1000} s`));
      if (graceMs === 0) server.kill("SIGKILL");
    }, timeoutMs);
  });
  timedOut.catch(() => {});
  const request = (method: string, params: unknown): Promise<unknown> => {
    const id = ++nextId;
    step = method;
    const answer = new Promise<Message>((resolve) => waiting.set(id, resolve));
    server.stdin.write(encodeMessage({ jsonrpc: "2.0", id, method, params }));
    return Promise.race([answer, failed, timedOut]).then((message) => {
      if (message.error)
        throw new ListingError(`the server refused ${method}: ${JSON.stringify(message.error)}`);
      return message.result ?? {};
    });
  };
  try {
    const init = InitializeResult.safeParse(
      await request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: CAPABILITIES,
        clientInfo: { name: options.clientName ?? "mcpguard-policy-derive", version: "1.0.0" },
      }),
    );
    if (!init.success) {
      throw new ListingError(
        `the server's initialize result does not fit the MCP schema: ${firstIssue(init.error)}`,
      );
    }
    server.stdin.write(encodeMessage({ jsonrpc: "2.0", method: "notifications/initialized" }));
    return Object.assign(session, {
      init: init.data,
      request,
      notify: (method: string) => server.stdin.write(encodeMessage({ jsonrpc: "2.0", method })),
      toolsChanged: () => changed,
      rootsAsked: asked,
      close: () => close(),
    }) as ShortSession;
  } catch (error) {
    await close();
    throw error;
  }
}

/** The server's process, in its containment, in a session of its own (its process group's leader). */
function spawnServer(
  containment: Containment,
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string },
) {
  const [command, ...args] = containment.wrap(argv);
  return spawn(command as string, args, {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
    env: options.env ?? process.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
}

/**
 * The reaper (reaper.ts), started before the server: it removes the server's cgroup when the
 * helper is killed outright (SIGKILL), which no handler of the helper sees. Where it is not built
 * or does not start, the helper's own handlers are what cleans up.
 */
async function superviseShortSession(containment: Containment): Promise<void> {
  const { binaries } = await import("@mcpguard/kernel/binaries");
  let reaper: string;
  try {
    reaper = binaries().reaper;
  } catch {
    // No kernel layer build here: the listing runs without a reaper.
    return;
  }
  try {
    await containment.supervise(reaper, () => {});
  } catch (error) {
    if (!(error instanceof ReaperError)) throw error;
  }
}

export async function listTools(argv: readonly string[], options: ListOptions = {}): Promise<ServerListing> {
  const session = await openShortSession(argv, options);
  try {
    const { init } = session;
    // A server may register tools once it knows the client (after initialized, or once it has
    // the client's roots): list again when it says its tools changed, a few times at most. A
    // server that can say so gets a moment to say it after each listing.
    const announces =
      (init.capabilities as { tools?: { listChanged?: boolean } }).tools?.listChanged === true;
    let listing: ServerListing;
    for (let round = 0; ; round++) {
      const seen = session.toolsChanged();
      listing = { serverInfo: init.serverInfo, tools: [], skipped: [] };
      let cursor: string | undefined;
      let pages = 0;
      do {
        if (++pages > MAX_PAGES || listing.tools.length + listing.skipped.length > MAX_TOOLS)
          throw new ListingError(
            `the server's tools/list goes on past ${MAX_PAGES} pages or ${MAX_TOOLS.toLocaleString("en")} tools`,
          );
        cursor = readPage(await session.request("tools/list", cursor ? { cursor } : {}), listing);
      } while (cursor);
      if (announces && session.toolsChanged() === seen && round < 3) {
        await new Promise<void>((resolve) => {
          const quiet = setTimeout(resolve, SETTLE_MS);
          session.onToolsChanged = () => {
            clearTimeout(quiet);
            resolve();
          };
        });
        session.onToolsChanged = undefined;
      }
      if (session.toolsChanged() === seen || round === 3) break;
    }
    return listing;
  } finally {
    await session.close();
  }
}
