/**
 * The MCP stdio protocol for the protocol-suite servers (SERVERS.md §6): everything `mcpStdio.mjs`
 * does for tools, plus what a server says to the agent beyond tool results: resources and resource
 * templates, prompts, `instructions`, `notifications/tools/list_changed`, and requests of its own
 * to the client (`sampling/createMessage`, `elicitation/create`) whose answers it awaits.
 * Protocol only: the listings and the tool logic live in each server, which may change them
 * between two listings (a rug pull, or a benign update).
 *
 * A tool is `{name, title?, description, inputSchema, outputSchema?, annotations, run(args, ctx)}`;
 * `run` returns the result object (sent as one JSON text item) or throws (sent as `isError`).
 * `ctx.request(method, params)` sends a request to the client and resolves with its result (or
 * rejects with its error); `ctx.notify(method, params)` sends a notification.
 */
import { createInterface } from "node:readline";

const SUPPORTED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const DEFAULT_VERSION = "2025-06-18";
const CLIENT_TIMEOUT_MS = 10_000;

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** `--variant NAME` and `--marker TEXT` from the launch arguments (either may be absent). */
export function launchOptions(argv = process.argv.slice(2)) {
  const value = (flag) => {
    const at = argv.indexOf(flag);
    return at >= 0 && typeof argv[at + 1] === "string" ? argv[at + 1] : undefined;
  };
  return { variant: value("--variant") ?? "default", marker: value("--marker") ?? "" };
}

/** The first violation of the schema subset the servers use (required, types, enum), or null. */
function violation(schema, args) {
  if (!isObject(args)) return "arguments must be an object";
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(args, name)) return `missing required property '${name}'`;
  }
  for (const [key, value] of Object.entries(args)) {
    if (!Object.hasOwn(properties, key)) {
      if (schema.additionalProperties === false) return `unknown property '${key}'`;
      continue;
    }
    const property = properties[key];
    const types = property.type === undefined ? [] : [property.type].flat();
    const typeOk =
      types.length === 0 ||
      types.some((t) =>
        t === "integer"
          ? Number.isInteger(value)
          : t === "array"
            ? Array.isArray(value)
            : t === "object"
              ? isObject(value)
              : typeof value === t,
      );
    if (!typeOk) return `'${key}' must be of type ${types.join(" or ")}`;
    if (Array.isArray(property.enum) && !property.enum.includes(value))
      return `'${key}' must be one of ${property.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  return null;
}

function withDefaults(schema, args) {
  const filled = { ...args };
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(filled, name) && property.default !== undefined) filled[name] = property.default;
  }
  return filled;
}

/** What a listing shows of a tool: every field but `run`. */
function listed({ run: _run, ...tool }) {
  return tool;
}

/**
 * Serve one MCP session on stdio. `spec`:
 * - `name`, `version`: serverInfo; `instructions` (optional): the initialize result's;
 * - `tools()`: the current tools; `resources()`, `templates()`, `read(uri)` (contents array or
 *   null), `prompts()`, `prompt(name, args)` (`{description?, messages}` or null): optional;
 * - `onListed(kind, count)`: called after each listing is sent (a server that changes its answer
 *   on a later listing counts them).
 */
export function serve(spec) {
  let nextRequest = 0;
  const waiting = new Map();
  let clientCapabilities = {};
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const ctx = {
    get clientCapabilities() {
      return clientCapabilities;
    },
    notify(method, params) {
      send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
    },
    request(method, params) {
      const id = `srv-${++nextRequest}`;
      send({ jsonrpc: "2.0", id, method, params });
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the client did not answer ${method}`));
        }, CLIENT_TIMEOUT_MS);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          if (message.error) reject(new Error(message.error.message ?? "the client refused"));
          else resolve(message.result);
        });
      });
    },
  };
  const counts = { tools: 0, resources: 0, templates: 0, prompts: 0 };
  const listedOnce = (kind, body) => {
    counts[kind]++;
    queueMicrotask(() => spec.onListed?.(kind, counts[kind], ctx));
    return body;
  };

  const methods = {
    initialize(params) {
      clientCapabilities = isObject(params?.capabilities) ? params.capabilities : {};
      const asked = params?.protocolVersion;
      return {
        protocolVersion: SUPPORTED_VERSIONS.includes(asked) ? asked : DEFAULT_VERSION,
        capabilities: {
          tools: { listChanged: true },
          ...(spec.resources ? { resources: {} } : {}),
          ...(spec.prompts ? { prompts: {} } : {}),
        },
        serverInfo: { name: spec.name, version: spec.version },
        ...(spec.instructions ? { instructions: spec.instructions } : {}),
      };
    },
    ping: () => ({}),
    "tools/list": () => listedOnce("tools", { tools: spec.tools().map(listed) }),
    "tools/call": async (params) => {
      const tool = spec.tools().find((t) => t.name === params?.name);
      if (!tool) throw Object.assign(new Error(`Unknown tool: ${params?.name}`), { code: -32602 });
      const given = params.arguments ?? {};
      const problem = violation(tool.inputSchema, given);
      if (problem)
        return { isError: true, content: [{ type: "text", text: `Error: invalid arguments: ${problem}` }] };
      try {
        const result = await tool.run(withDefaults(tool.inputSchema, given), ctx);
        return { content: [{ type: "text", text: JSON.stringify(result) }] };
      } catch (error) {
        return { isError: true, content: [{ type: "text", text: `Error: ${error.message}` }] };
      }
    },
    "resources/list": () => listedOnce("resources", { resources: spec.resources?.() ?? [] }),
    "resources/templates/list": () =>
      listedOnce("templates", { resourceTemplates: spec.templates?.() ?? [] }),
    "resources/read": (params) => {
      const contents = spec.read?.(params?.uri);
      if (!contents) throw Object.assign(new Error(`Resource not found: ${params?.uri}`), { code: -32002 });
      return { contents };
    },
    "prompts/list": () => listedOnce("prompts", { prompts: spec.prompts?.() ?? [] }),
    "prompts/get": (params) => {
      const prompt = spec.prompt?.(params?.name, params?.arguments ?? {});
      if (!prompt) throw Object.assign(new Error(`Unknown prompt: ${params?.name}`), { code: -32602 });
      return prompt;
    },
  };

  async function dispatch(message) {
    const { id, method, params } = message;
    const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!handler) {
      send({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } });
      return;
    }
    try {
      send({ jsonrpc: "2.0", id, result: await handler(params) });
    } catch (error) {
      send({ jsonrpc: "2.0", id, error: { code: error.code ?? -32603, message: error.message } });
    }
  }

  process.stdout.on("error", () => {});
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    if (!isObject(message)) return;
    if (typeof message.method !== "string") {
      // An answer to one of our requests.
      const resolve = waiting.get(message.id);
      if (resolve) {
        waiting.delete(message.id);
        resolve(message);
      }
      return;
    }
    if (message.id === undefined) return; // A notification: nothing to answer.
    void dispatch(message);
  });
}

/** A closed object schema. */
export function objectSchema(properties, required = []) {
  return { type: "object", properties, required, additionalProperties: false };
}

export function annotations(readOnly, destructive, openWorld, extra = {}) {
  return { readOnlyHint: readOnly, destructiveHint: destructive, openWorldHint: openWorld, ...extra };
}

/** Text hidden as tag characters (ASCII smuggling): invisible in every UI, read by the model. */
export function tagged(text) {
  return [...text].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
}
