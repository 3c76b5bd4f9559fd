/**
 * A least-privilege draft policy from a server's `tools/list`: argument roles from the input
 * schemas, the fewest capabilities those roles need, and the tool annotations applied last. An
 * annotation can only take a capability away (readOnlyHint drops writes, openWorldHint false drops
 * the network), never add one: annotations come from the server, which is not trusted.
 *
 * Path tools get the server's roots (the folders on its command line and the client's roots):
 * absolute where they were named absolutely, `{{cwd}}/...` where the command line named them
 * relatively (the server resolves them against its working directory, wherever the client starts
 * it; `mcpguard run` refuses a `{{cwd}}` grant that comes to cover `/` or a home). Tools that take no
 * path get the files and folders the server keeps its data in.
 */
import type * as z from "zod/mini";
import type { ArgRole, Policy as PolicySchema, ToolPolicy as ToolPolicySchema } from "./schema.js";

/**
 * A draft as written: only what it sets (no `sqlStatements` on a tool that takes no SQL, no empty
 * `base`), so that a reviewer reads what derive found, not the schema's defaults.
 */
export type DraftTool = z.input<typeof ToolPolicySchema>;
export type Draft = z.input<typeof PolicySchema>;

/** What a draft is made from beyond the listing: where the server works, and what was left out. */
export interface DeriveContext {
  /** Folders the server works in, absolute: granted to its path tools. */
  roots: readonly string[];
  /** Files it keeps its data in, absolute: granted to its tools that take no path. */
  dataFiles?: readonly string[];
  /** Folders it keeps its data in (a variable such as NOTES_DIR names one): likewise. */
  dataDirs?: readonly string[];
  /** Environment variables it needs at spawn (a data file's location). */
  keepEnv?: readonly string[];
  /** Tools left out of the draft, and why. */
  skipped?: readonly { name: string; reason: string }[];
  /** What the reviewer should know about the roots and files (where they came from). */
  notes?: readonly string[];
  /** The folder the server resolves relative paths against, when it is not its working directory. */
  relativeTo?: string;
  /** The server's folder for relative paths could not be found out: the draft refuses relative paths. */
  relativeUnknown?: boolean;
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
  /(write|create|save|put|update|append|edit|move|rename|copy|mkdir|upload|delete|remove|set|add|insert|store|patch|replace|modify|commit|checkout|reset|stage|init|merge|rebase|stash)/i;
/** A version control name (branch, tag, commit, revision), in a tool of a repository. */
const REF =
  /^(ref|refs|branch|branch_name|base|base_branch|head|head_branch|tag|tag_name|commit|commit_sha|sha|revision|rev|target|from_ref|to_ref)$/i;
/** The argument that names a local repository, against which the tool's other paths resolve. */
const REPO_PATH = /^(repo_path|repository_path|repo_dir|repository|git_dir)$/i;
/** Arguments that name a remote repository by its owner and name (GitHub, GitLab). */
const OWNER = /^(owner|org|organization|namespace)$/i;
const REPO = /^(repo|repository|repo_name|project)$/i;

/** What kind of repository tool it is, from its arguments: a local one (repo_path), a remote one (owner + repo). */
function repositoryOf(tool: ListedTool): { local?: string; remote: boolean } {
  const names = Object.keys(tool.inputSchema?.properties ?? {});
  const local = names.find((n) => REPO_PATH.test(n));
  const remote = !local && names.some((n) => OWNER.test(n)) && names.some((n) => REPO.test(n));
  return { ...(local ? { local } : {}), remote };
}

function roleOf(name: string, schema: Record<string, unknown>, tool: ListedTool): ArgRole {
  const type = schema.type;
  if (type === "number" || type === "integer" || type === "boolean" || Array.isArray(schema.enum))
    return "scalar";
  if (type === "object") return "record";
  if (schema.format === "uri" || URL.test(name)) return "url";
  const repository = repositoryOf(tool);
  // In a repository's tool a branch, tag or revision is a name in git, never a file.
  if ((repository.local || repository.remote) && REF.test(name)) return "ref";
  // A path in a remote repository is not a file of this machine.
  if (repository.remote && PATH.test(name)) return "path.remote";
  if (PATH.test(name) || name === repository.local) {
    const writes = tool.annotations?.readOnlyHint !== true && WRITE_TOOL.test(tool.name);
    return writes ? "path.write" : "path.read";
  }
  if (COMMAND.test(name)) return "command";
  if (SQL.test(name) || (name === "query" && /\bsql\b/i.test(tool.description ?? ""))) return "sql";
  if (KEY.test(name)) return "key";
  if (IDENTIFIER.test(name)) return "identifier";
  return "text";
}

/**
 * The programs a draft lets a command tool run: those that read only the files their words name,
 * print, and run no code but through options the readers' table knows (`find -exec`, `sed e`,
 * awk's `system`, each judged as the command it runs). Every file such a program may open is judged
 * against the tool's read grant by L1 and the kernel, so naming them widens nothing the tool may
 * touch; what writes, fetches or interprets (cp, rm, curl, python, sh) is for a person, or policy
 * learn, to add. A decision of derive's (docs/DESIGN.md, "Drafts").
 */
const INSPECTION_PROGRAMS = [
  "cat",
  "head",
  "tail",
  "wc",
  "sort",
  "uniq",
  "cut",
  "paste",
  "tr",
  "nl",
  "rev",
  "column",
  "grep",
  "egrep",
  "fgrep",
  "sed",
  "awk",
  "diff",
  "cmp",
  "comm",
  "ls",
  "find",
  "stat",
  "file",
  "du",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "base64",
  "od",
  "strings",
  "echo",
  "printf",
  "seq",
  "expr",
  "test",
  "[",
  "true",
  "false",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "date",
  "pwd",
  "uname",
  "id",
  "whoami",
  "nproc",
  "which",
];

/** Whether a tool takes a path argument (by the role derive gives each argument). */
export function takesPath(tool: ListedTool): boolean {
  return Object.entries(tool.inputSchema?.properties ?? {}).some(([name, schema]) =>
    roleOf(name, (schema ?? {}) as Record<string, unknown>, tool).startsWith("path."),
  );
}

/** Whether a tool names files: a path argument, or a command whose words may name them. */
export function takesFiles(tool: ListedTool): boolean {
  return Object.entries(tool.inputSchema?.properties ?? {}).some(([name, schema]) => {
    const role = roleOf(name, (schema ?? {}) as Record<string, unknown>, tool);
    return role.startsWith("path.") || role === "command";
  });
}

/**
 * The tool policy derive asks where the server resolves a relative path (the proxy's probeBase.ts):
 * one that reads one path and needs no other argument, and writes nothing; one named for reading a
 * file first (read, get, info, stat), then any. Undefined when none fits.
 */
export function probeTool(tools: readonly ListedTool[]): { tool: string; arg: string } | undefined {
  const fitting = tools.flatMap((tool) => {
    if (tool.annotations?.destructiveHint === true) return [];
    const props = Object.entries(tool.inputSchema?.properties ?? {});
    const roles = props.map(([name, schema]) => [
      name,
      roleOf(name, (schema ?? {}) as Record<string, unknown>, tool),
    ]);
    const reads = roles.filter(([, role]) => role === "path.read").map(([name]) => name as string);
    if (reads.length !== 1 || roles.some(([, role]) => role === "path.write")) return [];
    const required = (tool.inputSchema as { required?: unknown } | undefined)?.required;
    const needs = Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [];
    if (needs.some((name) => name !== reads[0])) return [];
    return [{ tool: tool.name, arg: reads[0] as string }];
  });
  const rank = (name: string) => (/(^|_)(read|get|info|stat|cat|show|view)(_|$)/i.test(name) ? 0 : 1);
  return fitting.sort((a, b) => rank(a.tool) - rank(b.tool))[0];
}

/** A grant of everything beneath `dir`. */
const beneath = (dir: string) => `${dir.replace(/\/$/, "")}/**`;

function deriveTool(tool: ListedTool, context: DeriveContext = { roots: [] }): DraftTool {
  const notes: string[] = [];
  // fromEntries defines own properties: an argument the server names "__proto__" stays an argument.
  const args: Record<string, ArgRole> = Object.fromEntries(
    Object.entries(tool.inputSchema?.properties ?? {}).map(([name, schema]) => [
      name,
      roleOf(name, (schema ?? {}) as Record<string, unknown>, tool),
    ]),
  );
  const roles = new Set(Object.values(args));
  const policy: DraftTool & { read: string[]; write: string[] } = {
    args,
    read: [],
    write: [],
    network: [],
    exec: [],
    env: [],
    sql: ["read"],
  };
  // Statements: only where the tool takes SQL (the schema's default, "many", is the safe reading).
  if (roles.has("sql")) policy.sqlStatements = "many";
  // A local repository's tool resolves its other paths (git_add's files) against the repository.
  const repository = repositoryOf(tool).local;
  if (repository && (args[repository] === "path.read" || args[repository] === "path.write")) {
    const base = Object.fromEntries(
      Object.entries(args)
        .filter(([name, role]) => name !== repository && (role === "path.read" || role === "path.write"))
        .map(([name]) => [name, repository]),
    );
    if (Object.keys(base).length) policy.base = base;
  }
  const paths = roles.has("path.read") || roles.has("path.write");
  if (paths) {
    policy.read = context.roots.map(beneath);
    if (roles.has("path.write")) policy.write = context.roots.map(beneath);
    if (context.roots.length === 0)
      notes.push("takes a path, but no folder was found for it: list the folders it may use in read/write");
  } else if (context.dataFiles?.length || context.dataDirs?.length) {
    // The server's own store (a memory file, a database): its siblings too, for a journal or
    // a temporary file renamed over it; a data folder whole.
    const data = [
      ...(context.dataFiles ?? []).map((file) => `${file}*`),
      ...(context.dataDirs ?? []).map(beneath),
    ];
    policy.read = data;
    if (WRITE_TOOL.test(tool.name)) policy.write = data;
  }
  if (roles.has("command")) {
    // Its commands read the server's folders, with the programs that only read what they name.
    if (!paths) policy.read = context.roots.map(beneath);
    policy.exec = [...INSPECTION_PROGRAMS];
    notes.push(
      "takes a command: may run programs that only read the files they name (each judged against read); add the others it needs to exec",
    );
  }
  if (roles.has("url")) notes.push("takes a URL: list the destinations it may reach in network");
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
): Draft & { environment: { keep: string[] }; tools: Record<string, DraftTool> } {
  const review = [
    `Draft derived from tools/list${source ? ` of ${source}` : ""} by mcpguard policy derive: review every tool before use.`,
    context.roots.length && tools.some(takesFiles)
      ? `Path tools may use ${context.roots.join(", ")} (check that these are the folders the server should have).`
      : "",
    context.dataFiles?.length || context.dataDirs?.length
      ? `Its data: ${[...(context.dataFiles ?? []), ...(context.dataDirs ?? [])].join(", ")}.`
      : "",
    ...(context.notes ?? []).map((n) => `${n.replace(/\.$/, "")}.`),
    context.relativeUnknown && tools.some(takesPath)
      ? "The folder it resolves relative paths against could not be found out, so relative paths are refused (relativePaths); set relativeTo once you know it."
      : "",
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
    ...(context.relativeUnknown && tools.some(takesPath) ? { relativePaths: "refuse" as const } : {}),
    environment: { keep: [...new Set(context.keepEnv ?? [])] },
    tools: Object.fromEntries(tools.map((t) => [t.name, deriveTool(t, context)])),
  };
}
