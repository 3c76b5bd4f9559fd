/**
 * A least-privilege draft policy from a server's `tools/list`: argument roles from the input
 * schemas, the fewest capabilities those roles need, and the tool annotations applied last. An
 * annotation can only take a capability away (readOnlyHint drops writes, openWorldHint false drops
 * the network), never add one: annotations come from the server, which is not trusted.
 *
 * Path tools get the server's roots (the folders on its command line and the client's roots), as
 * absolute grants: never `{{cwd}}`, which is wherever the client starts the proxy (`/` for a
 * desktop client). Tools that take no path get the files the server keeps its data in.
 */
import type { ArgRole, Policy, ToolPolicy } from "./schema.js";

/** What a draft is made from beyond the listing: where the server works, and what was left out. */
export interface DeriveContext {
  /** Folders the server works in, absolute: granted to its path tools. */
  roots: readonly string[];
  /** Files it keeps its data in, absolute: granted to its tools that take no path. */
  dataFiles?: readonly string[];
  /** Environment variables it needs at spawn (a data file's location). */
  keepEnv?: readonly string[];
  /** Tools left out of the draft, and why. */
  skipped?: readonly { name: string; reason: string }[];
  /** What the reviewer should know about the roots and files (where they came from). */
  notes?: readonly string[];
  /** The folder the server resolves relative paths against, when it is not its working directory. */
  relativeTo?: string;
}

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: { properties?: Record<string, unknown> };
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

const PATH =
  /^(path|paths|file|files|filename|filepath|dir|directory|folder|src|source|dst|dest|destination|target)$|_(path|file|dir)$/i;
const URL = /^(url|uri|href|link|endpoint)$|_url$/i;
const COMMAND = /^(command|cmd|script|shell)$/i;
const SQL = /^(sql|statement)$|_sql$/i;
const KEY = /^(key|setting|variable|env_?var)$/i;
const IDENTIFIER = /^(table|column|schema)$/i;
const WRITE_TOOL =
  /(write|create|save|put|update|append|edit|move|rename|copy|mkdir|upload|delete|remove|set|add|insert|store|patch|replace|modify)/i;

function roleOf(name: string, schema: Record<string, unknown>, tool: ListedTool): ArgRole {
  const type = schema.type;
  if (type === "number" || type === "integer" || type === "boolean" || Array.isArray(schema.enum))
    return "scalar";
  if (type === "object") return "record";
  if (schema.format === "uri" || URL.test(name)) return "url";
  if (PATH.test(name)) {
    const writes = tool.annotations?.readOnlyHint !== true && WRITE_TOOL.test(tool.name);
    return writes ? "path.write" : "path.read";
  }
  if (COMMAND.test(name)) return "command";
  if (SQL.test(name) || (name === "query" && /\bsql\b/i.test(tool.description ?? ""))) return "sql";
  if (KEY.test(name)) return "key";
  if (IDENTIFIER.test(name)) return "identifier";
  return "text";
}

/** Whether a tool takes a path argument (by the role derive gives each argument). */
export function takesPath(tool: ListedTool): boolean {
  return Object.entries(tool.inputSchema?.properties ?? {}).some(([name, schema]) =>
    roleOf(name, (schema ?? {}) as Record<string, unknown>, tool).startsWith("path."),
  );
}

/** A grant of everything beneath `dir`. */
const beneath = (dir: string) => `${dir.replace(/\/$/, "")}/**`;

export function deriveTool(tool: ListedTool, context: DeriveContext = { roots: [] }): ToolPolicy {
  const notes: string[] = [];
  // fromEntries defines own properties: an argument the server names "__proto__" stays an argument.
  const args: Record<string, ArgRole> = Object.fromEntries(
    Object.entries(tool.inputSchema?.properties ?? {}).map(([name, schema]) => [
      name,
      roleOf(name, (schema ?? {}) as Record<string, unknown>, tool),
    ]),
  );
  const roles = new Set(Object.values(args));
  const policy: ToolPolicy = {
    args,
    read: [],
    write: [],
    network: [],
    exec: [],
    env: [],
    sql: ["read"],
    sqlStatements: "many",
  };
  const paths = roles.has("path.read") || roles.has("path.write");
  if (paths) {
    policy.read = context.roots.map(beneath);
    if (roles.has("path.write")) policy.write = context.roots.map(beneath);
    if (context.roots.length === 0)
      notes.push("takes a path, but no folder was found for it: list the folders it may use in read/write");
  } else if (context.dataFiles?.length) {
    // The server's own store (a memory file, a database): its siblings too, for a journal or
    // a temporary file renamed over it.
    policy.read = context.dataFiles.map((file) => `${file}*`);
    if (WRITE_TOOL.test(tool.name)) policy.write = context.dataFiles.map((file) => `${file}*`);
  }
  if (roles.has("url")) notes.push("takes a URL: list the destinations it may reach in network");
  if (roles.has("command")) notes.push("takes a command: list the programs it may run in exec");
  if (roles.has("sql") && tool.annotations?.readOnlyHint !== true) {
    policy.sql = ["read", "write"];
    notes.push("runs SQL: allowed to read and write rows, never to change the schema");
  }
  // Annotations, applied last, may only take away.
  if (tool.annotations?.readOnlyHint === true) {
    if (roles.has("path.write")) notes.push("readOnlyHint: writes dropped");
    policy.args = Object.fromEntries(
      Object.entries(args).map(([name, role]) => [name, role === "path.write" ? "path.read" : role]),
    );
    policy.write = [];
    policy.sql = ["read"];
  }
  if (tool.annotations?.openWorldHint === false && roles.has("url"))
    notes.push("openWorldHint is false: no network");
  if (notes.length) policy.description = notes.join("; ");
  return policy;
}

export function derivePolicy(
  server: string,
  tools: ListedTool[],
  source?: string,
  context: DeriveContext = { roots: [] },
): Policy {
  const review = [
    `Draft derived from tools/list${source ? ` of ${source}` : ""} by mcpguard policy derive: review every tool before use.`,
    context.roots.length && tools.some(takesPath)
      ? `Path tools may use ${context.roots.join(", ")} (check that these are the folders the server should have).`
      : "",
    context.dataFiles?.length ? `Its data: ${context.dataFiles.join(", ")}.` : "",
    ...(context.notes ?? []).map((n) => `${n.replace(/\.$/, "")}.`),
    context.skipped?.length
      ? `Left out (the listing does not fit the MCP schema): ${context.skipped.map((s) => s.name).join(", ")}.`
      : "",
    'Tools that take URLs or commands need their destinations and programs listed; remove "draft" once reviewed.',
  ];
  return {
    version: 1,
    server,
    description: review.filter(Boolean).join(" "),
    draft: true,
    ...(context.relativeTo === undefined ? {} : { relativeTo: context.relativeTo }),
    environment: { keep: [...new Set(context.keepEnv ?? [])] },
    tools: Object.fromEntries(tools.map((t) => [t.name, deriveTool(t, context)])),
  };
}
