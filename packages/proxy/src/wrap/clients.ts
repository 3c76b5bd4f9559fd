/**
 * MCP client configuration files, as `mcpguard wrap` reads and rewrites them.
 *
 * Two shapes cover the clients:
 *
 *  - `mcpServers`: Claude Desktop (`claude_desktop_config.json`), Cursor (`~/.cursor/mcp.json`,
 *    `<project>/.cursor/mcp.json`), Claude Code's `.mcp.json`, and every other client that copied
 *    it. An entry is `{command, args?, env?, cwd?, envFile?, type?}` for a local (stdio) server, or
 *    `{url, headers?, type?}` for a remote one.
 *  - `servers` (+ `inputs`): VS Code (`.vscode/mcp.json`, the user profile's `mcp.json`). An entry
 *    has `type: "stdio"` with `command`, `args`, `env`, `envFile`, `cwd`, or `type: "http"|"sse"`
 *    with `url`. `inputs` are the prompts behind `${input:id}` and are left untouched.
 *
 * Every other field, of the file and of each entry, is kept as it is. Files are read as JSON;
 * trailing commas are accepted, comments are refused (rewriting would drop them).
 */
import { basename, dirname } from "node:path";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";

/** A user error about the file: one line, exit status 2. */
export class ClientConfigError extends Error {
  override readonly name = "ClientConfigError";
}

export const StdioEntry = z.looseObject({
  type: z.optional(z.literal("stdio")),
  command: z.string().check(z.minLength(1, "command is empty")),
  args: z.optional(z.array(z.string())),
  /** VS Code allows numbers and null (null removes the variable). */
  env: z.optional(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))),
  cwd: z.optional(z.string()),
  envFile: z.optional(z.string()),
});
export type StdioEntry = z.infer<typeof StdioEntry>;

const REMOTE_TYPES = new Set(["sse", "http", "streamable-http", "streamableHttp", "ws", "websocket"]);

const ConfigFile = z.looseObject({
  mcpServers: z.optional(z.record(z.string(), z.unknown())),
  servers: z.optional(z.record(z.string(), z.unknown())),
  inputs: z.optional(z.array(z.unknown())),
});

export type Shape = "mcpServers" | "servers";

type Entry =
  | { name: string; kind: "stdio"; entry: StdioEntry }
  | { name: string; kind: "remote"; reason: string }
  | { name: string; kind: "invalid"; reason: string };

export interface ClientConfig {
  file: string;
  /** The bytes as read: what the backup holds. */
  bytes: Buffer;
  value: Record<string, unknown>;
  shapes: Shape[];
  entries: Entry[];
  /** Which client the file belongs to, by its path (for the variables it expands). */
  client: "vscode" | "cursor" | "claude-desktop" | "claude-code" | "other";
  /** The project folder of a project-level file (`<dir>/.vscode/mcp.json`, `<dir>/.cursor/mcp.json`, `<dir>/.mcp.json`). */
  workspace?: string;
  format: { indent: string; eol: string; finalNewline: boolean; bom: boolean };
}

/**
 * The text without comments and trailing commas, and whether it had comments. Strings are copied
 * as they are: a `//` inside a string is no comment.
 */
function stripJsonc(text: string): { json: string; comments: boolean } {
  let out = "";
  let comments = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      comments = true;
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      comments = true;
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === ",") {
      // A comma followed only by blanks (and comments) before } or ] is dropped.
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j] as string)) j++;
      if (text[j] !== "}" && text[j] !== "]") out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { json: out, comments };
}

function detectFormat(text: string): ClientConfig["format"] {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    indent: indent.startsWith("\t") ? "\t" : indent,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
    finalNewline: /\n$/.test(text),
    bom: text.charCodeAt(0) === 0xfeff,
  };
}

function clientOf(file: string): Pick<ClientConfig, "client" | "workspace"> {
  const name = basename(file);
  const dir = dirname(file);
  const folder = basename(dir);
  if (name === "mcp.json" && folder === ".vscode") return { client: "vscode", workspace: dirname(dir) };
  if (name === "mcp.json" && folder === ".cursor") {
    // ~/.cursor/mcp.json is the user's: its folder is the home, not a project.
    const home = process.env.HOME;
    return dirname(dir) === home ? { client: "cursor" } : { client: "cursor", workspace: dirname(dir) };
  }
  if (name === "claude_desktop_config.json") return { client: "claude-desktop" };
  if (name === ".mcp.json") return { client: "claude-code", workspace: dir };
  return { client: "other" };
}

function classify(name: string, raw: unknown): Entry {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { name, kind: "invalid", reason: "not an object" };
  const record = raw as Record<string, unknown>;
  const type = typeof record.type === "string" ? record.type : undefined;
  if ("url" in record || (type && REMOTE_TYPES.has(type)))
    return { name, kind: "remote", reason: `remote server (${type ?? "url"}): nothing to start locally` };
  if (type !== undefined && type !== "stdio")
    return { name, kind: "invalid", reason: `unknown server type "${type}"` };
  const parsed = StdioEntry.safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      name,
      kind: "invalid",
      reason: `${issue?.path.length ? `${issue.path.join(".")}: ` : ""}${issue?.message}`,
    };
  }
  return { name, kind: "stdio", entry: parsed.data };
}

/** Parse a client config file's bytes. Throws {@link ClientConfigError} with one line. */
export function parseClientConfig(file: string, bytes: Buffer): ClientConfig {
  let text = bytes.toString("utf8");
  const format = detectFormat(text);
  if (format.bom) text = text.slice(1);
  if (text.trim() === "") throw new ClientConfigError(`${file}: the file is empty`);
  const { json, comments } = stripJsonc(text);
  if (comments)
    throw new ClientConfigError(
      `${file} has comments (JSONC); mcpguard wrap rewrites the file as JSON and would drop them: ` +
        "remove the comments first (unwrap restores the file byte for byte either way)",
    );
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ClientConfigError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ConfigFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new ClientConfigError(
      `${file}: not an MCP client config: ${where}${issue?.code === "invalid_type" && !issue.path.length ? "expected a JSON object" : issue?.message}`,
    );
  }
  const shapes: Shape[] = [];
  if (parsed.data.mcpServers) shapes.push("mcpServers");
  if (parsed.data.servers) shapes.push("servers");
  if (shapes.length === 0)
    throw new ClientConfigError(
      `${file}: no servers: expected "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)`,
    );
  const entries = shapes.flatMap((shape) =>
    Object.entries(parsed.data[shape] ?? {}).map(([name, raw]) => classify(name, raw)),
  );
  if (entries.length === 0) throw new ClientConfigError(`${file}: no servers in "${shapes.join('" or "')}"`);
  // The file as parsed, not zod's copy: its keys keep their order when it is written back.
  return { file, bytes, value: value as Record<string, unknown>, shapes, entries, ...clientOf(file), format };
}

/** The file's text for `value`, in the file's own indentation, line ends and final newline. */
export function formatClientConfig(value: unknown, format: ClientConfig["format"]): string {
  let text = JSON.stringify(value, null, format.indent);
  if (format.eol !== "\n") text = text.replace(/\n/g, format.eol);
  if (format.finalNewline) text += format.eol;
  return format.bom ? `\ufeff${text}` : text;
}

/** Replace one entry's `command` and `args`, keeping every other field and the key order. */
export function replaceLaunch(
  value: Record<string, unknown>,
  shape: Shape,
  name: string,
  command: string,
  args: string[],
): void {
  const servers = value[shape] as Record<string, Record<string, unknown>>;
  const entry = servers[name] as Record<string, unknown>;
  const next: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(entry)) {
    if (key === "args") continue;
    next[key] = key === "command" ? command : v;
    if (key === "command") next.args = args;
  }
  servers[name] = next;
}

/** The shape an entry of the file belongs to. */
export function shapeOf(config: ClientConfig, name: string): Shape {
  for (const shape of config.shapes) {
    const servers = config.value[shape] as Record<string, unknown>;
    if (Object.hasOwn(servers, name)) return shape;
  }
  throw new Error(`no server ${name}`);
}

/**
 * Expand the variables a client expands in `command`, `args`, `env` and `cwd`, for starting the
 * server at wrap time (the file keeps them as written: the client expands them in the wrapped
 * entry too). `${input:...}` cannot be expanded before the client prompts: undefined.
 */
export function expand(
  text: string,
  vars: { workspace?: string; home: string; env: NodeJS.ProcessEnv },
): { value: string; missing?: string } {
  let missing: string | undefined;
  const value = text.replace(/\$\{([^}]+)\}/g, (whole, inner: string) => {
    if (inner === "workspaceFolder" || inner === "workspaceRoot") {
      if (vars.workspace) return vars.workspace;
      missing ??= `${whole} (no project folder: give --workspace DIR)`;
      return whole;
    }
    if (inner === "workspaceFolderBasename") {
      if (vars.workspace) return basename(vars.workspace);
      missing ??= `${whole} (no project folder: give --workspace DIR)`;
      return whole;
    }
    if (inner === "userHome") return vars.home;
    if (inner === "pathSeparator" || inner === "/") return "/";
    if (inner.startsWith("env:")) return vars.env[inner.slice(4)] ?? "";
    if (inner.startsWith("input:")) {
      missing ??= `${whole} (a VS Code input, prompted for when the client starts the server)`;
      return whole;
    }
    // Claude Code's ${VAR} and ${VAR:-default}.
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s.exec(inner);
    if (m) return vars.env[m[1] as string] ?? m[2] ?? "";
    return whole;
  });
  return missing ? { value, missing } : { value };
}

/** A dotenv file's variables: `NAME=value`, `export NAME=value`, quotes, `#` comments. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    let value = m[2] as string;
    const quoted = /^(["'])(.*)\1$/s.exec(value);
    if (quoted)
      value = quoted[1] === '"' ? (quoted[2] as string).replace(/\\n/g, "\n") : (quoted[2] as string);
    else value = value.replace(/\s+#.*$/, "");
    out[m[1] as string] = value;
  }
  return out;
}
