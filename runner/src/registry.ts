/**
 * The server registries and the launch argv of a server in a given world: interpreter resolved,
 * script path made absolute, placeholders expanded, sink, marker and variant appended. `servers/registry.json` holds
 * the 14 victim servers (SERVERS.md §2); `servers/real/registry.json` the third-party servers of
 * the real suite (REAL.md), started from node_modules.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { Interpreters } from "./interpreters.js";
import { REPO_ROOT, repoPath } from "./paths.js";

export const ServerEntry = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_]*$/),
  language: z.enum(["python", "typescript", "javascript"]),
  argv: z.array(z.string().min(1)).min(2),
  sink: z.boolean(),
  /** The server takes the trial's marker (`--marker <marker>`) and plants it in what it says to the agent. */
  marker: z.boolean().optional(),
  /** Behaviours a case picks with its `variant` (`--variant <name>`). */
  variants: z
    .array(z.string().regex(/^[a-z0-9-]+$/))
    .min(1)
    .optional(),
  description: z.string().min(1),
});

/** What a real server adds to a victim's entry (REAL.md §2). */
export interface RealFields {
  /** The dependency of servers/real/package.json (often an alias) that ships the server. */
  package: string;
  /** Variables set for this server on top of the world's, as a client config's `env` would. */
  env?: Record<string, string>;
  /**
   * Paths the committed policy and manifest were written for, each bound to a world path per trial
   * (e.g. `/srv/mcp/workspace` -> `{{workspace}}`): a user derives a policy for the folder given on
   * the server's command line, and the benchmark's folder is new in every trial.
   */
  policyRoots?: Record<string, string>;
}

export const RealServerEntry = ServerEntry.extend({
  package: z.string().min(1),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
  policyRoots: z
    .record(
      z.string().regex(/^\/[^*{}]*[^/*{}]$/, "expected an absolute path without a trailing slash"),
      z.string().min(1),
    )
    .optional(),
});

export type ServerEntry = z.infer<typeof ServerEntry> & Partial<RealFields>;

export const Registry = z
  .strictObject({ servers: z.array(ServerEntry).min(1) })
  .superRefine((registry, ctx) => {
    const seen = new Set<string>();
    registry.servers.forEach((server, i) => {
      if (seen.has(server.id))
        ctx.addIssue({ code: "custom", path: ["servers", i, "id"], message: `duplicate id "${server.id}"` });
      seen.add(server.id);
      const expected = server.language === "python" ? "python3" : "node";
      if (server.argv[0] !== expected) {
        ctx.addIssue({
          code: "custom",
          path: ["servers", i, "argv", 0],
          message: `a ${server.language} server starts with "${expected}"`,
        });
      }
    });
  });

export function loadRegistry(path = repoPath("servers", "registry.json")): Map<string, ServerEntry> {
  const parsed = Registry.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error)}`);
  return new Map(parsed.data.servers.map((s) => [s.id, s]));
}

export const REAL_REGISTRY = repoPath("servers", "real", "registry.json");

/**
 * The npm cache of the real servers started with `npx` (gitignored): filled once, online, before
 * the first run that needs it (real.ts), then read offline by every trial. `{{npm.cache}}` in a
 * real server's `env` stands for it.
 */
export const NPM_CACHE = repoPath(".cache", "npm");

export const RealRegistry = z.strictObject({
  description: z.string().optional(),
  servers: z.array(RealServerEntry).min(1),
});

/** The real servers (`servers/real/registry.json`). */
export function loadRealRegistry(path = REAL_REGISTRY): Map<string, ServerEntry> {
  const parsed = RealRegistry.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error)}`);
  const servers = new Map<string, ServerEntry>();
  for (const server of parsed.data.servers) {
    if (servers.has(server.id)) throw new Error(`${path}: duplicate id "${server.id}"`);
    if (server.argv[0] !== "node" && server.argv[0] !== "npx")
      throw new Error(`${path}: ${server.id}: a real server starts with "node" or "npx"`);
    const env = server.env
      ? Object.fromEntries(
          Object.entries(server.env).map(([k, v]) => [k, v.replaceAll("{{npm.cache}}", NPM_CACHE)]),
        )
      : undefined;
    servers.set(server.id, { ...server, ...(env ? { env } : {}) });
  }
  return servers;
}

/** Every server a scenario may name: the victims and the real servers (their ids may not clash). */
export function loadAllServers(): Map<string, ServerEntry> {
  const all = loadRegistry();
  if (!existsSync(REAL_REGISTRY)) return all;
  for (const [id, server] of loadRealRegistry()) {
    if (all.has(id)) throw new Error(`${REAL_REGISTRY}: "${id}" is also a victim server's id`);
    all.set(id, server);
  }
  return all;
}

/** A repo-relative script path, absolute; a real server's script with its symlinks resolved. */
export function scriptPath(server: ServerEntry, arg: string): string {
  if (!arg.startsWith("servers/") || isAbsolute(arg)) return arg;
  const absolute = join(REPO_ROOT, arg);
  if (!server.package) return absolute;
  if (!existsSync(absolute))
    throw new Error(`${server.id}: ${arg} is missing; install the workspace (pnpm install) first`);
  return realpathSync(absolute);
}

/**
 * The argv that starts `server`: absolute interpreter, absolute script, placeholders (a real
 * server's root, `{{workspace}}`) expanded, `--sink` when it takes one.
 */
export function launchArgv(
  server: ServerEntry,
  interpreters: Interpreters,
  world: { sink: { host: string; port: number }; marker?: string; expand<T>(value: T): T },
  variant?: string,
): string[] {
  const [interpreter, ...rest] = server.argv;
  // npx is the one beside the runner's node (a launcher: the kernel layer resolves what it runs).
  const resolved =
    interpreter === "python3"
      ? interpreters.python
      : interpreter === "npx"
        ? join(dirname(interpreters.node), "npx")
        : interpreters.node;
  const args = rest.map((arg) => world.expand(scriptPath(server, arg)));
  const { sink } = world;
  return [
    resolved,
    ...args,
    ...(server.sink ? ["--sink", `${sink.host}:${sink.port}`] : []),
    ...(server.marker && world.marker ? ["--marker", world.marker] : []),
    ...(variant ? ["--variant", variant] : []),
  ];
}
