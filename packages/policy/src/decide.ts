/**
 * L1: decide one tool call against the server's resolved policy. A tool the policy does not
 * declare is refused; so is an argument it does not declare. Paths are judged on their canonical
 * form, URLs by host and port, commands by every program they run and every file they name.
 */

import { isAbsolute } from "node:path";
import { type Confinement, readSql, type StatementClass, UNCONFINED } from "@mcpguard/readers";
import { checkCommand } from "./command.js";
import { ALLOW, type Decision, destinationAllowed, destinationOf, type Need } from "./decision.js";
import type { ResolvedPolicy, ResolvedTool } from "./load.js";
import { canonicalPath, type PathResolver, PathSet } from "./paths.js";

const deny = (rule: string, reason: string, need?: Need): Decision =>
  need ? { allow: false, rule, reason, need } : { allow: false, rule, reason };

const DEFAULT_PORTS = new Map([
  ["http:", "80"],
  ["https:", "443"],
  ["ws:", "80"],
  ["wss:", "443"],
  ["ftp:", "21"],
]);

/** Both files a path can name (after the server normalises it, and as the kernel walks it) must be allowed. */
function checkPath(
  value: string,
  access: "read" | "write",
  tool: ResolvedTool,
  cwd: string,
  resolvePath: PathResolver,
): Decision {
  const { canonical, physical, loop } = resolvePath(value, cwd);
  if (loop) return deny("l1.path.symlink-loop", `${value}: symlink loop`);
  for (const path of canonical === physical ? [canonical] : [canonical, physical]) {
    // A tool allowed to write a path may also read it.
    const allowed =
      access === "read" ? tool.read.match(path) || tool.write.match(path) : tool.write.match(path);
    if (!allowed)
      return deny(`l1.path.${access}`, `${path} is outside what ${tool.name} may ${access}`, {
        capability: access,
        value: path,
      });
  }
  return ALLOW;
}

/**
 * `~` and `~/...` as a server that expands them itself reads them (server-filesystem's
 * expandHome: `path.join(os.homedir(), p.slice(1))`, os.homedir() being $HOME), besides the
 * literal folder named `~` that the path names for one that does not: both must be allowed.
 * Undefined for any other path; "" where HOME is not known.
 */
function homeForm(path: string, home: string | undefined): string | undefined {
  if (path !== "~" && !path.startsWith("~/")) return undefined;
  return home ? `${home}${path.slice(1)}` : "";
}

/**
 * The folder a relative path argument resolves against, as the server resolves it: another
 * argument's value where the tool's `base` says so (mcp-server-git's files, relative to repo_path),
 * else the policy's `relativeTo`; refused where the server's folder is unknown.
 */
function relativeBase(
  policy: ResolvedPolicy,
  tool: ResolvedTool,
  arg: string,
  args: Record<string, unknown>,
): { dir: string } | { refuse: Decision } {
  const baseArg = Object.hasOwn(tool.base, arg) ? tool.base[arg] : undefined;
  if (baseArg !== undefined) {
    const given = Object.hasOwn(args, baseArg) ? args[baseArg] : undefined;
    if (typeof given !== "string" || given === "")
      return {
        refuse: deny(
          "l1.path.base",
          `${tool.name} resolves ${arg} against ${baseArg}, which the call does not give as a path`,
        ),
      };
    // The base is itself judged as its own argument; here it only places the relative path. Kept
    // as given, not folded: the path is judged both as the server may normalise it and as the kernel
    // walks it, and the kernel climbs a `..` in the base from a link's target (paths.ts).
    return { dir: isAbsolute(given) ? given : `${policy.relativeTo}/${given}` };
  }
  if (policy.relativePaths === "refuse")
    return {
      refuse: deny(
        "l1.path.relative",
        `${arg} is a relative path, and the folder ${policy.server} resolves it against is not known: give an absolute path`,
      ),
    };
  return { dir: policy.relativeTo };
}

/**
 * A version control name (branch, tag, commit): git reads one that starts with "-" as an option
 * (`--output=FILE` writes a file; mcp-server-git's argument injection), and a NUL or a line break
 * is no name.
 */
function checkRef(value: string, tool: ResolvedTool, arg: string): Decision {
  if (value.startsWith("-"))
    return deny("l1.ref.option", `${arg} of ${tool.name} starts with "-": git would read it as an option`);
  if (/[\0\n\r]/.test(value)) return deny("l1.ref.invalid", `${arg} of ${tool.name} is no ref name`);
  return ALLOW;
}

function checkUrl(value: string, tool: ResolvedTool): Decision {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // An unparsable URL is refused, which is the answer.
    return deny("l1.url.invalid", "the URL argument does not parse");
  }
  // A data: URL carries its content in itself: it names no destination.
  if (url.protocol === "data:") return ALLOW;
  const port = url.port || DEFAULT_PORTS.get(url.protocol) || "";
  if (destinationAllowed(url.hostname, port, tool.network)) return ALLOW;
  return deny("l1.network", `${url.hostname}:${port} is not a destination ${tool.name} may reach`, {
    capability: "network",
    value: destinationOf(url.hostname, port),
  });
}

/** Every statement, as SQLite's grammar reads it, must be of a class the tool may run. */
function checkSql(value: string, tool: ResolvedTool): Decision {
  const reading = readSql(value);
  if (!reading.ok) return deny("l1.sql.unparsable", `the SQL does not parse as SQLite: ${reading.reason}`);
  for (const statement of reading.statements) {
    if (statement.dangerous) {
      const { verb, reason } = statement.dangerous;
      return deny("l1.sql.dangerous", `${tool.name} may not use ${verb}, which ${reason}`);
    }
    if (statement.unknown) {
      const what = `${statement.unknown} statements, which mcpguard does not judge`;
      return deny("l1.sql", `${tool.name} may not run ${what}`);
    }
    const missing = statement.needs.find((need) => !tool.sql.has(need.sqlClass));
    const what = missing && `${missing.sqlClass} statements (${missing.verb})`;
    if (what && missing)
      return deny("l1.sql", `${tool.name} may not run ${what}`, {
        capability: "sql",
        value: missing.sqlClass,
      });
  }
  return ALLOW;
}

export interface DecideOptions {
  /** What the kernel layer confines in this run: L1 leaves those effects to it (command.ts). */
  confined?: Confinement;
}

/** L1's decision on one call; `resolvePath` may be shared with L2 for the call ({@link callPathResolver}). */
export function decide(
  policy: ResolvedPolicy,
  name: string,
  args: Record<string, unknown>,
  resolvePath: PathResolver = canonicalPath,
  options: DecideOptions = {},
): Decision {
  const tool = policy.tools.get(name);
  if (!tool)
    return deny("l1.undeclared-tool", `the policy of ${policy.server} does not declare the tool "${name}"`);
  for (const [arg, value] of Object.entries(args)) {
    // An own property only: "constructor" or "toString" is not declared by Object.prototype.
    const role = Object.hasOwn(tool.args, arg) ? tool.args[arg] : undefined;
    if (!role)
      return deny("l1.undeclared-argument", `the policy of ${name} does not declare the argument "${arg}"`);
    if (role === "path.read" || role === "path.write") {
      // A list of paths (read_multiple_files) is judged path by path, like one path.
      const access = role === "path.read" ? "read" : "write";
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item !== "string") continue;
        const base = isAbsolute(item) ? { dir: policy.relativeTo } : relativeBase(policy, tool, arg, args);
        if ("refuse" in base) return base.refuse;
        const decision = checkPath(item, access, tool, base.dir, resolvePath);
        if (!decision.allow) return decision;
        const home = homeForm(item, policy.variables.home);
        if (home === undefined) continue;
        const inHome = home
          ? checkPath(home, access, tool, policy.relativeTo, resolvePath)
          : deny("l1.path.home", `${item} names HOME for a server that expands ~, and HOME is not known`);
        if (!inHome.allow) return inHome;
      }
      continue;
    }
    if (typeof value !== "string") continue;
    let decision: Decision = ALLOW;
    if (role === "ref") decision = checkRef(value, tool, arg);
    else if (role === "url") decision = checkUrl(value, tool);
    else if (role === "command") {
      const confined = options.confined ?? UNCONFINED;
      decision = checkCommand(value, {
        tool,
        vars: policy.variables,
        resolvePath,
        confined,
        keepEnv: policy.keepEnv,
      });
    } else if (role === "sql") decision = checkSql(value, tool);
    if (!decision.allow) return decision;
  }
  return ALLOW;
}

/** At most this many grants are looked for in one call (a command may name many files). */
const MAX_NEEDS = 32;

/** The tool with one more grant: the file, program, destination or statement class a refusal lacked. */
function granted(tool: ResolvedTool, need: Need): ResolvedTool | undefined {
  switch (need.capability) {
    case "read":
    case "write":
      // An exact path: a name with a wildcard would grant more than the one file.
      if (/[*?[\]{}]/.test(need.value)) return undefined;
      return { ...tool, [need.capability]: new PathSet([...tool[need.capability].patterns, need.value]) };
    case "exec":
      return { ...tool, exec: [...tool.exec, need.value] };
    case "network":
      return { ...tool, network: [...tool.network, need.value] };
    case "sql":
      return { ...tool, sql: new Set([...tool.sql, need.value as StatementClass]) };
  }
}

/**
 * Every grant a refused call lacks, not only the first: L1 stops at its first refusal, so the call
 * is judged again with each missing grant added until it passes or is refused for something no
 * grant answers. For the audit log (`policy learn` learns a call's needs from one refusal); only a
 * refused call pays for it.
 */
export function missingGrants(
  policy: ResolvedPolicy,
  name: string,
  args: Record<string, unknown>,
  resolvePath: PathResolver = canonicalPath,
  options: DecideOptions = {},
): Need[] {
  const needs: Need[] = [];
  let current = policy;
  for (let i = 0; i < MAX_NEEDS; i++) {
    const d = decide(current, name, args, resolvePath, options);
    if (d.allow || !d.need) break;
    const need = d.need;
    if (needs.some((n) => n.capability === need.capability && n.value === need.value)) break;
    needs.push(need);
    const tool = current.tools.get(name);
    const more = tool && granted(tool, need);
    if (!more) break;
    current = { ...current, tools: new Map(current.tools).set(name, more) };
  }
  return needs;
}
