/**
 * A least-privilege draft policy from a server's `tools/list`: argument roles from the input
 * schemas, the fewest capabilities those roles need, and the tool annotations applied last. An
 * annotation can only take a capability away (readOnlyHint drops writes, openWorldHint false drops
 * the network), never add one: annotations come from the server, which is not trusted.
 */
import type { ArgRole, Policy, ToolPolicy } from "./schema.js";

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
  /(write|create|save|put|update|append|edit|move|rename|copy|mkdir|upload|delete|remove|set)/i;

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

export function deriveTool(tool: ListedTool): ToolPolicy {
  const notes: string[] = [];
  // fromEntries defines own properties: an argument the server names "__proto__" stays an argument.
  const args: Record<string, ArgRole> = Object.fromEntries(
    Object.entries(tool.inputSchema?.properties ?? {}).map(([name, schema]) => [
      name,
      roleOf(name, (schema ?? {}) as Record<string, unknown>, tool),
    ]),
  );
  const roles = new Set(Object.values(args));
  const policy: ToolPolicy = { args, read: [], write: [], network: [], exec: [], env: [], sql: ["read"] };
  if (roles.has("path.read") || roles.has("path.write")) policy.read = ["{{cwd}}/**"];
  if (roles.has("path.write")) policy.write = ["{{cwd}}/**"];
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

export function derivePolicy(server: string, tools: ListedTool[], source?: string): Policy {
  return {
    version: 1,
    server,
    description: `Draft derived from tools/list${source ? ` of ${source}` : ""}: review every tool before use.`,
    draft: true,
    environment: { keep: [] },
    tools: Object.fromEntries(tools.map((t) => [t.name, deriveTool(t)])),
  };
}
