/**
 * What every check gets: the call's context (the server's directories, the roots path arguments
 * may resolve into, the rules an operator turned off) and the label of the value under inspection,
 * so that a finding can say which argument it is about.
 */
import { canonicalPath, isWithin, type PathResolver } from "@mcpguard/policy";

export interface ValidatorContext {
  /** The server's working directory (absolute). */
  cwd: string;
  /**
   * The folder a relative path argument is resolved against, when the server does not use its
   * working directory (the policy's `relativeTo`); default `cwd`.
   */
  pathBase?: string;
  /**
   * Arguments whose relative paths the server resolves against another argument's value (the
   * policy's `base`, mcp-server-git's files against repo_path): argument -> that folder, absolute.
   */
  pathBases?: Readonly<Record<string, string>>;
  /** The server's HOME. */
  home?: string;
  /** Canonical absolute directories that path arguments may resolve into (e.g. the workspace). */
  roots: readonly string[];
  /** Rule ids an operator override turned off. */
  disabledRules?: ReadonlySet<string>;
  /** How path arguments are resolved (default: policy `canonicalPath`); L1 may share it for the call. */
  resolvePath?: PathResolver;
  /** Deepest nesting of an argument's value that is walked; deeper is refused (default 128). */
  maxDepth?: number;
  /**
   * The server's environment when L1 filtered it at spawn: the variables it holds besides HOME,
   * PWD and TMPDIR, and those among them whose name or value looks secret. Absent, the environment
   * is unknown and any variable may hold a secret.
   */
  environment?: { present: readonly string[]; secret: readonly string[]; tmp?: string };
  /**
   * How many statements of a `sql` argument the server runs (the tool's policy); stacked
   * statements are a technique only where it runs them all (default "many").
   */
  sqlStatements?: "one" | "many";
}

/** Why L2 refuses a call. `rule` starts with "l2."; `reason` is one sentence and quotes no secret. */
export interface Finding {
  rule: string;
  reason: string;
}

/**
 * The server's directories as the kernel walks them (a base argument's `..` after a link climbs from
 * the link's target; without a `..` this is the canonical form). They rarely change over a proxy's
 * life, so they are remembered (a handful at most) instead of costing a realpath on every call.
 */
const canonicalDirs = new Map<string, string>();

function canonicalDir(dir: string): string {
  let canonical = canonicalDirs.get(dir);
  if (canonical === undefined) {
    if (canonicalDirs.size >= 32) canonicalDirs.clear();
    canonical = canonicalPath(dir, "/").physical;
    canonicalDirs.set(dir, canonical);
  }
  return canonical;
}

/** One value of a call under inspection. */
export class Scope {
  constructor(
    readonly ctx: ValidatorContext,
    /** The argument, with the position inside it for nested values (`data.email`, `paths[1]`). */
    readonly label = "",
  ) {}

  /** The same call, looking at another value. */
  at(label: string): Scope {
    return new Scope(this.ctx, label);
  }

  on(rule: string): boolean {
    return !this.ctx.disabledRules?.has(rule);
  }

  finding(rule: string, text: string): Finding {
    return { rule, reason: `argument "${this.label}" ${text}` };
  }

  /** The working directory, symlinks resolved, so that lexical paths compare with canonical roots. */
  get cwd(): string {
    return canonicalDir(this.ctx.cwd);
  }

  /** The folder relative path arguments resolve against, symlinks resolved. */
  get pathBase(): string {
    return canonicalDir(this.ctx.pathBase ?? this.ctx.cwd);
  }

  /** HOME as given and as resolved: a canonical path lands under the latter. */
  get homes(): readonly string[] {
    const home = this.ctx.home;
    if (!home) return [];
    const canonical = canonicalDir(home);
    return canonical === home ? [home] : [home, canonical];
  }

  withinRoots(path: string): boolean {
    return this.ctx.roots.some((root) => isWithin(path, root));
  }
}
