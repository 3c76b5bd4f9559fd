/**
 * `bench validate` against the servers themselves: each case's server is started in a scratch world
 * (the trial world and session of a run, without a proxy), its `tools/list` read, and every call of
 * the case checked against it: the tool is listed, each argument is a property of its inputSchema,
 * each required property is given. A case that calls a missing tool or passes a stray argument on
 * purpose says so with `"unlisted": true`.
 */
import { z } from "zod";
import type { Interpreters } from "./interpreters.js";
import { resolveInterpreters } from "./interpreters.js";
import { prepareNpmCache } from "./real.js";
import { loadAllServers, type ServerEntry } from "./registry.js";
import type { LoadedScenario, ScenarioIssue } from "./scenario.js";
import { openSession } from "./session.js";
import { WorldFactory } from "./world/world.js";

/** What a server lists of one tool: its name and the argument names of its inputSchema. */
export interface ListedTool {
  name: string;
  properties: string[];
  required: string[];
  /** The schema admits properties it does not name (`additionalProperties` true or a schema, or no `properties`). */
  open: boolean;
}

/** A server's tools, or why they could not be listed. */
export type Listing = { tools: ListedTool[] } | { error: string };

const LIST_TIMEOUT_MS = 15_000;

/**
 * What validate reads of a `tools/list` result: names and input schemas as the server sent them
 * (the SDK's own schema refuses listings some released servers send, e.g. an inputSchema without
 * `"type": "object"`, which a client may still call).
 */
const ToolsPage = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string().min(1), inputSchema: z.unknown().optional() })),
  nextCursor: z.string().optional(),
});

const listingKey = (server: string, variant: string | undefined) =>
  variant ? `${server} --variant ${variant}` : server;

/** The tools of an inputSchema as the checks read them. */
export function listedTool(tool: { name: string; inputSchema?: unknown }): ListedTool {
  const schema = (tool.inputSchema ?? {}) as {
    properties?: Record<string, unknown>;
    required?: unknown;
    additionalProperties?: unknown;
  };
  const properties =
    schema.properties && typeof schema.properties === "object" ? Object.keys(schema.properties) : [];
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  // A schema that admits more than it names (`additionalProperties` true or a schema) takes any
  // argument; so does one without `properties` (a released filesystem server lists `{"$schema": ...}` alone).
  const open =
    schema.properties === undefined ||
    (schema.additionalProperties !== undefined && schema.additionalProperties !== false);
  return { name: tool.name, properties, required, open };
}

/**
 * Start each (server, variant) once in a fresh world, list its tools (every page) and stop it.
 * At most `jobs` at a time; a server that does not start is an error in its listing, not a throw.
 */
export async function listServers(
  targets: { server: string; variant?: string }[],
  options: { jobs: number; servers?: ReadonlyMap<string, ServerEntry>; interpreters?: Interpreters },
): Promise<Map<string, Listing>> {
  const servers = options.servers ?? loadAllServers();
  const interpreters = options.interpreters ?? (await resolveInterpreters());
  const unique = [...new Map(targets.map((t) => [listingKey(t.server, t.variant), t])).entries()];
  const used = new Set(unique.map(([, t]) => t.server));
  prepareNpmCache(
    [...servers.values()].filter((s) => used.has(s.id)),
    interpreters,
  );
  const listings = new Map<string, Listing>();
  const factory = await WorldFactory.create();
  let next = 0;
  const worker = async () => {
    for (let item = unique[next++]; item; item = unique[next++]) {
      const [key, target] = item;
      const server = servers.get(target.server);
      if (!server) {
        listings.set(key, { error: `unknown server "${target.server}"` });
        continue;
      }
      const world = await factory.create();
      let session: Awaited<ReturnType<typeof openSession>> | undefined;
      try {
        session = await openSession({
          world,
          server,
          interpreters,
          config: "direct",
          ...(target.variant ? { variant: target.variant } : {}),
        });
        const tools: ListedTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await session.client.request(
            { method: "tools/list", params: cursor ? { cursor } : {} },
            ToolsPage,
            { timeout: LIST_TIMEOUT_MS },
          );
          tools.push(...page.tools.map(listedTool));
          cursor = page.nextCursor;
        } while (cursor);
        listings.set(key, { tools });
      } catch (error) {
        listings.set(key, { error: ((error as Error).message.split("\n")[0] ?? "").slice(0, 300) });
      } finally {
        await session?.close();
        await world.destroy();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, unique.length)) }, worker));
  } finally {
    factory.dispose();
  }
  return listings;
}

/** Edit distance, for naming the real tool or argument nearest a misspelt one. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] as number;
}

/** The name of `names` nearest `name` (fewest edits, then the first), or undefined when there is none. */
export function nearest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let distance = Number.POSITIVE_INFINITY;
  for (const candidate of names) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < distance) {
      best = candidate;
      distance = d;
    }
  }
  return best;
}

/** The tool calls of a case, with the field each one is in (`tool`, `steps.2.call`). */
function callsOf(
  scenario: LoadedScenario,
): { field: string; tool: string; arguments: Record<string, unknown> }[] {
  if (!scenario.steps) return [{ field: "tool", tool: scenario.tool, arguments: scenario.arguments }];
  return scenario.steps.flatMap((step, i) =>
    "call" in step ? [{ field: `steps.${i}.call`, tool: step.call, arguments: step.arguments ?? {} }] : [],
  );
}

const quoted = (names: readonly string[], most = 8) =>
  `${names.slice(0, most).join(", ")}${names.length > most ? `, … ${names.length - most} more` : ""}`;

/** Each call of each case against its server's listing: one issue per missing tool, stray or missing argument. */
export function checkCalls(
  scenarios: LoadedScenario[],
  listings: ReadonlyMap<string, Listing>,
): ScenarioIssue[] {
  const issues: ScenarioIssue[] = [];
  for (const scenario of scenarios) {
    if (scenario.unlisted) continue;
    const calls = callsOf(scenario);
    if (calls.length === 0) continue;
    const key = listingKey(scenario.server, scenario.variant);
    const listing = listings.get(key);
    const file = scenario.file;
    const where = `${scenario.id}: `;
    if (!listing) continue;
    if ("error" in listing) {
      issues.push({
        file,
        field: "server",
        message: `${where}cannot list the tools of ${key}: ${listing.error}`,
      });
      continue;
    }
    const names = listing.tools.map((t) => t.name);
    for (const call of calls) {
      const tool = listing.tools.find((t) => t.name === call.tool);
      if (!tool) {
        const near = nearest(call.tool, names);
        issues.push({
          file,
          field: call.field,
          message: `${where}server "${key}" has no tool "${call.tool}"${near ? `; nearest: "${near}"` : ""} (it lists ${quoted(names) || "no tool"})`,
        });
        continue;
      }
      const argsField = call.field === "tool" ? "arguments" : call.field.replace(/\.call$/, ".arguments");
      for (const arg of Object.keys(call.arguments)) {
        if (tool.open || tool.properties.includes(arg)) continue;
        const near = nearest(arg, tool.properties);
        issues.push({
          file,
          field: `${argsField}.${arg}`,
          message: `${where}tool "${tool.name}" of ${key} has no argument "${arg}"${near ? `; nearest: "${near}"` : ""} (it takes ${quoted(tool.properties) || "no argument"})`,
        });
      }
      for (const required of tool.required)
        if (!Object.hasOwn(call.arguments, required))
          issues.push({
            file,
            field: argsField,
            message: `${where}tool "${tool.name}" of ${key} requires argument "${required}", which the case does not give`,
          });
    }
  }
  return issues;
}

/** The (server, variant) pairs whose listings the cases need. */
export function listingTargets(scenarios: LoadedScenario[]): { server: string; variant?: string }[] {
  return scenarios
    .filter((s) => !s.unlisted && callsOf(s).length > 0)
    .map((s) => ({ server: s.server, ...(s.variant ? { variant: s.variant } : {}) }));
}
