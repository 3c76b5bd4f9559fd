/** What every exported profile shares: its result shape, and the notes that hold for any sandbox. */
import { destinationText, ExportError, type Grant, type GrantedPath, hasControl, within } from "./grant.js";

export interface Exported {
  format: string;
  /** The profile, ready to write to a file. */
  text: string;
  /** What of the policy the format cannot express, or expresses only approximately. */
  notes: string[];
}

/** What a sandbox that sees the server as one process cannot express, whatever the format. */
export function sandboxNotes(grant: Grant): string[] {
  const notes = [
    "per tool: the sandbox confines the server as a whole, so each tool gets the union of every tool's capabilities",
    "per call: arguments and results are not inspected (MCPGuard's L1 and L2 judge each tools/call; a sandbox sees only the process)",
  ];
  if (grant.command.length === 0)
    notes.push("no server command was given: nothing is granted for an interpreter or a script");
  if (grant.launcher)
    notes.push(
      `command: ${commandLine(grant.launcher.command)} starts a launcher (${grant.launcher.via}), resolved as mcpguard run resolves it under the kernel layer; this profile is for what it runs, ${commandLine(grant.command)}: run that under it, not the launcher, whose cache, configuration and registry are not granted`,
    );
  return [...notes, ...grant.notes.map((n) => `plan: ${n}`)];
}

/** One argument for a POSIX shell, quoted. */
export function shellQuote(arg: string): string {
  if (arg.includes("\0")) throw new ExportError("an argument holds NUL, which no shell command can carry");
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

/**
 * The server's command as a shell command line, or `placeholder` when the export has none. An
 * argument with a line break or another control character is shown as the JSON argv instead, so
 * that a comment line of a profile stays one line.
 */
export function commandLine(command: readonly string[], placeholder = "<server argv>"): string {
  if (command.length === 0) return placeholder;
  if (command.some(hasControl)) return `<the argv ${JSON.stringify(command)}>`;
  return command.map(shellQuote).join(" ");
}

/** The environment as a sandbox that can only remove named variables expresses it. */
export function withheldNote(grant: Grant, how: string): string {
  const kept = grant.env.kept.length ? `; the policy keeps ${grant.env.kept.join(", ")}` : "";
  const n = grant.env.withheld.length;
  return n
    ? `environment: ${how} the ${n === 1 ? "variable" : `${n} variables`} present at export time that the policy withholds (${grant.env.withheld.join(", ")}); a variable set after the export reaches the server${kept}`
    : `environment: nothing to withhold at export time; a variable set after the export reaches the server${kept}`;
}

/** The policy's unix sockets in a few words. */
export function socketsSummary(grant: Grant): string {
  return grant.sockets.length ? `the policy names ${grant.sockets.join(", ")}` : "the policy names none";
}

export function networkSummary(grant: Grant): string {
  return grant.network.length ? grant.network.map(destinationText).join(", ") : "no destination";
}

/** The paths to make visible in a view, parents before children, each once with its strongest mode. */
export interface ViewEntry {
  path: string;
  mode: "ro" | "rw" | "dev";
  directory: boolean;
}

/**
 * The grant as a mount view: a path already inside a bound tree with at least its mode is left out
 * (the tree brings it); a writable file inside a read-only tree is bound again, writable.
 */
export function viewEntries(paths: readonly GrantedPath[]): ViewEntry[] {
  const out: ViewEntry[] = [];
  for (const p of [...paths].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const mode = p.device ? "dev" : p.write ? "rw" : "ro";
    let parent: ViewEntry | undefined;
    for (const e of out)
      if (within(p.path, e.path) && (!parent || e.path.length > parent.path.length)) parent = e;
    if (parent && (parent.mode === "rw" || parent.mode === mode)) continue;
    out.push({ path: p.path, mode, directory: p.directory });
  }
  return out;
}

/** The world's directories (working directory, HOME, TMPDIR) that no entry of the view reaches. */
export function hiddenDirectories(grant: Grant, view: readonly ViewEntry[]): string[] {
  const dirs = [grant.cwd, grant.home, grant.tmp].filter((d): d is string => !!d);
  return [...new Set(dirs)].filter((dir) => !view.some((e) => within(dir, e.path) || within(e.path, dir)));
}
