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
import type { z } from "zod";
import { PathSet } from "./paths.js";
import type { ArgRole, OverrideFile, Policy, SqlClass } from "./schema.js";

export class PolicyError extends Error {
  override readonly name = "PolicyError";
}

/** Each zod issue as `file: field: message`. */
export function formatIssues(file: string, error: z.ZodError): string[] {
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
  schema: () => Promise<z.ZodType<T>>,
): Promise<T> {
  const json = readJson(file);
  return parseWith(file, json, await schema());
}

export function parseFile<T>(file: string, schema: z.ZodType<T>): T {
  return parseWith(file, readJson(file), schema);
}

function parseWith<T>(file: string, json: unknown, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new PolicyError(formatIssues(file, parsed.error).join("\n"));
  return parsed.data;
}

export function loadPolicy(file: string): Promise<Policy> {
  return loadValidated(file, "policy", async () => (await import("./schema.js")).Policy);
}

/** Overrides for `server`: a file, or `<dir>/<server>.json` when given a directory (absent is none). */
export async function loadOverrides(
  path: string | undefined,
  server: string,
): Promise<OverrideFile | undefined> {
  if (!path) return undefined;
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, `${server}.json`) : path;
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
  exec: string[];
  env: string[];
  sql: Set<SqlClass>;
  /** L2 rules an override turned off for this tool. */
  disabledRules: Set<string>;
}

export interface ResolvedPolicy {
  server: string;
  tools: Map<string, ResolvedTool>;
  /** Variables the server keeps at spawn beyond the world's. */
  keepEnv: Set<string>;
  variables: Variables;
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

/** The union of the tools' capabilities, for the kernel layer (which sees the server, not its tools). */
export function policyNeeds(policy: ResolvedPolicy): {
  read: string[];
  write: string[];
  exec: string[];
  network: string[];
  shell: boolean;
} {
  const tools = [...policy.tools.values()];
  const all = (f: (t: ResolvedTool) => readonly string[]) => [...new Set(tools.flatMap(f))];
  return {
    read: all((t) => t.read.roots),
    write: all((t) => t.write.roots),
    exec: all((t) => t.exec),
    network: all((t) => t.network),
    shell: tools.some((t) => Object.values(t.args).includes("command")),
  };
}

export function resolvePolicy(
  policy: Policy,
  overrides: OverrideFile | undefined,
  vars: Variables,
): ResolvedPolicy {
  const tools = new Map<string, ResolvedTool>();
  const keepEnv = new Set(policy.environment.keep);
  for (const override of overrides?.overrides ?? []) {
    if (override.tool && !(override.tool in policy.tools)) {
      throw new PolicyError(
        `override for tool "${override.tool}": the policy of "${policy.server}" declares no such tool`,
      );
    }
  }
  for (const [name, tool] of Object.entries(policy.tools)) {
    const scoped = (overrides?.overrides ?? []).filter((o) => o.tool === undefined || o.tool === name);
    const merged = (key: "read" | "write" | "network" | "exec" | "env") => [
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
      exec: merged("exec"),
      env: merged("env"),
      sql: new Set(tool.sql),
      disabledRules: new Set(scoped.flatMap((o) => o.disableRules)),
    };
    for (const name of resolved.env) keepEnv.add(name);
    tools.set(name, resolved);
  }
  return { server: policy.server, tools, keepEnv, variables: vars };
}
