import { DEFAULT_MAX_MESSAGE_BYTES } from "@mcpguard/protocol";
import { intOption, parseWithCommand, UsageError } from "../args.js";
import { AuditLog, DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_BYTES } from "../audit.js";
import { ConfigError, resolveConfig } from "../configs.js";
import { type KernelLayer, kernelAuditEvent, startKernelLayer } from "../kernelLayer.js";
import { buildLayers, LayerSetupError, type Layers } from "../layers.js";
import { Relay } from "../relay.js";

const HELP = `usage: mcpguard run [options] -- <command> [args...]

Start an MCP server and relay its stdio, applying the layers of one defense config.

options:
  --config NAME             C0 (default), C-AB, C-app, C-ebpf, C-full or C-AB+ebpf
  --policy FILE             the server's L1/L2 policy (needed by C-app and C-full)
  --overrides PATH          operator overrides: a file, or a directory holding <server>.json
  --manifest FILE           the server's AgentBound manifest (needed by C-AB and C-AB+ebpf)
  --audit-log FILE          append every decision as NDJSON to FILE
  --audit-max-bytes N       rotate the audit log past N bytes (default 16 MiB)
  --audit-keep N            rotated audit files to keep (default 10)
  --server-name NAME        name used in the audit log (default: the server's serverInfo.name)
  --max-message-bytes N     largest JSON-RPC message accepted (default ${DEFAULT_MAX_MESSAGE_BYTES})
  --close-grace-ms N        after the client closes stdin, wait N ms before SIGTERM (default 2000)
  --term-grace-ms N         after SIGTERM, wait N ms before killing every process (default 2000)
  --l3-allow-partial        run an L3 config even where some capability has no kernel backend
                            (those capabilities are left open; the audit log says which)
`;

const OPTIONS = {
  config: { type: "string", default: "C0" },
  policy: { type: "string" },
  overrides: { type: "string" },
  manifest: { type: "string" },
  "audit-log": { type: "string" },
  "audit-max-bytes": { type: "string" },
  "audit-keep": { type: "string" },
  "server-name": { type: "string" },
  "max-message-bytes": { type: "string" },
  "close-grace-ms": { type: "string" },
  "term-grace-ms": { type: "string" },
  "l3-allow-partial": { type: "boolean" },
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

  let layers: Layers;
  try {
    layers = await buildLayers({
      layers: config.layers,
      policy: values.policy,
      overrides: values.overrides,
      manifest: values.manifest,
      env: process.env,
      cwd: process.cwd(),
    });
  } catch (error) {
    if (error instanceof LayerSetupError) throw new UsageError(`config ${config.name}: ${error.message}`);
    throw error;
  }

  const audit = values["audit-log"]
    ? new AuditLog(values["audit-log"], {
        maxBytes: intOption(values["audit-max-bytes"], "audit-max-bytes", DEFAULT_AUDIT_MAX_BYTES),
        keep: intOption(values["audit-keep"], "audit-keep", DEFAULT_AUDIT_KEEP),
      })
    : undefined;
  // Kernel events name the server as the relay does (which learns it from `initialize`).
  let relay: Relay | undefined;
  let kernel: KernelLayer | undefined;
  if (layers.kernelNeeds) {
    try {
      kernel = await startKernelLayer({
        config: config.name,
        needs: layers.kernelNeeds,
        argv: command,
        env: layers.env,
        allowPartial: values["l3-allow-partial"] === true,
        onEvent: (event) => audit?.write(kernelAuditEvent(event, relay?.serverName ?? "server", config.name)),
        onLoaderLost: (how) => {
          const reason = `the BPF loader ${how}, so its programs no longer hold`;
          audit?.write({
            type: "kernel",
            event: "loader-lost",
            decision: "deny",
            server: relay?.serverName ?? "server",
            config: config.name,
            reason,
          });
          relay?.abort(reason);
        },
      });
    } catch (error) {
      audit?.close();
      if (error instanceof LayerSetupError) throw new UsageError(`config ${config.name}: ${error.message}`);
      throw error;
    }
  }
  relay = new Relay({
    argv: command,
    config: config.name,
    audit,
    env: layers.env,
    withheld: layers.withheld,
    interceptor: layers.interceptor,
    containment: kernel?.containment,
    launch: kernel?.launch,
    startInfo: kernel?.startInfo,
    serverName: values["server-name"] ?? layers.server,
    maxMessageBytes,
    closeGraceMs: intOption(values["close-grace-ms"], "close-grace-ms", 2000),
    termGraceMs: intOption(values["term-grace-ms"], "term-grace-ms", 2000),
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => relay.forwardSignal(signal));
  }
  const status = await relay.run();
  // The loader reports what is left, then detaches: its events belong in the log before it closes.
  await kernel?.stop();
  audit?.close();
  return status;
}
