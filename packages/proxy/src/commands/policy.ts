import { existsSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { defineCommand, dispatch, intOption, UsageError } from "../args.js";
import { ListingError, listTools } from "../listTools.js";
import { probeRelativeBase } from "../probeBase.js";
import { ownBin } from "../self.js";
import { serverCode } from "../serverCode.js";

const DERIVE = defineCommand({
  name: "mcpguard policy derive",
  description:
    "Start the server, read its tools/list, and write a least-privilege draft policy (argument roles " +
    "from the schemas; annotations may only take capabilities away). Path tools get the server's " +
    "roots: the folders its command line names (positional folders, --root/--dir/--allowed-style " +
    "options, key=path), and each --root, which derive also declares as the client's MCP roots; " +
    "written {{cwd}}/... where the command line names them relatively. Without any root, {{cwd}} " +
    "(the folder the server starts in), unless derive runs in / or a home. Variables its code reads " +
    "(process.env.X, os.environ[...]) that are set here, and each --keep-env, are kept, a secret " +
    "among them named on stderr; a *_FILE, *_PATH, *_DIR or *_DB among them is granted as its data. " +
    'The draft lists what derive could not see, and is marked "draft": true.',
  withCommand: "required",
  options: {
    out: { type: "string", value: "file", help: "write the draft there (default: standard output)" },
    server: {
      type: "string",
      value: "name",
      help: "the server's name in the policy (default: its script's)",
    },
    root: {
      type: "string",
      multiple: true,
      value: "dir",
      help: "a folder the server works in (repeatable); also declared as the client's MCP roots",
    },
    "keep-env": {
      type: "string",
      multiple: true,
      value: "name",
      help: "a variable the client sets for the server (repeatable; wrap passes its entry's): kept, like those its code reads",
    },
    "timeout-ms": {
      type: "string",
      value: "n",
      help: "a server that does not answer within n ms is an error (default 15000)",
    },
  },
});

const CHECK = defineCommand({
  name: "mcpguard policy check",
  description:
    "Validate policy, AgentBound manifest, override and pin files; exit status 1 when one is invalid.",
  args: [["[paths...]", "files, or folders searched for *.json (default: ./policies)"]],
  options: {},
});

/** Directories a draft never grants on its own: the root and the homes. */
function broad(dir: string): boolean {
  const home = process.env.HOME;
  return ["/", "/home", "/root", ...(home ? [home] : [])].some((b) => resolve(b) === resolve(dir));
}

/** What the server runs (through npx or a shim), for its script and its own arguments. */
async function launchOf(
  command: string[],
  cwd: string,
): Promise<{ argv?: string[]; script?: string; args: string[] }> {
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

/** Whether every L3 capability has a backend here: the probe of a server runs under C-ebpf. */
async function kernelReady(): Promise<boolean> {
  const kernel = await import("@mcpguard/kernel");
  const probe = await kernel.probeBackends();
  const backends = { ...kernel.capabilityBackends(probe), ...kernel.hardeningBackends(probe) };
  return [...kernel.CAPABILITIES, ...kernel.HARDENING].every((c) => backends[c].backend !== null);
}

// long: policy derive's steps in order (list, read code, environment, path probe, write) over one set of options
async function derive(argv: string[]): Promise<number> {
  const parsed = DERIVE.parse(argv);
  if (!parsed) return 0;
  const { values, command } = parsed;
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
  const relative = new Set(found.relative);
  const script = launch.script ? resolve(cwd, launch.script) : undefined;
  const data = policyLib.knownServerData(script, process.env);
  const notes = [...data.notes];
  const unseen: string[] = [];
  let roots = [...new Set([...found.roots, ...clientRoots])];
  if (roots.length === 0 && listing.tools.some(policyLib.takesFiles)) {
    if (broad(cwd)) {
      notes.push(
        `no folder on the server's command line and no --root, and derive ran in ${cwd}: nothing granted`,
      );
    } else {
      roots = [cwd];
      relative.add(cwd);
      notes.push(
        "no folder on the server's command line and no --root: granted {{cwd}}, the folder the server starts in",
      );
    }
  }
  // The variables the server needs: those its code reads that are set here, and the entry's own.
  const env = serverVariables(policyLib, launch, command, script, cwd, values["keep-env"] ?? []);
  unseen.push(...env.unseen);
  for (const name of env.secrets)
    process.stderr.write(
      `mcpguard policy derive: keeps ${name} for the server (${env.why.get(name)}): a secret, passed through at spawn\n`,
    );
  const dataDirs: string[] = [];
  const dataFiles = [...found.files, ...data.files];
  for (const [name, path] of env.data) {
    if (dataFiles.includes(path)) continue;
    const isDir = existsSync(path) && statSync(path).isDirectory();
    (isDir ? dataDirs : dataFiles).push(path);
    notes.push(`${name} names ${isDir ? "a data folder" : "a data file"}, ${path}`);
  }
  const server = values.server ?? listing.serverInfo.name;
  // Where it resolves a relative path: asked of the server itself, in a scratch world (probeBase.ts).
  const base = listing.tools.some(policyLib.takesPath)
    ? await probeRelativeBase({
        bin: ownBin(),
        argv: command,
        cwd,
        env: process.env,
        roots: found.roots,
        clientRoots,
        tools: listing.tools,
        probe: policyLib.probeTool(listing.tools),
        timeoutMs: intOption(values["timeout-ms"], "timeout-ms", 15_000),
        kernelReady: await kernelReady(),
      })
    : undefined;
  if (base && "unknown" in base)
    notes.push(`where it resolves a relative path is not known (${base.unknown})`);
  else if (base)
    notes.push(
      `asked in a scratch world, ${base.tool} resolved a relative path against ${base.base === "root" ? base.root : "its working directory"}`,
    );
  const drafted = (path: string) => policyLib.asDrafted(path, cwd, relative);
  unseen.push(
    "files and programs its code opens on its own (run it under this draft, then mcpguard policy learn proposes them)",
  );
  notes.push(`Could not see: ${unseen.join("; ")}`);
  const policy = policyLib.derivePolicy(server, listing.tools, listing.serverInfo.name, {
    roots: roots.map(drafted),
    dataFiles: dataFiles.map(drafted),
    dataDirs: dataDirs.map(drafted),
    keepEnv: [...data.keepEnv, ...env.keep],
    skipped: listing.skipped,
    notes,
    relativeTo: base && "base" in base && base.base === "root" ? drafted(base.root) : undefined,
    relativeUnknown: base !== undefined && "unknown" in base,
  });
  for (const { name, reason } of listing.skipped) {
    process.stderr.write(`mcpguard policy derive: skipped tool "${name}": ${reason}\n`);
  }
  for (const line of broadWarnings(policyLib, policy)) process.stderr.write(`${line}\n`);
  const text = `${JSON.stringify(policy, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    const where = roots.length ? `; roots ${roots.map(drafted).join(", ")}` : "";
    process.stderr.write(
      `wrote a draft policy for ${server} (${listing.tools.length} tools${where}) to ${values.out}; review it before use\n`,
    );
  } else {
    process.stdout.write(text);
  }
  return 0;
}

/** Variables that change how a runtime starts, never kept for a server on the strength of its code. */
const RUNTIME_VARIABLES =
  /^(LD_|DYLD_|NODE_OPTIONS$|NODE_PATH$|PYTHON|PERL5|PERLLIB$|RUBYOPT$|RUBYLIB$|BASH_ENV$|ENV$|IFS$|GCONV_PATH$)/;
/** The names of variables that locate a server's data. */
const DATA_VARIABLE = /(^|_)(FILE|PATH|DIR|DB|DATABASE|DATA|HOME|ROOT|FOLDER|DIRECTORY|STORE|STORAGE)$/;

/**
 * The variables a server needs kept at spawn: those its code reads (serverCode.ts) that are set
 * where derive runs, and those the client config sets for it (--keep-env). A secret among them is
 * named on stderr; one of a data name whose value is a path is its data (a folder or a file).
 */
function serverVariables(
  policyLib: typeof import("@mcpguard/policy"),
  launch: { argv?: string[]; script?: string },
  command: string[],
  script: string | undefined,
  cwd: string,
  given: readonly string[],
): {
  keep: string[];
  secrets: string[];
  data: [string, string][];
  unseen: string[];
  why: Map<string, string>;
} {
  const code = serverCode(launch.argv ?? command, script, process.env, cwd);
  const why = new Map<string, string>();
  for (const name of code.names) why.set(name, "its code reads it");
  for (const name of given) why.set(name, "the client config sets it");
  const world = new Set(policyLib.WORLD_VARIABLES);
  const keep = [...why.keys()]
    .filter((name) => process.env[name] !== undefined && !world.has(name) && !name.startsWith("MCPGUARD_"))
    .filter((name) => given.includes(name) || !RUNTIME_VARIABLES.test(name))
    .sort();
  const secrets = keep.filter((name) => {
    const value = process.env[name] as string;
    return policyLib.secretName(name) || (value.length >= 8 && policyLib.tokenShaped(value));
  });
  const data: [string, string][] = [];
  for (const name of keep) {
    const value = process.env[name] as string;
    if (!DATA_VARIABLE.test(name) || secrets.includes(name) || value.includes(":") || !/^[./~\w]/.test(value))
      continue;
    if (!value.includes("/") && !/\.[A-Za-z0-9]{1,8}$/.test(value)) continue;
    const path = resolve(cwd, value);
    if (existsSync(path) || existsSync(dirname(path))) data.push([name, path]);
  }
  const unset = code.names.filter((name) => process.env[name] === undefined && !world.has(name));
  const unseen = [
    ...(code.unseen ? [code.unseen] : []),
    ...(unset.length
      ? [
          `variables its code reads that are not set here (${unset.slice(0, 12).join(", ")}${unset.length > 12 ? ", ..." : ""})`,
        ]
      : []),
    "variables it names at run time",
  ];
  return { keep, secrets, data, unseen, why };
}

/** A line for each grant of the draft that `mcpguard run` will refuse as too broad. */
function broadWarnings(
  policyLib: typeof import("@mcpguard/policy"),
  policy: ReturnType<typeof import("@mcpguard/policy").derivePolicy>,
): string[] {
  const dirs = ["/", "/home", "/root", ...(process.env.HOME ? [process.env.HOME] : [])];
  const seen = new Set<string>();
  for (const tool of Object.values(policy.tools)) {
    for (const pattern of [...(tool.read ?? []), ...(tool.write ?? [])]) {
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
  const parsed = CHECK.parse(argv);
  if (!parsed) return 0;
  const { positionals } = parsed;
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

export function main(argv: string[]): Promise<number> | number {
  return dispatch(
    "mcpguard policy",
    "Derive a draft policy from a server, check policy files, or export one.",
    {
      derive: {
        summary: "start a server and write a least-privilege draft policy from its tools",
        run: derive,
      },
      learn: {
        summary: "propose the grants a server's refusals needed, from its audit log",
        run: async (rest) => (await import("./policyLearn.js")).learnCommand(rest),
      },
      check: { summary: "validate policy, manifest, override and pin files", run: check },
      export: {
        summary: "write a policy as another sandbox's profile (srt, bwrap, firejail, landlock, ...)",
        run: async (rest) => (await import("./policyExport.js")).exportCommand(rest),
      },
    },
    argv,
  );
}
