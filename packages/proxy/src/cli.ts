/** The `mcpguard` command line. Each subcommand is loaded on demand to keep `run`'s start-up small. */
import { UsageError } from "./args.js";

interface Command {
  summary: string;
  load: () => Promise<{ main(argv: string[]): Promise<number> }>;
}

const COMMANDS: Record<string, Command> = {
  run: { summary: "run an MCP server behind the proxy", load: () => import("./commands/run.js") },
};

function usage(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    "usage: mcpguard <command> [options]",
    "",
    "commands:",
    ...rows,
    "",
    "mcpguard <command> --help for its options",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`mcpguard: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  try {
    const module = await command.load();
    return await module.main(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`mcpguard ${name}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
