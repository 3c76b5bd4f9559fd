/**
 * The differential check of the schemas against what zod's classic API (`import { z } from "zod"`)
 * gave for them before they moved to zod/mini: each package's test/fixtures/classic-zod.jsonl was
 * recorded from the classic schemas then, and is never re-recorded from the schemas it checks. Each
 * package's schemaCorpus.test.ts reads its corpus here and compares.
 *
 * Each line is a seed (`{"seed", "value"}`) or a case: an input (given whole, or as a seed and the
 * edits made to it: every node deleted or replaced by null, a string, [] or {} or a value the schema
 * checks for, a key or an element added, and random combinations of two to four of those drawn with
 * fast-check), and what the schema gave: `issues`, or `data`, `digest` (the first 16 hex digits of
 * the sha256 of the output's JSON) or `same` (the output's JSON is the input's); or, for a case read
 * through the function that uses the schema, its `result`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

type Path = (string | number)[];
type Edit = ["set", Path, unknown] | ["delete", Path];

/** A case of a corpus: the schema's name, the input, and what was recorded for it. */
export interface Recorded {
  schema: string;
  input: unknown;
  ok?: boolean;
  same?: true;
  data?: unknown;
  digest?: string;
  issues?: unknown[];
  result?: unknown;
}

function applyEdits(seed: unknown, edits: Edit[]): unknown {
  let root: unknown = structuredClone(seed);
  for (const [op, path, value] of edits) {
    if (path.length === 0) {
      root = structuredClone(value);
      continue;
    }
    let parent = root as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path.at(-1) as string | number;
    if (op === "set") parent[last] = structuredClone(value);
    else if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  }
  return root;
}

/** The cases of the corpus `file`, each with its input made whole. */
export function corpus(file: URL): Recorded[] {
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  const seeds = new Map(lines.filter((l) => "value" in l).map((l) => [l.seed, l.value]));
  return lines
    .filter((l) => "schema" in l)
    .map(({ seed, edits, ...rest }) =>
      "input" in rest ? rest : { ...rest, input: applyEdits(seeds.get(seed), edits) },
    );
}

/** JSON that keeps a key whose value is undefined (`{"$undefined": true}`), unlike a missing key. */
export const encode = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (_key, v) => (v === undefined ? { $undefined: true } : v)));

/** What `schema` gives for the case's input, in the form the case was recorded in. */
function outcome(schema: { safeParse(input: unknown): unknown }, c: Recorded): unknown {
  const result = schema.safeParse(c.input) as {
    success: boolean;
    data?: unknown;
    error?: { issues: unknown[] };
  };
  if (!result.success) return { ok: false, issues: encode(result.error?.issues) };
  const json = JSON.stringify(encode(result.data));
  if (json === JSON.stringify(c.input)) return { ok: true, same: true };
  if (c.digest) return { ok: true, digest: createHash("sha256").update(json).digest("hex").slice(0, 16) };
  return { ok: true, data: encode(result.data) };
}

/**
 * The cases of `name` (at least `least` of them) whose outcome under `schema` differs from the one
 * recorded: at most three, with what was recorded and what it gives now.
 */
export function differingFromClassic(
  cases: Recorded[],
  name: string,
  schema: { safeParse(input: unknown): unknown },
  least: number,
): { input: unknown; recorded: unknown; now: unknown }[] {
  const mine = cases.filter((c) => c.schema === name);
  if (mine.length < least)
    throw new Error(`the corpus holds ${mine.length} cases of ${name}, fewer than ${least}`);
  return mine
    .flatMap(({ schema: _, input, ...recorded }) => {
      const now = outcome(schema, { schema: name, input, ...recorded });
      return JSON.stringify(now) === JSON.stringify(recorded) ? [] : [{ input, recorded, now }];
    })
    .slice(0, 3);
}
