/**
 * The real suite (category `real`, docs/benchmark/REAL.md): third-party MCP servers pinned in
 * servers/real/package.json and started from node_modules. Their policies are written the way a
 * user writes one, for the folder given on the server's command line; the runner binds that folder
 * to the trial's own (`policyRoots`), since every trial has a fresh one.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Interpreters } from "./interpreters.js";
import { launchArgv, NPM_CACHE, type ServerEntry } from "./registry.js";
import { type PolicyFiles, policyFiles } from "./session.js";
import { serverPath } from "./world/world.js";

/** Replace a path that is, or lies under, one of the roots with the same path under its binding. */
export function rebindPath(value: string, roots: ReadonlyMap<string, string>): string {
  for (const [from, to] of roots) {
    if (value === from || value.startsWith(`${from}/`)) return to + value.slice(from.length);
  }
  return value;
}

/** Every string of a JSON value through {@link rebindPath}; keys are left alone. */
export function rebindJson<T>(value: T, roots: ReadonlyMap<string, string>): T {
  if (typeof value === "string") return rebindPath(value, roots) as T;
  if (Array.isArray(value)) return value.map((v) => rebindJson(v, roots)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebindJson(v, roots)])) as T;
  }
  return value;
}

/**
 * The policy files the proxy gets for `server` in this world: the committed ones, or for a real
 * server with `policyRoots` copies bound to the world's paths, written to `<base>.policy.json`
 * and `<base>.manifest.json` (outside the world; the trial removes them).
 */
export function bindPolicies(
  server: ServerEntry,
  world: { expand<T>(value: T): T },
  base: string,
  policiesDir?: string,
): PolicyFiles {
  const files = policyFiles(server.id, policiesDir);
  if (!server.policyRoots) return files;
  const roots = new Map(Object.entries(server.policyRoots).map(([from, to]) => [from, world.expand(to)]));
  const bound = { ...files, policy: `${base}.policy.json`, manifest: `${base}.manifest.json` };
  for (const key of ["policy", "manifest"] as const) {
    const value: unknown = JSON.parse(readFileSync(files[key], "utf8"));
    writeFileSync(bound[key], `${JSON.stringify(rebindJson(value, roots), null, 2)}\n`);
  }
  return bound;
}

export interface ResolvedRealServer {
  id: string;
  /** The dependency of servers/real/package.json, and the package and version it installs. */
  dependency: string;
  name: string | null;
  version: string | null;
  /** The script node starts, symlinks resolved (the pnpm store path); null when npx starts it. */
  script: string | null;
  /** `npx <spec>` for a server started through npx, offline from `npmCache`. */
  launcher?: string;
  npmCache?: string;
}

const NOWHERE = { sink: { host: "127.0.0.1", port: 0 }, expand: <T>(v: T) => v };

/** The package spec an `npx [-y] <spec> ...` argv runs. */
function npxSpec(server: ServerEntry): string {
  return server.argv.slice(1).find((a) => !a.startsWith("-")) ?? "";
}

/** What each real server of the run starts, resolved now (for manifest.json). */
export function resolveRealServers(servers: Iterable<ServerEntry>): ResolvedRealServer[] {
  const resolved: ResolvedRealServer[] = [];
  const world = NOWHERE;
  for (const server of servers) {
    if (!server.package) continue;
    if (server.argv[0] === "npx") {
      const spec = npxSpec(server);
      const at = spec.lastIndexOf("@");
      resolved.push({
        id: server.id,
        dependency: server.package,
        name: at > 0 ? spec.slice(0, at) : spec,
        version: at > 0 ? spec.slice(at + 1) : null,
        script: null,
        launcher: `npx ${spec}`,
        npmCache: NPM_CACHE,
      });
      continue;
    }
    const script =
      launchArgv(server, { node: "node", python: "", nodeVersion: "", pythonVersion: "" }, world)[1] ?? "";
    let name: string | null = null;
    let version: string | null = null;
    // The package.json nearest above the script is the package's own.
    for (let dir = dirname(script); dir !== dirname(dir); dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
          name?: string;
          version?: string;
        };
        name = pkg.name ?? null;
        version = pkg.version ?? null;
        break;
      } catch {
        // No package.json here: look further up.
      }
    }
    resolved.push({ id: server.id, dependency: server.package, name, version, script });
  }
  return resolved;
}

/**
 * Make sure every npx-started server of the run is in the npm cache, so that its trials start it
 * offline: start it once with the cache offline (its stdin closed, a server exits at once); when
 * that fails, once online to fill the cache, then offline again. Throws when it cannot be cached.
 */
export function prepareNpmCache(servers: Iterable<ServerEntry>, interpreters: Interpreters): void {
  for (const server of servers) {
    if (server.argv[0] !== "npx") continue;
    mkdirSync(NPM_CACHE, { recursive: true });
    const scratch = mkdtempSync(join(tmpdir(), "mcpguard-npx-"));
    try {
      const argv = launchArgv(server, interpreters, {
        ...NOWHERE,
        expand: <T>(v: T) => JSON.parse(JSON.stringify(v).replaceAll("{{workspace}}", scratch)) as T,
      });
      const start = (offline: boolean) =>
        spawnSync(argv[0] as string, argv.slice(1), {
          cwd: scratch,
          env: {
            PATH: serverPath(),
            HOME: scratch,
            npm_config_cache: NPM_CACHE,
            npm_config_offline: String(offline),
            npm_config_update_notifier: "false",
          },
          stdio: ["ignore", "ignore", "pipe"],
          encoding: "utf8",
          timeout: 180_000,
        });
      if (start(true).status === 0) continue;
      start(false);
      const again = start(true);
      if (again.status !== 0)
        throw new Error(
          `${server.id}: cannot cache ${npxSpec(server)} for npx in ${NPM_CACHE}: ${again.stderr.trim().slice(-400)}`,
        );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}
