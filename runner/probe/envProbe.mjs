#!/usr/bin/env node
/**
 * The environment probe: a one-tool MCP server the runner starts under each config before a run, to
 * check that the config keeps HOME, TMPDIR, PATH and LANG, with HOME and TMPDIR unchanged
 * (CASES.md §4, step 1). It reads nothing but its own environment.
 */
const TOOL = {
  name: "environment",
  description: "Report HOME, TMPDIR, PATH and LANG as this process sees them",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
};

function answer(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}

function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === "initialize") {
    answer(id, {
      protocolVersion: params?.protocolVersion ?? "2025-06-18",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "env-probe", version: "1.0.0" },
    });
  } else if (method === "tools/list") {
    answer(id, { tools: [TOOL] });
  } else if (method === "tools/call" && params?.name === TOOL.name) {
    const env = Object.fromEntries(
      ["HOME", "TMPDIR", "PATH", "LANG"].map((k) => [k, process.env[k] ?? null]),
    );
    answer(id, { content: [{ type: "text", text: JSON.stringify(env) }] });
  } else if (method === "ping") {
    answer(id, {});
  } else {
    process.stdout.write(
      `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } })}\n`,
    );
  }
}

let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  pending += chunk;
  let nl = pending.indexOf("\n");
  while (nl !== -1) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    try {
      handle(JSON.parse(line));
    } catch {
      process.stdout.write('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n');
    }
    nl = pending.indexOf("\n");
  }
});
