/**
 * The policy file format: per server, per tool, what the tool may touch. Paths are patterns over
 * canonical absolute paths, written with the variables `{{cwd}}` (the server's working directory),
 * `{{home}}` (its HOME) and `{{tmp}}` (its TMPDIR), resolved when the proxy starts the server.
 */
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";

/** What an argument is, which decides how L1 and L2 read it. */
export const ARG_ROLES = [
  "path.read",
  "path.write",
  "url",
  "command",
  "sql",
  "identifier",
  /** An object whose keys are identifiers and whose values are plain data (e.g. a row to insert). */
  "record",
  /** The name of a setting or variable. */
  "key",
  "text",
  /** A number, boolean or enum: nothing to inspect beyond its type. */
  "scalar",
  /**
   * A name in a version control system (a branch, tag, commit or revision): never a local path, and
   * never an option (git reads a ref that starts with "-" as one: `--output=FILE`).
   */
  "ref",
  /** A path in a remote store (a file in a GitHub repository): not a file of this machine. */
  "path.remote",
] as const;
export type ArgRole = (typeof ARG_ROLES)[number];

/**
 * Statement classes a `sql` argument may use: read, write, schema (additive: CREATE, ALTER TABLE
 * ADD COLUMN / RENAME) and drop (destructive: DROP, ALTER TABLE DROP COLUMN). `ddl` is the
 * former name of schema and drop together. No class grants what is dangerous (ATTACH,
 * load_extension, ...): see `sql.ts`.
 */
export const SQL_CLASSES = ["read", "write", "schema", "drop", "ddl"] as const;
export type SqlClass = (typeof SQL_CLASSES)[number];
/** Whether the server runs one statement per call (and refuses more) or every statement it is given. */
export const SQL_STATEMENTS = ["one", "many"] as const;
export type SqlStatements = (typeof SQL_STATEMENTS)[number];

const VARIABLES = ["{{cwd}}", "{{home}}", "{{tmp}}"];

export const PathPattern = z.string().check(
  z.superRefine((value, ctx) => {
    const rooted = value.startsWith("/") || VARIABLES.some((v) => value === v || value.startsWith(`${v}/`));
    if (!rooted) {
      ctx.addIssue({
        code: "custom",
        message: `expected an absolute path or one starting with ${VARIABLES.join(", ")}`,
      });
    }
    if (value.split("/").includes(".."))
      ctx.addIssue({ code: "custom", message: "a path pattern may not contain '..'" });
    for (const m of value.matchAll(/\{\{([^}]*)\}\}/g)) {
      if (!VARIABLES.includes(m[0]))
        ctx.addIssue({ code: "custom", message: `unknown variable ${m[0]}; use ${VARIABLES.join(", ")}` });
    }
  }),
);

/** `host`, `host:port` or `[v6]:port`; `*.example.com` matches subdomains. */
export const Destination = z
  .string()
  .check(
    z.regex(
      /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/,
      'expected "host", "host:port" or "[v6]:port"',
    ),
  );

/**
 * A pathname unix socket the server may connect or send to, such as `/run/docker.sock` or
 * `{{home}}/.ssh/agent.sock`: one path, no pattern. The kernel layer compares the path the server
 * gives byte for byte with it (bpf/unix.bpf.h), so it must be written as the server will name it:
 * absolute, without `.`, `..`, `//` or a trailing slash.
 */
export const SocketPath = PathPattern.check(
  z.superRefine((value, ctx) => {
    const path = value.replace(/^\{\{(cwd|home|tmp)\}\}/, "");
    if (/[*?[\]{}]/.test(path))
      ctx.addIssue({ code: "custom", message: "a unix socket is one path: no pattern characters" });
    if (
      path !== "" &&
      (path.endsWith("/") ||
        path
          .split("/")
          .slice(1)
          .some((s) => s === "" || s === "."))
    )
      ctx.addIssue({ code: "custom", message: "a unix socket path may not contain '.', '//' or end in '/'" });
  }),
);

/** A program name (`date`), an absolute path, or a program with a fixed first argument (`git log`). */
export const Executable = z
  .string()
  .check(z.regex(/^[^\s]+( [^\s]+)*$/, 'expected a program name such as "ls" or "git log"'));

export const EnvName = z
  .string()
  .check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name"));

export const Capabilities = z.strictObject({
  read: z._default(z.array(PathPattern), []),
  write: z._default(z.array(PathPattern), []),
  network: z._default(z.array(Destination), []),
  /** Pathname unix sockets (kernel layer only: L3 refuses every other one). */
  sockets: z._default(z.array(SocketPath), []),
  exec: z._default(z.array(Executable), []),
  env: z._default(z.array(EnvName), []),
});
export type Capabilities = z.infer<typeof Capabilities>;

export const ToolPolicy = z
  .extend(Capabilities, {
    description: z.optional(z.string()),
    /** The role of every argument the tool accepts; an argument not listed is refused. */
    args: z._default(z.record(z.string(), z.enum(ARG_ROLES)), {}),
    /** Statement classes a `sql` argument may use (default: read only). */
    sql: z._default(z.array(z.enum(SQL_CLASSES)), ["read"]),
    /**
     * How many statements of a `sql` argument the server runs: "one" (it refuses a second, as
     * Python's `execute` does) or "many" (the default: assume it runs all of them).
     */
    sqlStatements: z._default(z.enum(SQL_STATEMENTS), "many"),
    /**
     * Path arguments whose relative values the server resolves against another argument's value, not
     * its working directory: `{"files": "repo_path"}` (mcp-server-git's git_add takes files relative
     * to the repository). Both must be path arguments; the base must be given, and allowed, in the call.
     */
    base: z._default(z.record(z.string(), z.string()), {}),
  })
  .check(
    z.superRefine((tool, ctx) => {
      for (const [arg, base] of Object.entries(tool.base)) {
        for (const name of [arg, base]) {
          const role = Object.hasOwn(tool.args, name) ? tool.args[name] : undefined;
          if (role !== "path.read" && role !== "path.write")
            ctx.addIssue({
              code: "custom",
              path: ["base", arg],
              message: `"${name}" must be a path argument (path.read or path.write) of the tool`,
            });
        }
      }
    }),
  );
export type ToolPolicy = z.infer<typeof ToolPolicy>;

/**
 * Resource limits of the server's cgroup (every config that gives it one): tasks (processes and
 * threads) and memory in bytes; and, in every config, the size any one file it writes may reach
 * (RLIMIT_FSIZE). `mcpguard run --pids-max/--memory-max/--file-size-max` win over these.
 */
export const Limits = z.strictObject({
  pids: z.optional(z.int().check(z.minimum(1), z.maximum(4_194_304))),
  memoryBytes: z.optional(
    z.int().check(z.minimum(1024 * 1024, "at least 1 MiB"), z.maximum(Number.MAX_SAFE_INTEGER)),
  ),
  fileBytes: z.optional(
    z.int().check(z.minimum(1024 * 1024, "at least 1 MiB"), z.maximum(Number.MAX_SAFE_INTEGER)),
  ),
});
export type Limits = z.infer<typeof Limits>;

/**
 * What L2 does with a pinned tool whose definition changed since it was pinned (a rug pull, or an
 * update nobody reviewed): withhold it from the listing ("block", the default), or list it with a
 * notice first ("flag"). See the proxy's pins.ts.
 */
export const Pins = z.strictObject({ onChange: z.optional(z.enum(["block", "flag"])) });
export type Pins = z.infer<typeof Pins>;

export const Policy = z.strictObject({
  version: z.literal(1),
  server: z.string().check(z.minLength(1)),
  description: z.optional(z.string()),
  /** Set by `mcpguard policy derive`: a draft that a person has not reviewed. */
  draft: z.optional(z.boolean()),
  /**
   * Let a grant cover `/`, `/home`, `/root` or the server's HOME entirely. Refused at start
   * otherwise: `{{cwd}}/**` from a client that starts servers in `/` is `/**`.
   */
  allowBroadGrants: z.optional(z.boolean()),
  /**
   * The folder the server resolves a relative path argument against: its working directory
   * (`{{cwd}}`, the default) or a folder it is given (server-filesystem since 2026.7.4 resolves
   * against its first allowed folder). L1 and L2 judge relative paths where the server opens them.
   */
  relativeTo: z.optional(
    z.string().check(
      z.refine((v) => v.startsWith("/") || /^\{\{(cwd|home|tmp)\}\}(\/|$)/.test(v), {
        message: "expected an absolute folder or one starting with {{cwd}}, {{home}} or {{tmp}}",
      }),
    ),
  ),
  /**
   * "refuse": the folder the server resolves relative paths against is not known (policy derive could
   * not find it out), so L1 refuses a relative path argument rather than judge another file than
   * the one the server would open. Default "resolve": against `relativeTo`.
   */
  relativePaths: z.optional(z.enum(["resolve", "refuse"])),
  /** Environment variables the server keeps at spawn, beyond the world's (HOME, PATH, ...). */
  environment: z._default(z.strictObject({ keep: z._default(z.array(EnvName), []) }), { keep: [] }),
  limits: z.optional(Limits),
  pins: z.optional(Pins),
  tools: z.record(z.string(), ToolPolicy),
});
export type Policy = z.infer<typeof Policy>;

export const Override = z.strictObject({
  /** The tool it applies to; absent, it applies to every tool of the server. */
  tool: z.optional(z.string().check(z.minLength(1))),
  allow: z._default(z.partial(Capabilities), {}),
  /** L2 rules to turn off for the scope, by id (as the audit log names them). */
  disableRules: z._default(
    z.array(
      z.string().check(z.regex(/^l2\.[a-z0-9.-]+$/, 'expected an L2 rule id such as "l2.sensitive-key"')),
    ),
    [],
  ),
  /** Let this override's grants cover `/`, `/home`, `/root` or HOME entirely (see the policy's). */
  allowBroadGrants: z.optional(z.boolean()),
  /** The server's pinned tools (an override without a tool): "flag" lists a changed one with a notice. */
  pins: z.optional(Pins),
  /** Why the operator loosened the policy: kept for the next reader. */
  reason: z.string().check(z.minLength(1)),
  added: z.optional(z.string()),
});
export type Override = z.infer<typeof Override>;

export const OverrideFile = z.strictObject({
  version: z.literal(1),
  server: z.string().check(z.minLength(1)),
  overrides: z.array(Override),
});
export type OverrideFile = z.infer<typeof OverrideFile>;
