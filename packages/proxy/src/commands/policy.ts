import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parseOptions, parseWithCommand, UsageError } from "../args.js";
import { listTools } from "../listTools.js";

const HELP = `usage: mcpguard policy derive [--out FILE] [--server NAME] -- <command> [args...]
       mcpguard policy check [FILE|DIR...]

derive  start the server, read its tools/list, and write a least-privilege draft policy
        (argument roles from the schemas; annotations may only take capabilities away)
check   validate policy, AgentBound manifest and override files (default: ./policies)
`;

async function derive(argv: string[]): Promise<number> {
  const { values, command } = parseWithCommand(argv, {
    out: { type: "string" },
    server: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (command.length === 0)
    throw new UsageError("no server command given (mcpguard policy derive -- <command> [args...])");
  const { derivePolicy } = await import("@mcpguard/policy");
  const listing = await listTools(command);
  const server = values.server ?? listing.serverInfo.name;
  const policy = derivePolicy(server, listing.tools, listing.serverInfo.name);
  const text = `${JSON.stringify(policy, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    process.stderr.write(
      `wrote a draft policy for ${server} (${listing.tools.length} tools) to ${values.out}; review it before use\n`,
    );
  } else {
    process.stdout.write(text);
  }
  return 0;
}

type Kind = "policy" | "manifest" | "overrides";

function kindOf(file: string, value: unknown): Kind | undefined {
  const folder = basename(dirname(file));
  if (folder === "servers") return "policy";
  if (folder === "agentbound") return "manifest";
  if (folder === "overrides") return "overrides";
  if (value && typeof value === "object") {
    if ("permissions" in value) return "manifest";
    if ("overrides" in value) return "overrides";
    if ("tools" in value) return "policy";
  }
  return undefined;
}

function jsonFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? jsonFiles(join(path, e.name)) : e.name.endsWith(".json") ? [join(path, e.name)] : [],
    )
    .sort();
}

async function check(argv: string[]): Promise<number> {
  const { positionals, values } = parseOptions(argv, { help: { type: "boolean", short: "h" } });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const paths = positionals.length ? positionals : ["policies"];
  for (const p of paths) if (!existsSync(p)) throw new UsageError(`no such file or directory: ${p}`);
  const policyLib = await import("@mcpguard/policy");
  const { Policy, OverrideFile } = await import("@mcpguard/policy/schema");
  const { Manifest } = await import("@mcpguard/agentbound/schema");
  const schemas = { policy: Policy, manifest: Manifest, overrides: OverrideFile };
  let bad = 0;
  let count = 0;
  for (const file of paths.flatMap((p) => jsonFiles(resolve(p)))) {
    count++;
    try {
      const value = policyLib.readJson(file);
      const kind = kindOf(file, value);
      if (!kind)
        throw new policyLib.PolicyError(
          `${file}: not a policy, manifest or overrides file (no "tools", "permissions" or "overrides")`,
        );
      const parsed = schemas[kind].safeParse(value);
      if (!parsed.success)
        throw new policyLib.PolicyError(policyLib.formatIssues(file, parsed.error).join("\n"));
    } catch (error) {
      if (!(error instanceof policyLib.PolicyError)) throw error;
      bad++;
      process.stderr.write(`${error.message}\n`);
    }
  }
  process.stdout.write(`${count} files checked, ${bad} invalid\n`);
  return bad ? 1 : 0;
}

export async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "derive") return derive(rest);
  if (sub === "check") return check(rest);
  if (sub === undefined || sub === "--help" || sub === "-h") {
    process.stdout.write(HELP);
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`unknown policy command "${sub}" (derive, check)`);
}
