/**
 * L1: decide one tool call against the server's resolved policy. A tool the policy does not
 * declare is refused; so is an argument it does not declare. Paths are judged on their canonical
 * form, URLs by host and port, commands by every program they run and every file they name.
 */
import { basename } from "node:path";
import type { ResolvedPolicy, ResolvedTool } from "./load.js";
import { canonicalPath, type PathResolver } from "./paths.js";
import { parseCommand } from "./shell.js";
import { parseSql } from "./sql.js";

export type Decision = { allow: true } | { allow: false; rule: string; reason: string };

export const ALLOW: Decision = { allow: true };
const deny = (rule: string, reason: string): Decision => ({ allow: false, rule, reason });

const DEFAULT_PORTS = new Map([
  ["http:", "80"],
  ["https:", "443"],
  ["ws:", "80"],
  ["wss:", "443"],
  ["ftp:", "21"],
]);

/** Whether `host:port` is one of the destinations (`host`, `host:port`, `*.domain`, `[v6]:port`). */
export function destinationAllowed(host: string, port: string, destinations: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return destinations.some((d) => {
    const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(d.toLowerCase());
    if (!m) return false;
    const [, dHost = "", dPort] = m;
    if (dPort && dPort !== port) return false;
    if (dHost.startsWith("*.")) return h.endsWith(dHost.slice(1)) && h.length > dHost.length - 1;
    return dHost === h;
  });
}

/** Both files a path can name (after the server normalises it, and as the kernel walks it) must be allowed. */
function checkPath(
  value: string,
  access: "read" | "write",
  tool: ResolvedTool,
  cwd: string,
  resolvePath: PathResolver,
): Decision {
  const { canonical, physical } = resolvePath(value, cwd);
  for (const path of canonical === physical ? [canonical] : [canonical, physical]) {
    // A tool allowed to write a path may also read it.
    const allowed =
      access === "read" ? tool.read.match(path) || tool.write.match(path) : tool.write.match(path);
    if (!allowed) return deny(`l1.path.${access}`, `${path} is outside what ${tool.name} may ${access}`);
  }
  return ALLOW;
}

function checkUrl(value: string, tool: ResolvedTool): Decision {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return deny("l1.url.invalid", "the URL argument does not parse");
  }
  const port = url.port || DEFAULT_PORTS.get(url.protocol) || "";
  if (destinationAllowed(url.hostname, port, tool.network)) return ALLOW;
  return deny("l1.network", `${url.hostname}:${port} is not a destination ${tool.name} may reach`);
}

/** A word that names a file: absolute, relative with a slash, or in the home directory. */
function pathLike(word: string): string | undefined {
  const value = word.includes("=") && !word.startsWith("/") ? word.slice(word.indexOf("=") + 1) : word;
  const stripped = value.startsWith("@") ? value.slice(1) : value;
  if (
    /^(\/|\.\.?\/|\.\.?$|~)/.test(stripped) ||
    (stripped.includes("/") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(stripped))
  ) {
    return stripped;
  }
  return undefined;
}

function executableAllowed(argv: readonly string[], allowed: readonly string[], cwd: string): boolean {
  const [program = "", first] = argv;
  return allowed.some((entry) => {
    const [name = "", sub] = entry.split(" ");
    if (sub !== undefined && sub !== first) return false;
    if (program.includes("/")) {
      // An explicit path must match an absolute entry exactly: `./date` is not the `date` on PATH.
      return (
        name.startsWith("/") && canonicalPath(program, cwd).canonical === canonicalPath(name, "/").canonical
      );
    }
    return name === program;
  });
}

function checkCommand(
  value: string,
  tool: ResolvedTool,
  vars: ResolvedPolicy["variables"],
  resolvePath: PathResolver,
): Decision {
  const parsed = parseCommand(value);
  if (parsed.malformed) return deny("l1.command.unparsable", "the command has unbalanced quotes");
  if (parsed.substitution) {
    return deny(
      "l1.command.dynamic",
      "the command substitutes the output of other commands, so what runs cannot be checked",
    );
  }
  if (parsed.commands.length === 0) return deny("l1.command.empty", "the command is empty");
  const home = vars.home;
  const resolveWord = (word: string) => (word.startsWith("~") && home ? `${home}${word.slice(1)}` : word);
  for (const command of parsed.commands) {
    if (command.argv.length === 0) continue;
    const program = command.argv[0] as string;
    if (program.includes("$")) {
      return deny("l1.command.dynamic", "the program to run comes from a variable, so it cannot be checked");
    }
    if (!executableAllowed(command.argv, tool.exec, vars.cwd)) {
      return deny("l1.exec", `${basename(program)} is not a program ${tool.name} may run`);
    }
    for (const word of command.argv.slice(1)) {
      const path = pathLike(word);
      if (!path) continue;
      // The shell hands the word to the program, which opens it as the kernel walks it.
      const { physical } = resolvePath(resolveWord(path), vars.cwd);
      if (!tool.read.match(physical) && !tool.write.match(physical)) {
        return deny("l1.path.read", `${physical} is outside what ${tool.name} may touch`);
      }
    }
    for (const redirect of command.redirects) {
      const access = redirect.op === "<" ? "read" : "write";
      const decision = checkPath(resolveWord(redirect.target), access, tool, vars.cwd, resolvePath);
      if (!decision.allow) return decision;
    }
  }
  return ALLOW;
}

function checkSql(value: string, tool: ResolvedTool): Decision {
  const parsed = parseSql(value);
  for (const statement of parsed.statements) {
    if (statement.sqlClass === "unknown" || !tool.sql.has(statement.sqlClass)) {
      const what =
        statement.sqlClass === "unknown"
          ? `"${statement.verb || "?"}" statements`
          : `${statement.sqlClass} statements (${statement.verb})`;
      return deny("l1.sql", `${tool.name} may not run ${what}`);
    }
  }
  return ALLOW;
}

/** L1's decision on one call; `resolvePath` may be shared with L2 for the call ({@link callPathResolver}). */
export function decide(
  policy: ResolvedPolicy,
  name: string,
  args: Record<string, unknown>,
  resolvePath: PathResolver = canonicalPath,
): Decision {
  const tool = policy.tools.get(name);
  if (!tool)
    return deny("l1.undeclared-tool", `the policy of ${policy.server} does not declare the tool "${name}"`);
  for (const [arg, value] of Object.entries(args)) {
    // An own property only: "constructor" or "toString" is not declared by Object.prototype.
    const role = Object.hasOwn(tool.args, arg) ? tool.args[arg] : undefined;
    if (!role)
      return deny("l1.undeclared-argument", `the policy of ${name} does not declare the argument "${arg}"`);
    if (typeof value !== "string") continue;
    let decision: Decision = ALLOW;
    if (role === "path.read" || role === "path.write") {
      const access = role === "path.read" ? "read" : "write";
      decision = checkPath(value, access, tool, policy.variables.cwd, resolvePath);
    } else if (role === "url") decision = checkUrl(value, tool);
    else if (role === "command") decision = checkCommand(value, tool, policy.variables, resolvePath);
    else if (role === "sql") decision = checkSql(value, tool);
    if (!decision.allow) return decision;
  }
  return ALLOW;
}
