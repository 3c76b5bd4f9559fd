import { DEFAULT_MAX_MESSAGE_BYTES } from "@mcpguard/protocol";
import { intOption, parseWithCommand, UsageError } from "../args.js";
import { AuditLog } from "../audit.js";
import { ConfigError, resolveConfig } from "../configs.js";
import { Relay } from "../relay.js";

const HELP = `usage: mcpguard run [options] -- <command> [args...]

Start an MCP server and relay its stdio, applying the layers of one defense config.

options:
  --config NAME             C0 (default), C-AB, C-app, C-ebpf, C-full or C-AB+ebpf
  --audit-log FILE          append every decision as NDJSON to FILE
  --server-name NAME        name used in the audit log (default: the server's serverInfo.name)
  --max-message-bytes N     largest JSON-RPC message accepted (default ${DEFAULT_MAX_MESSAGE_BYTES})
  --close-grace-ms N        after the client closes stdin, wait N ms before SIGTERM (default 2000)
  --term-grace-ms N         after SIGTERM, wait N ms before killing every process (default 2000)
`;

const OPTIONS = {
  config: { type: "string", default: "C0" },
  "audit-log": { type: "string" },
  "server-name": { type: "string" },
  "max-message-bytes": { type: "string" },
  "close-grace-ms": { type: "string" },
  "term-grace-ms": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function main(argv: string[]): Promise<number> {
  const { values, command } = parseWithCommand(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (command.length === 0)
    throw new UsageError("no server command given (mcpguard run [options] -- <command> [args...])");
  let config: ReturnType<typeof resolveConfig>;
  try {
    config = resolveConfig(values.config);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  const maxMessageBytes = intOption(
    values["max-message-bytes"],
    "max-message-bytes",
    DEFAULT_MAX_MESSAGE_BYTES,
  );
  if (maxMessageBytes < 1) throw new UsageError("--max-message-bytes must be at least 1");

  const audit = values["audit-log"] ? new AuditLog(values["audit-log"]) : undefined;
  const relay = new Relay({
    argv: command,
    config: config.name,
    audit,
    serverName: values["server-name"],
    maxMessageBytes,
    closeGraceMs: intOption(values["close-grace-ms"], "close-grace-ms", 2000),
    termGraceMs: intOption(values["term-grace-ms"], "term-grace-ms", 2000),
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => relay.forwardSignal(signal));
  }
  const status = await relay.run();
  audit?.close();
  return status;
}
