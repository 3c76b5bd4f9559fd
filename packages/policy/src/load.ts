/**
 * Loading policies and overrides: validated with clear errors (file, field, what was expected), then
 * resolved for one server start: variables replaced, overrides merged, path patterns compiled.
 *
 * Every load validates the file itself; nothing is cached. A cached policy would have to be parsed
 * with the same schema as the file on every read (a planted cache entry once widened a policy to
 * read "/**"), and that parse, with loading the schemas, is all the work a cache could save here.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { StatementClass } from "@mcpguard/readers";
import type * as z from "zod/mini";
import { canonicalPath, PathSet } from "./paths.js";
import type { ArgRole, OverrideFile, Policy, SqlClass, SqlStatements } from "./schema.js";

export class PolicyError extends Error {
  override readonly name = "PolicyError";
}

/** Each zod issue as `file: field: message`. */
export function formatIssues(file: string, error: z.core.$ZodError): string[] {
  return error.issues.map(
    (issue) => `${file}: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`,
  );
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new PolicyError(
      `${file}: cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PolicyError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
}

export function readJson(file: string): unknown {
  return parseJson(file, readText(file));
}

/**
 * Read a JSON file and validate it with the schema `schema()` loads; `_kind` names the schema for
 * callers. The schemas are loaded on first use only: they cost more than the rest of a proxy start,
 * and C0 needs none.
 */
export async function loadValidated<T>(
  file: string,
  _kind: string,
  schema: () => Promise<z.ZodMiniType<T>>,
): Promise<T> {
  const json = readJson(file);
  return parseWith(file, json, await schema());
}

function parseWith<T>(file: string, json: unknown, schema: z.ZodMiniType<T>): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new PolicyError(formatIssues(file, parsed.error).join("\n"));
  return parsed.data;
}

export function loadPolicy(file: string): Promise<Policy> {
  return loadValidated(file, "policy", async () => (await import("./schema.js")).Policy);
}

/**
 * Overrides for `server`: a file, or `<dir>/<server>.json` when given a directory (a directory
 * without one is none). A path that names nothing is refused: a mistyped path would otherwise
 * silently drop the operator's overrides.
 */
export async function loadOverrides(
  path: string | undefined,
  server: string,
): Promise<OverrideFile | undefined> {
  if (!path) return undefined;
  if (!existsSync(path)) throw new PolicyError(`${path}: no such overrides file or folder`);
  const file = statSync(path).isDirectory() ? join(path, `${server}.json`) : path;
  if (!existsSync(file)) return undefined;
  const overrides = await loadValidated(
    file,
    "overrides",
    async () => (await import("./schema.js")).OverrideFile,
  );
  if (overrides.server !== server) {
    throw new PolicyError(
      `${file}: server: overrides are for "${overrides.server}", the policy is for "${server}"`,
    );
  }
  return overrides;
}

export interface Variables {
  cwd: string;
  home?: string;
  tmp?: string;
}

export interface ResolvedTool {
  name: string;
  args: Record<string, ArgRole>;
  read: PathSet;
  write: PathSet;
  network: string[];
  /** Pathname unix sockets the server may connect or send to, variables expanded. */
  sockets: string[];
  exec: string[];
  env: string[];
  /** The statement classes a `sql` argument may use, `ddl` spelled out as schema and drop. */
  sql: Set<StatementClass>;
  sqlStatements: SqlStatements;
  /** L2 rules an override turned off for this tool (argument checks and sanitizer rules). */
  disabledRules: Set<string>;
  /** Path arguments relative to another argument's value: argument -> its base argument. */
  base: Readonly<Record<string, string>>;
}

export interface ResolvedPolicy {
  server: string;
  tools: Map<string, ResolvedTool>;
  /** L2 rules an override turned off for the whole server (for messages that belong to no tool). */
  disabledRules: Set<string>;
  /** Variables the server keeps at spawn beyond the world's. */
  keepEnv: Set<string>;
  variables: Variables;
  /** The folder relative path arguments resolve against (the policy's `relativeTo`, else cwd). */
  relativeTo: string;
  /** "refuse": the server's folder for relative paths is unknown, and a relative path is refused. */
  relativePaths: "resolve" | "refuse";
}

function expand(pattern: string, vars: Variables, where: string): string {
  return pattern.replace(/\{\{(cwd|home|tmp)\}\}/g, (_, name: keyof Variables) => {
    const value = vars[name];
    if (!value) {
      const source = name === "home" ? "HOME" : name === "tmp" ? "TMPDIR" : "the working directory";
      throw new PolicyError(`${where} uses {{${name}}}, but ${source} is not set for the server`);
    }
    return value.replace(/\/$/, "");
  });
}

function statementClasses(classes: readonly SqlClass[]): Set<StatementClass> {
  return new Set(classes.flatMap((c): StatementClass[] => (c === "ddl" ? ["schema", "drop"] : [c])));
}

/**
 * Directories that no grant may cover entirely unless the policy (or the override that adds the
 * grant) says `"allowBroadGrants": true`: the root, every home, and the server's HOME.
 */
function broadDirectories(vars: Variables): string[] {
  const dirs = ["/", "/home", "/root", ...(vars.home ? [vars.home] : [])];
  return [...new Set(dirs.map((dir) => canonicalPath(dir, "/").canonical))];
}

/**
 * The first of `dirs` that `pattern` (expanded) covers entirely: its fixed directory (the part
 * before its first wildcard, which is what the kernel layer grants) is that directory, or it
 * matches any file beneath it.
 */
export function broadCoverage(pattern: string, dirs: readonly string[]): string | undefined {
  const set = new PathSet([pattern]);
  const root = set.roots[0];
  return dirs.find(
    (dir) => dir === root || set.match(`${dir === "/" ? "" : dir}/.mcpguard-probe/any`) !== undefined,
  );
}

/**
 * Refuse, in one line naming the tool and the grant, a read or write grant that covers a broad
 * directory entirely without an explicit allowance: a pattern is never silently widened.
 */
function refuseBroadGrants(policy: Policy, overrides: OverrideFile | undefined, vars: Variables): void {
  const dirs = broadDirectories(vars);
  for (const [name, tool] of Object.entries(policy.tools)) {
    const where = `policy "${policy.server}", tool "${name}"`;
    const sources = [
      ...(policy.allowBroadGrants ? [] : [{ allow: tool, from: where, fix: "the policy" }]),
      ...(overrides?.overrides ?? []).flatMap((o, i) =>
        (o.tool === undefined || o.tool === name) && !o.allowBroadGrants
          ? [{ allow: o.allow, from: `${where}, override ${i + 1}`, fix: "the override" }]
          : [],
      ),
    ];
    for (const { allow, from, fix } of sources) {
      for (const key of ["read", "write"] as const) {
        for (const pattern of allow[key] ?? []) {
          const expanded = expand(pattern, vars, where);
          const dir = broadCoverage(expanded, dirs);
          if (dir === undefined) continue;
          const shown = expanded === pattern ? `"${pattern}"` : `"${pattern}" (${expanded})`;
          throw new PolicyError(
            `${from}: the ${key} grant ${shown} covers ${dir} entirely; refused ` +
              `(give the folders the tool needs, or set "allowBroadGrants": true in ${fix})`,
          );
        }
      }
    }
  }
}

/** The union of the tools' capabilities, for the kernel layer (which sees the server, not its tools). */
export function policyNeeds(
  policy: ResolvedPolicy,
  options: { withL1?: boolean } = {},
): {
  read: string[];
  write: string[];
  exec: string[];
  network: string[];
  sockets: string[];
  shell: boolean;
} {
  const tools = [...policy.tools.values()];
  const all = (f: (t: ResolvedTool) => readonly string[]) => [...new Set(tools.flatMap(f))];
  const shell = tools.some((t) => Object.values(t.args).includes("command"));
  const exec = all((t) => t.exec);
  // L1 lets a command line use env as the shell's `NAME=value cmd` prefix (command.ts) and judges
  // the command it runs, so the kernel must let env run. L1 still refuses bare env (it prints the
  // environment) unless listed, and the environment under L1 is filtered. Without L1 (C-ebpf) the
  // kernel cannot tell the two uses apart: env stays where the policy puts it.
  if (options.withL1 && shell && !exec.includes("env")) exec.push("env");
  return {
    read: all((t) => t.read.roots),
    write: all((t) => t.write.roots),
    exec,
    network: all((t) => t.network),
    sockets: all((t) => t.sockets),
    shell,
  };
}

export function resolvePolicy(
  policy: Policy,
  overrides: OverrideFile | undefined,
  vars: Variables,
): ResolvedPolicy {
  const tools = new Map<string, ResolvedTool>();
  const keepEnv = new Set(policy.environment.keep);
  refuseBroadGrants(policy, overrides, vars);
  for (const override of overrides?.overrides ?? []) {
    if (override.tool && !(override.tool in policy.tools)) {
      throw new PolicyError(
        `override for tool "${override.tool}": the policy of "${policy.server}" declares no such tool`,
      );
    }
  }
  for (const [name, tool] of Object.entries(policy.tools)) {
    const scoped = (overrides?.overrides ?? []).filter((o) => o.tool === undefined || o.tool === name);
    const merged = (key: "read" | "write" | "network" | "sockets" | "exec" | "env") => [
      ...tool[key],
      ...scoped.flatMap((o) => o.allow[key] ?? []),
    ];
    const where = `policy "${policy.server}", tool "${name}"`;
    const resolved: ResolvedTool = {
      name,
      args: tool.args,
      read: new PathSet(merged("read").map((p) => expand(p, vars, where))),
      write: new PathSet(merged("write").map((p) => expand(p, vars, where))),
      network: merged("network"),
      sockets: merged("sockets").map((p) => expand(p, vars, where)),
      exec: merged("exec"),
      env: merged("env"),
      sql: statementClasses(tool.sql),
      sqlStatements: tool.sqlStatements,
      disabledRules: new Set(scoped.flatMap((o) => o.disableRules)),
      base: tool.base,
    };
    for (const name of resolved.env) keepEnv.add(name);
    tools.set(name, resolved);
  }
  const disabledRules = new Set(
    (overrides?.overrides ?? []).filter((o) => o.tool === undefined).flatMap((o) => o.disableRules),
  );
  const relativeTo = policy.relativeTo
    ? expand(policy.relativeTo, vars, `policy "${policy.server}", relativeTo`)
    : vars.cwd;
  const relativePaths = policy.relativePaths ?? "resolve";
  return { server: policy.server, tools, disabledRules, keepEnv, variables: vars, relativeTo, relativePaths };
}
