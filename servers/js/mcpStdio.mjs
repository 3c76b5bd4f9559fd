/**
 * The MCP stdio protocol shared by the JavaScript victim servers: one JSON-RPC 2.0 message per line on
 * stdin/stdout, the handshake, `ping`, `tools/list` and `tools/call` with argument validation against a
 * small JSON Schema subset, plus the launch contract helpers (`--sink host:port`, the home and temp
 * dirs). Protocol only: the tool logic lives in each server.
 *
 * A tool is `{name, description, inputSchema, annotations, run}`; `run(args)` returns the result
 * object (sent as one JSON text item) or throws an Error (sent as `isError`, `Error: <message>`).
 */
import path from "node:path";
import { createInterface } from "node:readline";

const SUPPORTED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const DEFAULT_VERSION = "2025-06-18";

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** The endpoint after `--sink` in the launch arguments, or null when it is absent or malformed. */
export function sinkFromArgv(argv = process.argv.slice(2)) {
  const at = argv.indexOf("--sink");
  const value = at >= 0 ? argv[at + 1] : undefined;
  if (typeof value !== "string") return null;
  const colon = value.lastIndexOf(":");
  const host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  const port = Number(portText);
  if (colon <= 0 || !/^\d+$/.test(portText) || port < 1 || port > 65535) return null;
  return { host, port };
}

function fromEnv(name, sibling) {
  const value = process.env[name];
  return value ? value : path.resolve(process.cwd(), "..", sibling);
}

/** `H`: `HOME`, or `<cwd>/../home` when it is unset or empty. */
export function homeDir() {
  return fromEnv("HOME", "home");
}

/** `T`: `TMPDIR`, or `<cwd>/../tmp` when it is unset or empty. */
export function tempDir() {
  return fromEnv("TMPDIR", "tmp");
}

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

function typeMatches(type, value) {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    default:
      return false;
  }
}

const label = (where, key) => (where === "" ? `'${key}'` : `${where.slice(0, -1)}.${key}'`);

/**
 * Checks `value` against the schema subset the servers use (`type`, `enum`, `minLength`,
 * `maxLength`, `pattern`, `minimum`, `maximum`, `properties`, `required`, `additionalProperties`,
 * `minProperties`) and returns the first violation, or null. `where` names the value ("" for the
 * arguments object itself).
 */
function violation(schema, value, where) {
  const subject = where === "" ? "arguments" : where;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => typeMatches(type, value)))
      return `${subject} must be of type ${types.join(" or ")}`;
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    return `${subject} must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) {
      return `${subject} must be at least ${schema.minLength} characters long`;
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      return `${subject} must be at most ${schema.maxLength} characters long`;
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) {
      return `${subject} must match ${schema.pattern}`;
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum)
      return `${subject} must be >= ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum)
      return `${subject} must be <= ${schema.maximum}`;
  }
  if (isObject(value)) return objectViolation(schema, value, where);
  return null;
}

function objectViolation(schema, value, where) {
  const properties = schema.properties ?? {};
  const keys = Object.keys(value);
  if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
    return `${where === "" ? "arguments" : where} must have at least ${schema.minProperties} properties`;
  }
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) return `missing required property ${label(where, name)}`;
  }
  for (const key of keys) {
    const inner = Object.hasOwn(properties, key) ? properties[key] : schema.additionalProperties;
    if (inner === false) return `unknown property ${label(where, key)}`;
    if (isObject(inner)) {
      const problem = violation(inner, value[key], label(where, key));
      if (problem) return problem;
    }
  }
  return null;
}

/** The arguments with schema defaults filled in, or a violation message. */
function checkArguments(schema, args) {
  const problem = violation(schema, args, "");
  if (problem) return { problem };
  const filled = { ...args };
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(filled, name) && property.default !== undefined) filled[name] = property.default;
  }
  return { args: filled };
}

function textResult(text, isError) {
  const result = { content: [{ type: "text", text }] };
  return isError ? { ...result, isError: true } : result;
}

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function reply(id, result) {
  send({ jsonrpc: "2.0", id, result });
}

function fail(id, code, message) {
  send({ jsonrpc: "2.0", id, error: { code, message } });
}

async function callTool(tools, params) {
  const tool = tools.get(params.name);
  const given = params.arguments ?? {};
  if (!isObject(given)) return textResult("Error: invalid arguments: arguments must be an object", true);
  const { problem, args } = checkArguments(tool.inputSchema, given);
  if (problem) return textResult(`Error: invalid arguments: ${problem}`, true);
  try {
    return textResult(JSON.stringify(await tool.run(args)), false);
  } catch (error) {
    return textResult(`Error: ${error instanceof Error ? error.message : String(error)}`, true);
  }
}

async function handle(serverName, tools, message) {
  const { id, method, params } = message;
  switch (method) {
    case "initialize": {
      const asked = isObject(params) ? params.protocolVersion : undefined;
      reply(id, {
        protocolVersion: SUPPORTED_VERSIONS.includes(asked) ? asked : DEFAULT_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: serverName, version: "1.0.0" },
      });
      return;
    }
    case "ping":
      reply(id, {});
      return;
    case "tools/list":
      reply(id, {
        tools: [...tools.values()].map(({ name, description, inputSchema, annotations }) => ({
          name,
          description,
          inputSchema,
          annotations,
        })),
      });
      return;
    case "tools/call":
      if (!isObject(params) || typeof params.name !== "string") {
        fail(id, INVALID_PARAMS, "Invalid params: tools/call needs a tool name");
      } else if (!tools.has(params.name)) {
        fail(id, INVALID_PARAMS, `Unknown tool: ${params.name}`);
      } else {
        reply(id, await callTool(tools, params));
      }
      return;
    default:
      fail(id, METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

function dispatch(serverName, tools, line) {
  if (line.trim() === "") return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    fail(null, PARSE_ERROR, "Parse error");
    return;
  }
  if (!isObject(message)) {
    fail(null, INVALID_REQUEST, "Invalid Request");
    return;
  }
  const isRequest = typeof message.id === "string" || typeof message.id === "number";
  if (typeof message.method !== "string") {
    if (!isRequest || "result" in message || "error" in message) return;
    fail(message.id, INVALID_REQUEST, "Invalid Request");
    return;
  }
  if (!isRequest) return;
  handle(serverName, tools, message).catch((error) => {
    fail(
      message.id,
      INTERNAL_ERROR,
      `Internal error: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}

/**
 * Serves `toolList` over stdio with `serverInfo.name` = `serverName`. On stdin EOF the server stops
 * reading and exits once the work in flight has finished.
 */
export function serve(serverName, toolList) {
  const tools = new Map(toolList.map((tool) => [tool.name, tool]));
  process.stdout.on("error", () => {});
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => dispatch(serverName, tools, line));
}
