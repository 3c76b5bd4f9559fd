import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LineFramer } from "@mcpguard/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));

/** The real CLI, as a client config would start it (built by `npm test` before the tests run). */
export const MCPGUARD = join(here, "..", "bin", "mcpguard.js");
export const FIXTURE = join(here, "fixtures", "server.mjs");
export const EVERYTHING = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);
/** The reference filesystem server (a devDependency), as `node <script> <folder>...` starts it. */
export const FILESYSTEM = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-filesystem/dist/index.js",
);
/** The reference knowledge-graph server, which keeps its graph in MEMORY_FILE_PATH. */
export const MEMORY = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-memory/dist/index.js",
);

export function proxied(argv: string[], runOptions: string[] = ["--config", "C0"]): string[] {
  return [MCPGUARD, "run", ...runOptions, "--", ...argv];
}

export interface Session {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
}

/** An SDK client over stdio: `node <args...>`. */
export async function connect(args: string[], env?: Record<string, string>, cwd?: string): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: env ?? (process.env as Record<string, string>),
    stderr: "pipe",
    cwd,
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "mcpguard-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/**
 * An SDK session through `mcpguard run --config <config> --policy <policy> --audit-log <log> [extra]`
 * over the fixture server, with the test's environment and `env` on top; `log` is its audit log.
 */
export async function auditedSession(options: {
  config: string;
  policy: string;
  log: string;
  extra?: string[];
  env?: Record<string, string>;
  cwd?: string;
}): Promise<Session & { log: string }> {
  const { config, policy, log } = options;
  const args = [MCPGUARD, "run", "--config", config, "--policy", policy, "--audit-log", log];
  const s = await connect(
    [...args, ...(options.extra ?? []), "--", process.execPath, FIXTURE],
    { ...(process.env as Record<string, string>), ...options.env },
    options.cwd,
  );
  return { ...s, log };
}

/** Pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(marker)) pids.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

/** The children of a process (its main thread's), by /proc: none once it is gone. */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    // Gone, or not readable: no children to follow.
    return [];
  }
}

/**
 * The host's number of a process below `ancestor`, from the number the server gave it: under the
 * L3 configs the server runs in a PID namespace of its own (bpf/launcher.c, --isolate pid), where
 * the pids it reports are that namespace's (the last field of NSpid). The pid itself where no
 * process below `ancestor` has it there (no namespace).
 */
export function hostPid(pid: number, ancestor: number): number {
  for (let queue = children(ancestor); queue.length > 0; ) {
    const next = queue.shift() as number;
    try {
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${next}/status`, "utf8"))?.[1]?.split(/\s+/);
      if (nspid && nspid.length > 1 && Number(nspid.at(-1)) === pid) return next;
    } catch {
      // Exited while we looked.
    }
    queue.push(...children(next));
  }
  return pid;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); it is gone for our purposes.
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

export async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** `mcpguard run` driven byte by byte, for what an SDK client would never send. */
export class RawProxy {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = "";
  #lines: string[] = [];
  #waiters: ((line: string) => void)[] = [];

  constructor(runArgs: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.child = spawn(process.execPath, [MCPGUARD, "run", ...runArgs], { stdio: "pipe", ...options });
    const framer = new LineFramer({
      frame: ({ body }) => {
        const line = body.toString("utf8");
        const waiter = this.#waiters.shift();
        if (waiter) waiter(line);
        else this.#lines.push(line);
      },
      error: (error) => {
        throw error;
      },
    });
    this.child.stdout.on("data", (chunk: Buffer) => framer.push(chunk));
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
  }

  send(data: string | Buffer): void {
    this.child.stdin.write(data);
  }

  request(id: number | string, method: string, params?: unknown): void {
    this.send(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  }

  /** The next line the proxy wrote to stdout, parsed. */
  next(ms = 5000): Promise<Record<string, unknown>> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(JSON.parse(line));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no output within ${ms} ms; stderr: ${this.stderr}`)),
        ms,
      );
      this.#waiters.push((l) => {
        clearTimeout(timer);
        resolve(JSON.parse(l));
      });
    });
  }

  /** Everything written to stdout after the last `next()`. */
  get unread(): string[] {
    return [...this.#lines];
  }

  async initialize(): Promise<void> {
    this.request(0, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    });
    await this.next();
    this.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }
}

/** A scratch directory holding `work/readme.txt` ("inside") and, beside `work`, `outside.txt` ("outside"). */
export function makeWorkspace(prefix: string): { scratch: string; work: string } {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const work = join(scratch, "work");
  mkdirSync(work);
  writeFileSync(join(work, "readme.txt"), "inside");
  writeFileSync(join(scratch, "outside.txt"), "outside");
  return { scratch, work };
}

/** A workspace (makeWorkspace) and, beside it, a policy for the fixture server granting `tools`. */
export function workspaceWithPolicy(
  prefix: string,
  tools: Record<string, unknown>,
): { scratch: string; work: string; policy: string } {
  const { scratch, work } = makeWorkspace(prefix);
  const policy = join(scratch, "policy.json");
  writeFileSync(policy, JSON.stringify({ version: 1, server: "proxy-fixture", tools }));
  return { scratch, work, policy };
}

/** The text of a tool result's first content item. */
export const toolText = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

/** Every line of an NDJSON file (an audit log), parsed. */
export const readNdjson = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
