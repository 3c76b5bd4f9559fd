/**
 * The oracles of the protocol suite (CASES.md §9), judged from what the client received, never
 * from what a layer says it did:
 *
 * - `marker_in`: the trial's marker is in what reached the client on a surface, outside what
 *   mcpguard flagged. Flagged, concretely: a listing item whose `description` starts with
 *   `[mcpguard: ` (the notice says why); a text mcpguard replaced by a notice holds no marker; a
 *   withheld item is absent from its listing; a refused request never arrives.
 * - `definition_changed`: a tool's definition (title, description, input and output schemas,
 *   annotations) differs between two listings the client received, or from `was`, and the
 *   differing one was listed unflagged.
 * - `intact` (benign): the last listing of a kind holds every named item, and none of its items
 *   is flagged or withheld.
 * - `response_matches` with `in`: the regex matches the surface's text.
 */
import { responseText } from "./judge.js";
import type { ListingName, Oracle, Surface } from "./scenario.js";
import type { ProtocolEvidence } from "./steps.js";

export const FLAG_PREFIX = "[mcpguard: ";
const WITHHELD_META = "mcpguard/withheld";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const LISTING_KEYS: Record<ListingName, string> = {
  tools: "tools",
  prompts: "prompts",
  resources: "resources",
  resource_templates: "resourceTemplates",
};

function items(result: unknown, kind: ListingName): Record<string, unknown>[] {
  const list = isRecord(result) ? result[LISTING_KEYS[kind]] : undefined;
  return Array.isArray(list) ? list.filter(isRecord) : [];
}

export function flagged(item: Record<string, unknown>): boolean {
  return typeof item.description === "string" && item.description.startsWith(FLAG_PREFIX);
}

function itemKey(kind: ListingName, item: Record<string, unknown>): string {
  const key = kind === "resources" ? "uri" : kind === "resource_templates" ? "uriTemplate" : "name";
  return typeof item[key] === "string" ? (item[key] as string) : "";
}

/** The text of a surface: everything on it, or (`unflagged`) only what mcpguard did not flag. */
export function surfaceText(
  evidence: ProtocolEvidence,
  surface: Surface | "any",
  unflagged: boolean,
): string {
  const parts: string[] = [];
  const want = (s: Surface) => surface === "any" || surface === s;
  if (want("listing")) {
    if (evidence.instructions && !(unflagged && evidence.instructions.startsWith(FLAG_PREFIX)))
      parts.push(evidence.instructions);
    for (const { kind, result } of evidence.listings) {
      for (const item of items(result, kind))
        if (!(unflagged && flagged(item))) parts.push(JSON.stringify(item));
    }
  }
  if (want("resource")) for (const r of evidence.resources) parts.push(JSON.stringify(r));
  if (want("prompt")) for (const p of evidence.prompts) parts.push(JSON.stringify(p));
  if (want("request")) for (const r of evidence.requests) parts.push(JSON.stringify(r.params));
  if (want("response")) for (const c of evidence.calls) parts.push(responseText(c));
  return parts.join("\n");
}

/** What a tool's definition is, for comparing two listings. */
function definition(tool: Record<string, unknown>): string {
  const { title, description, inputSchema, outputSchema, annotations } = tool;
  return JSON.stringify({ title, description, inputSchema, outputSchema, annotations }, (_k, v) =>
    isRecord(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

function definitionChanged(evidence: ProtocolEvidence, name: string, was?: { description: string }): boolean {
  const seen = evidence.listings
    .filter((l) => l.kind === "tools")
    .flatMap((l) => items(l.result, "tools").filter((t) => t.name === name));
  if (was) return seen.some((t) => !flagged(t) && t.description !== was.description);
  const first = seen[0];
  if (!first) return false;
  const reference = definition(first);
  return seen.slice(1).some((t) => !flagged(t) && definition(t) !== reference);
}

function intact(evidence: ProtocolEvidence, kind: ListingName, names: readonly string[]): boolean {
  const last = evidence.listings.filter((l) => l.kind === kind).at(-1);
  if (!last) return false;
  const listed = items(last.result, kind);
  const meta = isRecord(last.result) ? last.result._meta : undefined;
  if (isRecord(meta) && Object.hasOwn(meta, WITHHELD_META)) return false;
  if (listed.some(flagged) || JSON.stringify(listed).includes(FLAG_PREFIX)) return false;
  const keys = new Set(listed.map((item) => itemKey(kind, item)));
  return names.every((n) => keys.has(n));
}

/** Whether a protocol primitive fired; undefined when the node is not one of them. */
export function protocolPrimitive(
  node: Oracle,
  evidence: ProtocolEvidence | undefined,
  marker: string,
): boolean | undefined {
  if ("marker_in" in node) {
    return (
      evidence !== undefined &&
      marker.length > 0 &&
      surfaceText(evidence, node.marker_in, true).includes(marker)
    );
  }
  if ("definition_changed" in node)
    return evidence !== undefined && definitionChanged(evidence, node.definition_changed, node.was);
  if ("intact" in node) return evidence !== undefined && intact(evidence, node.intact, node.names);
  if ("response_matches" in node && node.in && node.in !== "response") {
    return (
      evidence !== undefined && new RegExp(node.response_matches).test(surfaceText(evidence, node.in, false))
    );
  }
  return undefined;
}
