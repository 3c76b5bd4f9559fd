/** The `mcpguard` command line. Each subcommand is loaded on demand to keep `run`'s start-up small. */
import { readFileSync } from "node:fs";
import { isRecord } from "@mcpguard/protocol";
import { UsageError } from "./args.js";
import { findExternal, runExternal } from "./external.js";

/** The package's version, from its package.json (one directory above dist/ and src/). */
function version(): string {
  try {
    // Checked by hand, not with a zod schema: every command starts here, before zod loads.
    const pkg: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    return isRecord(pkg) && typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    // The package's own package.json missing or torn: the version is unknown, the CLI still runs.
    return "unknown";
  }
}

interface Command {
  summary: string;
  load: () => Promise<{ main(argv: string[]): Promise<number> | number }>;
}

const COMMANDS: Record<string, Command> = {
  run: { summary: "run an MCP server behind the proxy", load: () => import("./commands/run.js") },
  policy: {
    summary: "derive a draft policy from a server, or check policy files",
    load: () => import("./commands/policy.js"),
  },
  pin: {
    summary: "pin a server's tool definitions in a client config's pin file",
    load: () => import("./commands/pin.js"),
  },
  wrap: {
    summary: "put mcpguard run in front of each server of a client's config (unwrap: undo)",
    load: () => import("./commands/wrap.js"),
  },
  unwrap: {
    summary: "restore a client config that wrap changed, byte for byte",
    load: () => import("./commands/wrap.js").then((m) => ({ main: m.unwrapMain })),
  },
  doctor: {
    summary: "show which kernel backend enforces each L3 capability here",
    load: () => import("./commands/doctor.js"),
  },
  audit: {
    summary: "read an audit log, filtered by time, decision, server",
    load: () => import("./commands/audit.js"),
  },
};

/** Commands provided by other packages of the project, when they are installed. */
const EXTERNAL: Record<string, string> = {
  bench: "run the benchmark, or validate scenario files (mcpguard-bench)",
  report: "rebuild a run's reports from its trials.ndjson (mcpguard-report)",
  compare: "compare two runs' summaries; fail on a regression (mcpguard-compare)",
  soak: "attack the proxy for a long time: kills and generated frames (mcpguard-soak)",
};

/** The command a mistyped word most likely meant: at most two edits away (a swap counts as one). */
function closest(word: string, names: string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++) {
        const row = d[i] as number[];
        const prev = d[i - 1] as number[];
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        row[j] = Math.min(
          (prev[j] as number) + 1,
          (row[j - 1] as number) + 1,
          (prev[j - 1] as number) + cost,
        );
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
          row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
    return (d[a.length] as number[])[b.length] as number;
  };
  const ranked = names.map((name) => ({ name, d: distance(word, name) })).sort((x, y) => x.d - y.d);
  const best = ranked[0];
  return best && best.d <= Math.min(2, Math.floor(best.name.length / 2)) ? best.name : undefined;
}

function usage(): string {
  const rows = [
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`),
    ...Object.entries(EXTERNAL).map(([name, summary]) => `  ${name.padEnd(10)} ${summary}`),
  ];
  return [
    "usage: mcpguard <command> [options]",
    "",
    "commands:",
    ...rows,
    "",
    "mcpguard <command> --help for its options; mcpguard --version for the version",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    process.stdout.write(`mcpguard ${version()} (node ${process.versions.node})\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const external = findExternal(name);
    if (external) return runExternal(external, rest);
    const likely = closest(name, [...Object.keys(COMMANDS), ...Object.keys(EXTERNAL)]);
    const hint = EXTERNAL[name]
      ? ` (mcpguard-${name} is not installed: run npm run setup)`
      : likely
        ? ` (did you mean ${likely}?)`
        : "";
    process.stderr.write(`mcpguard: unknown command "${name}"${hint}\n\n${usage()}\n`);
    return 2;
  }
  // A reader that stops early (`mcpguard audit | head`) is no error. `run` is left alone: its stdout is
  // the client's channel, and it ends the server its own way when the client goes.
  if (name !== "run")
    process.stdout.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
      throw error;
    });
  try {
    const module = await command.load();
    return await module.main(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`mcpguard ${name}: ${error.message}\n`);
      // A client waiting on `initialize` gets the reason too, not only a closed connection.
      if (name === "run") await (await import("./refusedStart.js")).answerRefusedStart(error.message);
      return 2;
    }
    // Not the user's mistake: still one line, and the stack only when asked for.
    const message = error instanceof Error ? error.message : String(error);
    const where = process.env.MCPGUARD_DEBUG
      ? `\n${error instanceof Error ? error.stack : ""}`
      : " (MCPGUARD_DEBUG=1 shows where)";
    process.stderr.write(`mcpguard ${name}: internal error: ${message.split("\n")[0]}${where}\n`);
    return 70;
  }
}
