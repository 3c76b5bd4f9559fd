/**
 * The AgentBound-style baseline (config C-AB): one declarative manifest of permissions per server,
 * narrowed by operator scopes, enforced on each call's arguments at application level.
 *
 * It reproduces the baseline's shape and its limits on purpose: permissions are per server, not
 * per tool; arguments are recognised by their names; paths are normalised lexically (symlinks are
 * not resolved); a command is judged by its first program only; results are not inspected.
 */
import { isAbsolute, resolve } from "node:path";
import {
  type Decision,
  destinationAllowed,
  type FilteredEnvironment,
  filterEnvironment,
  loadValidated,
  PathSet,
  PolicyError,
  type Variables,
} from "@mcpguard/policy";
import { parseCommand } from "@mcpguard/readers";
import type { Manifest, Permission } from "./manifest.js";

export type { Manifest } from "./manifest.js";

export function loadManifest(file: string): Promise<Manifest> {
  return loadValidated(file, "agentbound-manifest", async () => (await import("./manifest.js")).Manifest);
}

type Kind = "path" | "url" | "command";

const PATH_NAME =
  /^(path|paths|file|files|filename|filepath|file_path|dir|directory|folder|src|source|dst|dest|destination|target|cwd)$/i;
const URL_NAME = /^(url|uri|href|link|endpoint|host|hostname|address)$/i;
const COMMAND_NAME = /^(command|cmd|shell|script|exec|program)$/i;
const DELETE_TOOL = /(delete|remove|rm|unlink|erase)/i;
const WRITE_TOOL = /(write|create|save|put|update|append|edit|move|rename|copy|mkdir|upload|set)/i;

/** What an argument is, by its name alone, as the baseline infers it. */
export function argumentKind(name: string): Kind | undefined {
  if (PATH_NAME.test(name)) return "path";
  if (URL_NAME.test(name)) return "url";
  if (COMMAND_NAME.test(name)) return "command";
  return undefined;
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

export class AgentBound {
  readonly #manifest: Manifest;
  readonly #vars: Variables;
  readonly #paths: Partial<Record<Permission, PathSet>> = {};

  constructor(manifest: Manifest, vars: Variables) {
    this.#manifest = manifest;
    this.#vars = vars;
    for (const permission of [
      "mcp.ac.filesystem.read",
      "mcp.ac.filesystem.write",
      "mcp.ac.filesystem.delete",
    ] as const) {
      const scope = manifest.scopes[permission];
      if (scope) this.#paths[permission] = new PathSet(scope.map((p) => this.#expand(p)));
    }
  }

  get server(): string {
    return this.#manifest.server;
  }

  #granted(permission: Permission): boolean {
    return this.#manifest.permissions.includes(permission);
  }

  #expand(pattern: string): string {
    return pattern.replace(/\{\{(cwd|home|tmp)\}\}/g, (_, name: keyof Variables) => {
      const value = this.#vars[name];
      if (!value)
        throw new PolicyError(`manifest "${this.server}" uses {{${name}}}, which is not set for the server`);
      return value.replace(/\/$/, "");
    });
  }

  /** What the manifest grants, for the kernel layer: paths, programs, destinations. */
  needs(): { read: string[]; write: string[]; exec: string[]; network: string[]; shell: boolean } {
    const roots = (p: Permission) => [...(this.#paths[p]?.roots ?? [])];
    const exec = this.#granted("mcp.ac.system.exec")
      ? (this.#manifest.scopes["mcp.ac.system.exec"] ?? [])
      : [];
    return {
      read: roots("mcp.ac.filesystem.read"),
      write: [...roots("mcp.ac.filesystem.write"), ...roots("mcp.ac.filesystem.delete")],
      exec,
      network: this.#granted("mcp.ac.network.client")
        ? (this.#manifest.scopes["mcp.ac.network.client"] ?? [])
        : [],
      // A server granted programs runs them through commands: the shell comes with exec.
      shell: exec.length > 0,
    };
  }

  /** The server's environment: the world's variables, plus those `mcp.ac.system.env.read` grants. */
  environment(env: NodeJS.ProcessEnv): FilteredEnvironment {
    const granted = this.#granted("mcp.ac.system.env.read");
    const scope = this.#manifest.scopes["mcp.ac.system.env.read"];
    const keep = granted ? new Set(scope ?? Object.keys(env)) : new Set<string>();
    return filterEnvironment(env, keep);
  }

  #checkPath(tool: string, value: string): Decision {
    const permission: Permission = DELETE_TOOL.test(tool)
      ? "mcp.ac.filesystem.delete"
      : WRITE_TOOL.test(tool)
        ? "mcp.ac.filesystem.write"
        : "mcp.ac.filesystem.read";
    if (!this.#granted(permission))
      return deny("ab.permission", `${this.server} is not granted ${permission}`);
    const scope = this.#paths[permission];
    const path = isAbsolute(value) ? resolve(value) : resolve(this.#vars.cwd, value);
    if (scope && !scope.match(path))
      return deny("ab.scope", `${path} is outside the ${permission} scope of ${this.server}`);
    return { allow: true };
  }

  #checkUrl(value: string): Decision {
    if (!this.#granted("mcp.ac.network.client"))
      return deny("ab.permission", `${this.server} is not granted mcp.ac.network.client`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      // An unparsable URL is refused, which is the answer.
      return deny("ab.scope", "the URL argument does not parse");
    }
    const scope = this.#manifest.scopes["mcp.ac.network.client"];
    const port = url.port || DEFAULT_PORTS[url.protocol] || "";
    if (scope && !destinationAllowed(url.hostname, port, scope)) {
      return deny(
        "ab.scope",
        `${url.hostname}:${port} is outside the mcp.ac.network.client scope of ${this.server}`,
      );
    }
    return { allow: true };
  }

  #checkCommand(value: string): Decision {
    if (!this.#granted("mcp.ac.system.exec"))
      return deny("ab.permission", `${this.server} is not granted mcp.ac.system.exec`);
    const scope = this.#manifest.scopes["mcp.ac.system.exec"];
    const program = parseCommand(value).commands[0]?.argv[0] ?? "";
    if (scope && !scope.includes(program)) {
      return deny(
        "ab.scope",
        `${program || "(nothing)"} is outside the mcp.ac.system.exec scope of ${this.server}`,
      );
    }
    return { allow: true };
  }

  /** The baseline's decision on one call. */
  check(tool: string, args: Record<string, unknown>): Decision {
    for (const [name, value] of Object.entries(args)) {
      if (typeof value !== "string") continue;
      const kind = argumentKind(name);
      const decision =
        kind === "path"
          ? this.#checkPath(tool, value)
          : kind === "url"
            ? this.#checkUrl(value)
            : kind === "command"
              ? this.#checkCommand(value)
              : ALLOWED;
      if (!decision.allow) return decision;
    }
    return ALLOWED;
  }
}

const ALLOWED: Decision = { allow: true };

function deny(rule: string, reason: string): Decision {
  return { allow: false, rule, reason };
}
