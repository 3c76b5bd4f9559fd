import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, intOption, UsageError } from "../args.js";
import { serverNameFromCommand } from "../audit.js";
import { ListingError, listTools } from "../listTools.js";
import {
  changedFields,
  foreignTools,
  loadPins,
  PinError,
  type PinnedServer,
  pinnable,
  pinOf,
  savePins,
} from "../pins.js";

const PIN = defineCommand({
  name: "mcpguard pin",
  description:
    "Start the server, read its tools/list, and pin each tool under the server's name in the pin file: " +
    "its description and title as written, its annotations, and the sha256 of its input and output " +
    "schemas and of its _meta and icons. The file is reviewable JSON, kept where no server may write it (mcpguard run refuses it " +
    "otherwise); it is created when missing, and the other servers' pins are kept. Give every server " +
    "of the config the same file, and " +
    "mcpguard run --pins FILE (C-app, C-full) withholds a tool whose definition changed since, and a " +
    "tool that takes a name another server has pinned; names are compared as people read them (NFKC, " +
    "Unicode's confusable skeleton, case folded).\n\n" +
    "Prints what changed since the server's last pin, the names another server of the file has pinned, " +
    "and what L2 flags in the listing. A pin records what a person reviewed: it never exempts a text " +
    "from L2, and running it again is how an update is accepted (review the diff, then commit).",
  withCommand: "required",
  options: {
    pins: { type: "string", value: "file", help: "the pin file (required)" },
    server: {
      type: "string",
      value: "name",
      help:
        "the server's name in the file, as mcpguard run names it (its --server-name, else its policy's " +
        "server, else the command's script name)",
    },
    root: {
      type: "string",
      multiple: true,
      value: "dir",
      help: "a folder to declare as the client's MCP roots (as policy derive does; repeatable)",
    },
    "timeout-ms": {
      type: "string",
      value: "n",
      help: "how long the server may take to answer (default 15000)",
    },
  },
});

/** The lines that say how a server's new pin differs from its old one. */
function diffLines(before: PinnedServer | undefined, after: PinnedServer): string[] {
  if (!before) return Object.keys(after.tools).map((name) => `+ ${name}`);
  const lines: string[] = [];
  for (const [name, pin] of Object.entries(after.tools)) {
    const old = Object.hasOwn(before.tools, name) ? before.tools[name] : undefined;
    if (!old) lines.push(`+ ${name}`);
    else {
      const fields = changedFields(old, pin);
      if (fields.length) lines.push(`~ ${name}: ${fields.join(", ")}`);
    }
  }
  for (const name of Object.keys(before.tools))
    if (!Object.hasOwn(after.tools, name)) lines.push(`- ${name}`);
  return lines;
}

export async function main(argv: string[]): Promise<number> {
  const parsed = PIN.parse(argv);
  if (!parsed) return 0;
  const { values, command } = parsed;
  if (!values.pins) throw new UsageError("--pins FILE is required (the client config's pin file)");
  if (command.length === 0)
    throw new UsageError("no server command given (mcpguard pin --pins FILE -- <command> [args...])");
  const file = resolve(values.pins);
  const roots = (values.root ?? []).map((dir) => {
    const path = resolve(dir);
    try {
      if (statSync(path).isDirectory()) return realpathSync(path);
    } catch {
      // Reported below.
    }
    throw new UsageError(`--root ${dir}: not a folder`);
  });
  let pins: ReturnType<typeof loadPins>;
  try {
    pins = loadPins(file, true);
  } catch (error) {
    if (error instanceof PinError) throw new UsageError(error.message);
    throw error;
  }
  const server = values.server ?? serverNameFromCommand(command);
  if (!pinnable(server)) throw new UsageError(`--server ${server}: a pin file cannot hold that name`);
  let listing: Awaited<ReturnType<typeof listTools>>;
  try {
    listing = await listTools(command, {
      roots,
      timeoutMs: intOption(values["timeout-ms"], "timeout-ms", 15_000),
    });
  } catch (error) {
    if (error instanceof ListingError) throw new UsageError(error.message);
    throw error;
  }
  const kept = listing.tools.filter((tool) => pinnable(tool.name));
  const entry: PinnedServer = {
    serverInfo: { name: listing.serverInfo.name, version: listing.serverInfo.version },
    tools: Object.fromEntries(kept.map((tool) => [tool.name, pinOf(tool)])),
  };
  const before = Object.hasOwn(pins.servers, server) ? pins.servers[server] : undefined;
  const report = [...diffLines(before, entry)];
  for (const skipped of listing.skipped) report.push(`? ${skipped.name}: not pinned: ${skipped.reason}`);
  for (const tool of listing.tools)
    if (!pinnable(tool.name))
      report.push(
        `? ${tool.name}: not pinned: a pin file cannot hold that name (mcpguard run withholds the tool)`,
      );
  const validator = await import("@mcpguard/validator");
  const foreign = [...foreignTools(pins, server)];
  // Names compared as mcpguard run compares them: a name that reads as another's is that name.
  const pinnedElsewhere = new validator.NameIndex(
    foreign.map(([name, other]) => [name, { other, name }] as const),
  );
  for (const name of Object.keys(entry.tools)) {
    const found = pinnedElsewhere.find(name);
    if (found !== undefined)
      report.push(
        found.name === name
          ? `! ${name}: "${found.other}" pins the same name; pinned for both, both may list it (review that this is meant)`
          : `! ${validator.shownName(name)}: reads as "${found.name}", which "${found.other}" pins; pinned for both, both may list it (review that this is meant)`,
      );
  }
  report.push(
    ...findingLines(validator, listing.tools, new validator.NameKeys(foreign.map(([name]) => name))),
  );
  pins.servers[server] = entry;
  savePins(file, pins);
  const shown = report.length ? `\n${report.map((line) => `  ${line}`).join("\n")}` : " (no change)";
  process.stdout.write(`pinned ${Object.keys(entry.tools).length} tools of "${server}" in ${file}${shown}\n`);
  return 0;
}

/** What L2 would flag in the listing, one line per finding. */
function findingLines(
  validator: typeof import("@mcpguard/validator"),
  tools: readonly Record<string, unknown>[],
  foreignNames: import("@mcpguard/validator").NameSet,
): string[] {
  const ownNames = new validator.NameKeys(
    tools.map((t) => t.name).filter((n): n is string => typeof n === "string"),
  );
  return tools.flatMap((tool) =>
    validator
      .scanItem("tools", tool, { ownNames, foreignNames })
      .map((f) => `? ${validator.itemName("tools", tool)}: ${f.where}: ${f.reason} (${f.rule})`),
  );
}
