/**
 * The scenario contract (DESIGN.md "Scenario contract", CASES.md §2 and §4): one JSON file per
 * case. Loading validates every file and reports each problem with its file, field and what was
 * expected, so adding an attack case is one JSON file and no code.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { z } from "zod";
import { CANARY_NAMES } from "./world/canaries.js";

/** The seven categories of the published benchmark: the 82 cases its Table 1 is computed over. */
export const CORE_CATEGORIES = [
  "file_read",
  "exfiltration",
  "env_leak",
  "sandbox_escape",
  "priv_escalation",
  "cross_language",
  "benign",
] as const;
/**
 * Suites beside the core, reported on their own and never mixed into the paper comparison:
 * `benign_corpus` (docs/benchmark/CORPUS.md), `real` (REAL.md) and `protocol` (CASES.md §9).
 */
export const EXTRA_CATEGORIES = ["benign_corpus", "real", "protocol"] as const;
export const CATEGORIES = [...CORE_CATEGORIES, ...EXTRA_CATEGORIES] as const;
export type Category = (typeof CATEGORIES)[number];

export function isCoreCategory(category: string): boolean {
  return (CORE_CATEGORIES as readonly string[]).includes(category);
}

/** A construct-class tag: `class.name[.more]`, lower case (e.g. `shell.pipeline`, `sql.cte`). */
const Tag = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_+-]+)+$/, 'expected a tag such as "shell.pipeline"');

const ROOT_PLACEHOLDERS = ["{{workspace}}", "{{home}}", "{{tmp}}", "{{trial}}"];
const KNOWN_PLACEHOLDER = new RegExp(
  `^(trial|workspace|home|tmp|marker|sink\\.host|sink\\.port|sink\\.url|secret\\.(${CANARY_NAMES.join("|")}))$`,
);

/** Every `{{name}}` in a string must be one the runner expands. */
function placeholdersKnown(value: string): true | string {
  for (const match of value.matchAll(/\{\{([^{}]*)\}\}/g)) {
    if (!KNOWN_PLACEHOLDER.test(match[1] ?? "")) return `unknown placeholder {{${match[1]}}}`;
  }
  return true;
}

const Text = z.string().superRefine((value, ctx) => {
  const known = placeholdersKnown(value);
  if (known !== true) ctx.addIssue({ code: "custom", message: known });
});

/** A path inside the trial: starts at one of the world's roots and never climbs out of it. */
const TrialPath = Text.superRefine((value, ctx) => {
  const root = ROOT_PLACEHOLDERS.find((r) => value === r || value.startsWith(`${r}/`));
  if (!root) {
    ctx.addIssue({
      code: "custom",
      message: `expected a path starting with one of ${ROOT_PLACEHOLDERS.join(", ")}`,
    });
  } else if (value.slice(root.length).split("/").includes("..")) {
    ctx.addIssue({ code: "custom", message: "a trial path may not contain '..'" });
  }
});

const Mode = z.string().regex(/^0?[0-7]{3,4}$/, 'expected an octal mode such as "0644"');

export const SetupStep = z.union([
  z.strictObject({ write: TrialPath, content: z.string() }),
  z.strictObject({ mkdir: TrialPath }),
  z.strictObject({ symlink: TrialPath, target: Text }),
  z.strictObject({ chmod: TrialPath, mode: Mode }),
]);
export type SetupStep = z.infer<typeof SetupStep>;

export type Oracle =
  | { any: Oracle[] }
  | { all: Oracle[] }
  | { secret_in: "response" | "sink" | "files"; secret: (typeof CANARY_NAMES)[number] }
  | { sink_contacted: true }
  | { file_written: string; contains?: string }
  | { file_contains: string; contains: string }
  | { file_lacks: string; contains: string }
  | { dir_created: string }
  | { file_mode: string; mode: string }
  | { table_dropped: string; db: string }
  | { response_matches: string; in?: Surface }
  | { marker_in: Surface | "any" }
  | { definition_changed: string; was?: { description: string } }
  | { intact: ListingName; names: string[] };

/** What the client received over the protocol, by surface (protocolJudge.ts). */
export const SURFACES = ["response", "listing", "resource", "prompt", "request"] as const;
export type Surface = (typeof SURFACES)[number];
export const LISTING_NAMES = ["tools", "prompts", "resources", "resource_templates"] as const;
export type ListingName = (typeof LISTING_NAMES)[number];

const Regex = z.string().superRefine((value, ctx) => {
  try {
    new RegExp(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `invalid regular expression: ${(error as Error).message}` });
  }
});

const PRIMITIVES: Record<string, z.ZodType> = {
  secret_in: z.strictObject({
    secret_in: z.enum(["response", "sink", "files"]),
    secret: z.enum(CANARY_NAMES),
  }),
  sink_contacted: z.strictObject({ sink_contacted: z.literal(true) }),
  file_written: z.strictObject({ file_written: TrialPath, contains: Text.optional() }),
  file_contains: z.strictObject({ file_contains: TrialPath, contains: Text }),
  /** The file held the text before the call and still exists without it after (a deletion inside a file). */
  file_lacks: z.strictObject({ file_lacks: TrialPath, contains: Text }),
  /** A directory that did not exist before the call does after. */
  dir_created: z.strictObject({ dir_created: TrialPath }),
  file_mode: z.strictObject({ file_mode: TrialPath, mode: Mode }),
  table_dropped: z.strictObject({ table_dropped: z.string().min(1), db: TrialPath }),
  response_matches: z.strictObject({ response_matches: Regex, in: z.enum(SURFACES).optional() }),
  /** The trial's marker reached the client, outside anything mcpguard flagged (protocol cases). */
  marker_in: z.strictObject({ marker_in: z.enum([...SURFACES, "any"]) }),
  /** A tool's definition differs from its first listing (or from `was`), and was listed unflagged. */
  definition_changed: z.strictObject({
    definition_changed: z.string().min(1),
    was: z.strictObject({ description: z.string() }).optional(),
  }),
  /** Benign: the last listing of a kind holds the named items, and nothing in it is flagged or withheld. */
  intact: z.strictObject({ intact: z.enum(LISTING_NAMES), names: z.array(z.string().min(1)).min(1) }),
};
const COMBINATORS = ["any", "all"];

/** An oracle node: a combinator over nodes, or exactly one primitive, chosen by its key. */
export const OracleSchema: z.ZodType<Oracle> = z.lazy(() =>
  z.unknown().superRefine((value, ctx) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: "custom", message: "expected an oracle object" });
      return;
    }
    const keys = Object.keys(value);
    const combinator = COMBINATORS.find((k) => keys.includes(k));
    if (combinator) {
      const parsed = z.strictObject({ [combinator]: z.array(OracleSchema).min(1) }).safeParse(value);
      for (const issue of parsed.error?.issues ?? [])
        ctx.addIssue({ ...issue, code: "custom", path: issue.path });
      return;
    }
    const primitive = keys.find((k) => k in PRIMITIVES);
    if (!primitive) {
      ctx.addIssue({
        code: "custom",
        message: `expected one of ${[...COMBINATORS, ...Object.keys(PRIMITIVES)].join(", ")}; got keys ${keys.join(", ") || "(none)"}`,
      });
      return;
    }
    const parsed = (PRIMITIVES[primitive] as z.ZodType).safeParse(value);
    for (const issue of parsed.error?.issues ?? [])
      ctx.addIssue({ ...issue, code: "custom", path: issue.path });
  }),
) as z.ZodType<Oracle>;

/**
 * One protocol step of a case (DESIGN.md "Scenario contract"): list, call a tool, read a resource,
 * get a prompt, or wait for the server's `notifications/tools/list_changed`. The session's
 * `initialize` comes first, always; the client answers the server's requests as CASES.md §9 says.
 */
export const Step = z.union([
  z.strictObject({ list: z.enum(LISTING_NAMES) }),
  z.strictObject({ call: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ read: Text }),
  z.strictObject({ prompt: z.string().min(1), arguments: z.record(z.string(), Text).optional() }),
  z.strictObject({ wait: z.literal("tools/list_changed") }),
]);
export type Step = z.infer<typeof Step>;

export const Scenario = z
  .strictObject({
    id: z.string().regex(/^[A-Z][A-Z0-9]*-[A-Za-z0-9-]+$/, 'expected an id such as "FR-05"'),
    category: z.enum(CATEGORIES),
    kind: z.enum(["attack", "benign"]),
    visibility: z.enum(["argument", "hidden"]).optional(),
    title: z.string().min(1),
    server: z.string().min(1),
    /** The server's behaviour, for servers that have several (`--variant <name>`, SERVERS.md §6). */
    variant: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .optional(),
    /** The one tool call of a case; a case with `steps` has none. */
    tool: z.string().min(1).optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    /** Protocol steps, instead of one tool call (the `protocol` suite). */
    steps: z.array(Step).min(1).optional(),
    setup: z.array(SetupStep).optional(),
    oracle: OracleSchema.optional(),
    expect: OracleSchema.optional(),
    note: z.string().optional(),
    tags: z.array(Tag).min(1).optional(),
    /**
     * The working directory of the proxy and the server: the workspace, `/`, or both as two
     * variants reported apart. Default: both for the real suite, the workspace elsewhere.
     */
    cwd: z.enum(["workspace", "/", "both"]).optional(),
    /**
     * The case calls a tool, or passes arguments, that the server's `tools/list` does not list, on
     * purpose (a call the server must refuse, a tool that appears only after a rug pull): `bench
     * validate` does not check its calls against the listing. Never needed for a case meant to work.
     */
    unlisted: z.literal(true).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.steps && (s.tool !== undefined || s.arguments !== undefined))
      ctx.addIssue({ code: "custom", path: ["steps"], message: "a case has steps or a tool call, not both" });
    if (!s.steps && (s.tool === undefined || s.arguments === undefined))
      ctx.addIssue({
        code: "custom",
        path: ["tool"],
        message: "a case needs a tool and its arguments, or steps",
      });
    if (s.kind === "attack") {
      if (!s.oracle) ctx.addIssue({ code: "custom", path: ["oracle"], message: "an attack needs an oracle" });
      if (s.expect)
        ctx.addIssue({ code: "custom", path: ["expect"], message: "an attack has an oracle, not expect" });
      if (!s.visibility)
        ctx.addIssue({
          code: "custom",
          path: ["visibility"],
          message: 'an attack needs visibility "argument" or "hidden"',
        });
    } else {
      if (!s.expect)
        ctx.addIssue({ code: "custom", path: ["expect"], message: "a benign case needs expect" });
      if (s.oracle)
        ctx.addIssue({
          code: "custom",
          path: ["oracle"],
          message: "a benign case has expect, not an oracle",
        });
      if (s.visibility)
        ctx.addIssue({ code: "custom", path: ["visibility"], message: "a benign case has no visibility" });
    }
    const walk = (value: unknown, path: (string | number)[]) => {
      if (typeof value === "string") {
        const known = placeholdersKnown(value);
        if (known !== true) ctx.addIssue({ code: "custom", path, message: known });
      } else if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) walk(v, [...path, i]);
      } else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
      }
    };
    walk(s.arguments, ["arguments"]);
    walk(s.steps, ["steps"]);
  })
  // A case with steps is known by its subject (its first call, or its first step's method).
  .transform((s) => ({ ...s, tool: s.tool ?? subjectOf(s), arguments: s.arguments ?? {} }));
export type Scenario = z.infer<typeof Scenario>;

/** What a trial record calls the case's subject: its tool, or its steps' first call or method. */
export function subjectOf(scenario: { tool?: string; steps?: Step[] }): string {
  if (scenario.tool) return scenario.tool;
  const steps = scenario.steps ?? [];
  const call = steps.find((step) => "call" in step);
  if (call && "call" in call) return call.call;
  const first = steps[0];
  if (!first) return "";
  if ("list" in first) return `${first.list}/list`;
  if ("read" in first) return "resources/read";
  if ("prompt" in first) return "prompts/get";
  return "tools/list_changed";
}

/** Where a trial's proxy and server start: the world's workspace, or the root directory. */
export type TrialCwd = "workspace" | "/";

/** The working directories a scenario runs from, one variant each. */
export function cwdVariants(scenario: Pick<Scenario, "cwd" | "category">): TrialCwd[] {
  const cwd = scenario.cwd ?? (scenario.category === "real" ? "both" : "workspace");
  return cwd === "both" ? ["workspace", "/"] : [cwd];
}

/**
 * The id a trial record carries: the case id, suffixed `@ws` or `@root` when the case runs from
 * several working directories, so that each variant is judged and reported on its own.
 */
export function variantId(scenario: Pick<Scenario, "id" | "cwd" | "category">, cwd: TrialCwd): string {
  if (cwdVariants(scenario).length < 2) return scenario.id;
  return `${scenario.id}@${cwd === "/" ? "root" : "ws"}`;
}

export interface ScenarioIssue {
  file: string;
  /** Dotted path of the field, or "" for the file as a whole. */
  field: string;
  message: string;
}

/** A scenario as loaded from its file: where it is, and the sha256 of the file's bytes (its identity in a run). */
export type LoadedScenario = Scenario & { file: string; sha256: string };

export interface LoadedScenarios {
  scenarios: LoadedScenario[];
  issues: ScenarioIssue[];
  /** How many scenario files were read, valid or not. */
  files: number;
}

/** The sha256 of a case's file as a run records it (`caseSha256`), when the scenario came from a file. */
export function caseSha256(scenario: Scenario): string | undefined {
  return (scenario as Partial<LoadedScenario>).sha256;
}

function listJson(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((entry) => {
      const full = join(path, entry.name);
      if (entry.isDirectory()) return listJson(full);
      return entry.name.endsWith(".json") ? [full] : [];
    })
    .sort();
}

/**
 * Load and validate every `*.json` under the given files or directories. `knownServers` adds a check
 * that the server exists in the registry. Duplicate ids and a category that disagrees with a
 * category folder are reported too.
 */
export function loadScenarios(
  paths: string[],
  knownServers?: ReadonlySet<string>,
  variantsOf?: (server: string) => readonly string[] | undefined,
): LoadedScenarios {
  const scenarios: LoadedScenario[] = [];
  const issues: ScenarioIssue[] = [];
  const seen = new Map<string, string>();
  const files = paths.flatMap((p) => listJson(resolve(p)));
  for (const file of files) {
    const rel = relative(process.cwd(), file);
    const shown = rel && !rel.startsWith("..") ? rel : file;
    let raw: unknown;
    let sha256: string;
    try {
      const bytes = readFileSync(file);
      sha256 = createHash("sha256").update(bytes).digest("hex");
      raw = JSON.parse(bytes.toString("utf8"));
    } catch (error) {
      issues.push({ file: shown, field: "", message: `not valid JSON: ${(error as Error).message}` });
      continue;
    }
    const parsed = Scenario.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        issues.push({ file: shown, field: issue.path.join("."), message: issue.message });
      }
      continue;
    }
    const scenario = parsed.data;
    const folder = basename(dirname(file));
    if ((CATEGORIES as readonly string[]).includes(folder) && folder !== scenario.category) {
      issues.push({
        file: shown,
        field: "category",
        message: `"${scenario.category}" does not match its folder "${folder}"`,
      });
    }
    if (basename(file, ".json") !== scenario.id) {
      issues.push({ file: shown, field: "id", message: `"${scenario.id}" does not match the file name` });
    }
    if (
      scenario.variant !== undefined &&
      variantsOf &&
      !variantsOf(scenario.server)?.includes(scenario.variant)
    ) {
      issues.push({
        file: shown,
        field: "variant",
        message: `server "${scenario.server}" has no variant "${scenario.variant}"; it has ${variantsOf(scenario.server)?.join(", ") || "none"}`,
      });
    }
    if (knownServers && !knownServers.has(scenario.server)) {
      issues.push({
        file: shown,
        field: "server",
        message: `unknown server "${scenario.server}"; known: ${[...knownServers].join(", ")}`,
      });
    }
    const previous = seen.get(scenario.id);
    if (previous)
      issues.push({
        file: shown,
        field: "id",
        message: `duplicate id "${scenario.id}" (also in ${previous})`,
      });
    seen.set(scenario.id, shown);
    scenarios.push({ ...scenario, file: shown, sha256 });
  }
  return { scenarios, issues, files: files.length };
}
