import { existsSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { intOption, parseOptions, parseWithCommand, UsageError } from "../args.js";
import { ListingError, listTools } from "../listTools.js";

const HELP = `usage: mcpguard policy derive [--out FILE] [--server NAME] [--root DIR]... [--timeout-ms N] -- <command> [args...]
       mcpguard policy check [FILE|DIR...]

derive  start the server, read its tools/list, and write a least-privilege draft policy
        (argument roles from the schemas; annotations may only take capabilities away).
        Path tools get the server's roots: the folders its command line names (positional
        folders, --root/--dir/--allowed-style options, key=path), and each --root DIR, which
        derive also declares as the client's MCP roots. Never {{cwd}}: the folder a client
        starts the proxy in is not the server's. Without any root, the folder derive runs in,
        unless that is / or a home. The draft is marked "draft": true. A server that does
        not answer within --timeout-ms (15000) is an error.
check   validate policy, AgentBound manifest, override and pin files (default: ./policies)
`;

const DERIVE_OPTIONS = {
  out: { type: "string" },
  server: { type: "string" },
  root: { type: "string", multiple: true },
  "timeout-ms": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Directories a draft never grants on its own: the root and the homes. */
function broad(dir: string): boolean {
  const home = process.env.HOME;
  return ["/", "/home", "/root", ...(home ? [home] : [])].some((b) => resolve(b) === resolve(dir));
}

/** What the server runs (through npx or a shim), for its script and its own arguments. */
async function launchOf(command: string[], cwd: string): Promise<{ script?: string; args: string[] }> {
  const kernel = await import("@mcpguard/kernel");
  try {
    return await kernel.resolveLaunch(command, { env: process.env, cwd });
  } catch {
    // Unresolved (a launcher mcpguard does not know, or not installed): read the words as given.
    try {
      const npx = kernel.parseNpx(command);
      if (npx) return { args: npx.args };
    } catch {
      // Not an npx command line mcpguard can read.
    }
    return kernel.splitCommand(command);
  }
}

async function derive(argv: string[]): Promise<number> {
  const { values, command } = parseWithCommand(argv, DERIVE_OPTIONS);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (command.length === 0)
    throw new UsageError("no server command given (mcpguard policy derive -- <command> [args...])");
  const cwd = process.cwd();
  const clientRoots = (values.root ?? []).map((dir) => {
    const path = resolve(cwd, dir);
    if (!existsSync(path) || !statSync(path).isDirectory())
      throw new UsageError(`--root ${dir}: not a folder`);
    return realpathSync(path);
  });
  const policyLib = await import("@mcpguard/policy");
  const launch = await launchOf(command, cwd);
  let listing: Awaited<ReturnType<typeof listTools>>;
  try {
    listing = await listTools(command, {
      roots: clientRoots,
      timeoutMs: intOption(values["timeout-ms"], "timeout-ms", 15_000),
    });
  } catch (error) {
    if (error instanceof ListingError) throw new UsageError(error.message);
    throw error;
  }
  const found = policyLib.serverRoots(launch.args, cwd);
  const script = launch.script ? resolve(cwd, launch.script) : undefined;
  const data = policyLib.knownServerData(script, process.env);
  const notes = [...data.notes];
  let roots = [...new Set([...found.roots, ...clientRoots])];
  if (roots.length === 0 && listing.tools.some(policyLib.takesPath)) {
    if (broad(cwd)) {
      notes.push(
        `no folder on the server's command line and no --root, and derive ran in ${cwd}: nothing granted`,
      );
    } else {
      roots = [cwd];
      notes.push(`no folder on the server's command line and no --root: granted the folder derive ran in`);
    }
  }
  const server = values.server ?? listing.serverInfo.name;
  const policy = policyLib.derivePolicy(server, listing.tools, listing.serverInfo.name, {
    roots,
    dataFiles: [...found.files, ...data.files],
    keepEnv: data.keepEnv,
    skipped: listing.skipped,
    notes,
  });
  for (const { name, reason } of listing.skipped) {
    process.stderr.write(`mcpguard policy derive: skipped tool "${name}": ${reason}\n`);
  }
  for (const line of broadWarnings(policyLib, policy)) process.stderr.write(`${line}\n`);
  const text = `${JSON.stringify(policy, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    const where = roots.length ? `; roots ${roots.join(", ")}` : "";
    process.stderr.write(
      `wrote a draft policy for ${server} (${listing.tools.length} tools${where}) to ${values.out}; review it before use\n`,
    );
  } else {
    process.stdout.write(text);
  }
  return 0;
}

/** A line for each grant of the draft that `mcpguard run` will refuse as too broad. */
function broadWarnings(
  policyLib: typeof import("@mcpguard/policy"),
  policy: import("@mcpguard/policy").Policy,
): string[] {
  const dirs = ["/", "/home", "/root", ...(process.env.HOME ? [process.env.HOME] : [])];
  const seen = new Set<string>();
  for (const tool of Object.values(policy.tools)) {
    for (const pattern of [...tool.read, ...tool.write]) {
      const dir = policyLib.broadCoverage(pattern, dirs);
      if (dir) seen.add(`${pattern} covers ${dir}`);
    }
  }
  return [...seen].map(
    (what) =>
      `mcpguard policy derive: warning: ${what} entirely; mcpguard run refuses it until the grant is narrowed or the policy sets "allowBroadGrants": true`,
  );
}

type Kind = "policy" | "manifest" | "overrides" | "pins";

function kindOf(file: string, value: unknown): Kind | undefined {
  const folder = basename(dirname(file));
  if (folder === "servers") return "policy";
  if (folder === "agentbound") return "manifest";
  if (folder === "overrides") return "overrides";
  if (folder === "pins") return "pins";
  if (value && typeof value === "object") {
    if ("permissions" in value) return "manifest";
    if ("overrides" in value) return "overrides";
    if ("tools" in value) return "policy";
    if ("servers" in value) return "pins";
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
  const { PinFile } = await import("../pins.js");
  const schemas = { policy: Policy, manifest: Manifest, overrides: OverrideFile, pins: PinFile };
  let bad = 0;
  let count = 0;
  for (const file of paths.flatMap((p) => jsonFiles(resolve(p)))) {
    count++;
    try {
      const value = policyLib.readJson(file);
      const kind = kindOf(file, value);
      if (!kind)
        throw new policyLib.PolicyError(
          `${file}: not a policy, manifest, overrides or pin file (no "tools", "permissions", "overrides" or "servers")`,
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
  if (sub === "export") return (await import("./policyExport.js")).exportCommand(rest);
  if (sub === undefined || sub === "--help" || sub === "-h") {
    process.stdout.write(HELP);
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`unknown policy command "${sub}" (derive, check, export)`);
}
