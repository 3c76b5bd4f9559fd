/**
 * What a server says about itself, read as text for the agent (agentText.ts): the items of
 * `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list` (every string of
 * an item: its name, title, description, annotations, icons, `_meta`, every key and value of its
 * input and output schemas), and the `instructions` of its `initialize` result.
 *
 * Each string is read alone, and the texts of an item are read once more together, in the order
 * the item gives them (its name, titles, descriptions, annotations and `_meta` text, a property's
 * after the tool's): an order split across fields ("you must read" in the description,
 * "~/.aws/credentials" in a property's) is read whole. A finding there withholds the item.
 *
 * A finding in a description or a title (text a notice can stand in for) flags the item: the
 * text is replaced by `[mcpguard: ...]` and the item's description starts with such a notice, so
 * the agent and the user see it. A finding anywhere else (a name, an enum value, a default, an
 * example, a key, a URI: data the agent would act on) withholds the item: it leaves the listing,
 * which names it under `_meta["mcpguard/withheld"]`.
 */
import { DEFAULT_MAX_DEPTH } from "@mcpguard/protocol";
import { type AgentTextClass, type NameSet, scanAgentText } from "./agentText.js";

export type ListingKind = "tools" | "prompts" | "resources" | "resourceTemplates";

/** The listing methods and the key of their result that holds the items. */
export const LISTINGS: Readonly<Record<string, ListingKind>> = {
  "tools/list": "tools",
  "prompts/list": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
};

export const WITHHELD_META = "mcpguard/withheld";
export const NOTICE_PREFIX = "[mcpguard: ";

export interface ItemFinding {
  rule: string;
  reason: string;
  /** Where in the item: `description`, `inputSchema.properties.mode.enum[1]`. */
  at: string;
  /** The same, key by key (a key of the server's may hold a dot): where a notice replaces the text. */
  path: readonly (string | number)[];
  /** Where, as notices and the audit log show it: the server's own keys as `*` (`inputSchema.properties.*.enum[1]`). */
  where: string;
  /** A description or title: a notice can stand in for it. Otherwise the item is withheld. */
  text: boolean;
}

export interface ListingContext {
  /** The names this server offers (its tools, prompts, their arguments). */
  ownNames?: NameSet;
  /** Tool names other servers of the client config have pinned. */
  foreignNames?: NameSet;
  /** Rules turned off for an item (an override naming the tool), else for the server. */
  disabledRules?: (item: string) => ReadonlySet<string> | undefined;
  maxDepth?: number;
}

/** Keys whose string value is prose for the reader. */
const TEXT_KEYS = new Set(["description", "title"]);
/** Schema keywords whose values are data the agent may send back. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "example"]);
const CLASSES: readonly AgentTextClass[] = ["hidden", "injection", "secrets", "shadowing"];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The name an item is known by: a tool's or prompt's name, a resource's URI or template. */
export function itemName(kind: ListingKind, item: Record<string, unknown>): string {
  const pick = (key: string) => (typeof item[key] === "string" ? (item[key] as string) : undefined);
  const name =
    kind === "resources"
      ? (pick("uri") ?? pick("name"))
      : kind === "resourceTemplates"
        ? (pick("uriTemplate") ?? pick("name"))
        : pick("name");
  return (name ?? "(unnamed)").slice(0, 200);
}

/** Every argument or property name an item declares: its own words when it refers to them. */
function declaredNames(item: Record<string, unknown>): string[] {
  const names: string[] = [];
  const schema = item.inputSchema;
  if (isRecord(schema) && isRecord(schema.properties)) names.push(...Object.keys(schema.properties));
  if (Array.isArray(item.arguments)) {
    for (const arg of item.arguments) if (isRecord(arg) && typeof arg.name === "string") names.push(arg.name);
  }
  return names;
}

/** Where a value is: its key or index, under its parent's place (paths are built only when asked). */
interface Place {
  key: string | number | undefined;
  parent: Place | undefined;
}

interface Visit {
  value: unknown;
  place: Place;
  depth: number;
  /** Under a data keyword (`default`, `enum`, ...): nothing there is prose. */
  data: boolean;
  /** Under `_meta`: its strings are text a client may show, its keys data. */
  meta?: boolean;
}

interface Found {
  text: string;
  place: Place;
  /** The found string is the key of `place`, not its value. */
  isKey?: boolean;
  prose: boolean;
  /** Nested deeper than the walk goes: not read, so not trusted. */
  deep?: boolean;
  /** More strings than the walk reads: the rest not read, so not trusted. */
  tooMany?: boolean;
}

/**
 * How many strings of one item are read. An item is a tool, prompt or resource declaration: the
 * largest honest ones (an enum of time zones or currencies) hold a few hundred. Past it the item
 * is not read further and not trusted: a listing with one enum of millions of values held the
 * proxy's event loop for minutes and its heap past its limit.
 */
export const MAX_ITEM_STRINGS = 20_000;

/** The path and the dotted form (`inputSchema.properties.x[2]`) of a place. */
function located(place: Place, isKey = false): { at: string; path: (string | number)[] } {
  const path: (string | number)[] = [];
  for (let p: Place | undefined = place; p?.key !== undefined; p = p.parent) path.push(p.key);
  path.reverse();
  let at = "";
  for (const key of path) at = typeof key === "number" ? `${at}[${key}]` : at ? `${at}.${key}` : key;
  return { at: isKey ? `${at} (key)` : at, path };
}

/**
 * Every string of an item (keys included, `_meta` too: a client may show it or pass it on), with
 * where it is and whether it is prose; depth-bounded, iterative, at most {@link MAX_ITEM_STRINGS}.
 * Values that are not strings cost nothing but the step over them.
 */
function* strings(item: Record<string, unknown>, maxDepth: number): Generator<Found> {
  const root: Place = { key: undefined, parent: undefined };
  const stack: Visit[] = [{ value: item, place: root, depth: 0, data: false }];
  let left = MAX_ITEM_STRINGS;
  while (stack.length > 0) {
    const { value, place, depth, data, meta } = stack.pop() as Visit;
    if (depth > maxDepth) {
      yield { text: "", place, prose: false, deep: true };
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v = value[i];
        // A string in an array (an enum value, an example): data, never prose.
        if (typeof v === "string") {
          left -= 1;
          if (left < 0) return yield { text: "", place, prose: false, tooMany: true };
          yield { text: v, place: { key: i, parent: place }, prose: false };
        } else if (typeof v === "object" && v !== null)
          stack.push({ value: v, place: { key: i, parent: place }, depth: depth + 1, data, meta });
      }
    } else if (isRecord(value)) {
      for (const key of Object.keys(value)) {
        left -= 2;
        if (left < 0) return yield { text: "", place, prose: false, tooMany: true };
        const at: Place = { key, parent: place };
        yield { text: key, place: at, isKey: true, prose: false };
        const v = value[key];
        const inMeta = meta === true || (depth === 0 && key === "_meta");
        if (typeof v === "string")
          yield { text: v, place: at, prose: inMeta || (!data && TEXT_KEYS.has(key)) };
        else if (typeof v === "object" && v !== null)
          stack.push({
            value: v,
            place: at,
            depth: depth + 1,
            data: data || DATA_KEYWORDS.has(key),
            meta: inMeta,
          });
      }
    }
  }
}

/**
 * The texts of an item read together, in the order the item gives them: every title and
 * description (not under a data keyword), the string values of its annotations and `_meta`, joined
 * by spaces so that an order whose parts sit in several fields reads as one sentence, after the
 * item's name on a line of its own. Bounded like {@link strings}; undefined when the item has fewer
 * than two such texts.
 */
function joinedText(item: Record<string, unknown>, maxDepth: number): string | undefined {
  const parts: string[] = [];
  let left = MAX_ITEM_STRINGS;
  // Depth first, children pushed in reverse: popped in the item's own order.
  const stack: { value: unknown; depth: number; data: boolean; free: boolean }[] = [
    { value: item, depth: 0, data: false, free: false },
  ];
  while (stack.length > 0 && left > 0) {
    const { value, depth, data, free } = stack.pop() as (typeof stack)[number];
    if (depth > maxDepth) continue;
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : isRecord(value)
        ? Object.entries(value)
        : [];
    const next: typeof stack = [];
    for (const [key, v] of entries) {
      left -= 1;
      if (left < 0) break;
      const underData = data || (typeof key === "string" && DATA_KEYWORDS.has(key));
      const underFree = free || (depth === 0 && (key === "annotations" || key === "_meta"));
      if (typeof v === "string") {
        if (!underData && (underFree || (typeof key === "string" && TEXT_KEYS.has(key))))
          parts.push(key === "title" && LABEL.test(v) ? `${v}\n` : v);
      } else if (typeof v === "object" && v !== null)
        next.push({ value: v, depth: depth + 1, data: underData, free: underFree });
    }
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i] as (typeof stack)[number]);
  }
  if (parts.length < 2) return undefined;
  // The name on a line of its own, and a title that is a label ("Print Environment Tool"): `add`
  // before "Stores the key" is no order to add it.
  const joined = parts.join(" ");
  return typeof item.name === "string" ? `${item.name}\n${joined}` : joined;
}

/** A title that is a label, a heading the model reads apart: a few words, each capitalized, no sentence's punctuation. */
const LABEL =
  /^\s*(?:[\p{Lu}\p{Lt}\p{N}][\p{L}\p{N}'\u2019-]*|[^\p{L}\s]+|(?:a|an|the|of|to|in|on|for|and|or|as|at|by|with|from)(?=\s))(?:\s+(?:[\p{Lu}\p{Lt}\p{N}][\p{L}\p{N}'\u2019-]*|[^\p{L}\s]+|a|an|the|of|to|in|on|for|and|or|as|at|by|with|from)){0,7}\s*$/u;

/** Where a finding in an item's texts read together is said to be. */
const JOINED = "(its texts read together)";

/** The words of a path that are MCP's or JSON Schema's; any other key is the server's own. */
const KEYWORDS = new Set([
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "arguments",
  "properties",
  "items",
  "additionalProperties",
  "patternProperties",
  "enum",
  "const",
  "default",
  "examples",
  "example",
  "type",
  "required",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "$defs",
  "definitions",
  "$schema",
  "$ref",
  "pattern",
  "format",
  "uri",
  "uriTemplate",
  "mimeType",
  "icons",
  "src",
  "execution",
  "_meta",
  "sizes",
  "theme",
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
]);

/** A path with every key the server chose shown as `*`, so no notice repeats the server's words. */
export function safePath(at: string): string {
  const key = at.endsWith(" (key)");
  const path = key ? at.slice(0, -" (key)".length) : at;
  const shown = path
    .split(".")
    .map((segment) => {
      const [, word = segment, index = ""] = /^([^[]*)((?:\[\d+\])*)$/.exec(segment) ?? [];
      return `${KEYWORDS.has(word) || word === "" ? word : "*"}${index}`;
    })
    .join(".");
  return key ? `${shown} (key)` : shown;
}

/** What is wrong with one item of a listing, field by field. */
export function scanItem(
  kind: ListingKind,
  item: Record<string, unknown>,
  ctx: ListingContext = {},
): ItemFinding[] {
  const name = itemName(kind, item);
  const disabled = ctx.disabledRules?.(name);
  const classes = new Set(CLASSES.filter((c) => !disabled?.has(`l2.listing.${c}`)));
  if (classes.size === 0) return [];
  // The server's names and the item's own, without copying the server's (a listing may be long).
  const declared = new Set(declaredNames(item));
  const serverNames = ctx.ownNames;
  const ownNames: NameSet = { has: (n) => declared.has(n) || serverNames?.has(n) === true };
  const findings: ItemFinding[] = [];
  for (const { text, place, isKey, prose, deep, tooMany } of strings(
    item,
    ctx.maxDepth ?? DEFAULT_MAX_DEPTH,
  )) {
    if (deep || tooMany) {
      const { at, path } = located(place);
      findings.push({
        rule: deep ? "l2.listing.too-deep" : "l2.listing.too-large",
        reason: deep
          ? "nests deeper than can be read"
          : `holds more than ${MAX_ITEM_STRINGS.toLocaleString("en")} strings, more than are read`,
        at,
        path,
        where: safePath(at),
        text: false,
      });
      continue;
    }
    const found = scanAgentText(text, { ownNames, foreignNames: ctx.foreignNames, classes, metadata: true });
    if (found) {
      const { at, path } = located(place, isKey);
      findings.push({
        rule: `l2.listing.${found.class}`,
        reason: found.reason,
        at,
        path,
        where: safePath(at),
        text: prose,
      });
    }
  }
  if (findings.length > 0) return findings;
  // Read whole: an order split across fields. Hidden characters were judged field by field.
  const joined = joinedText(item, ctx.maxDepth ?? DEFAULT_MAX_DEPTH);
  const together = new Set([...classes].filter((c) => c !== "hidden"));
  const found =
    joined && together.size > 0
      ? scanAgentText(joined, { ownNames, foreignNames: ctx.foreignNames, classes: together, metadata: true })
      : undefined;
  if (found)
    findings.push({
      rule: `l2.listing.${found.class}`,
      reason: found.reason,
      at: JOINED,
      path: [],
      where: JOINED,
      text: false,
    });
  return findings;
}

/** The notice that stands in for a flagged text. */
function listingNotice(finding: Pick<ItemFinding, "rule" | "reason">): string {
  return `${NOTICE_PREFIX}text withheld: it ${finding.reason} (${finding.rule})]`;
}

/** Replace the string at a path (key by key) in the item, in place; nothing when it is not there. */
function replaceAt(item: Record<string, unknown>, path: readonly (string | number)[], text: string): void {
  let node: unknown = item;
  for (const key of path.slice(0, -1)) {
    if (Array.isArray(node) && typeof key === "number") node = node[key];
    else if (isRecord(node) && typeof key === "string" && Object.hasOwn(node, key)) node = node[key];
    else return;
  }
  const last = path.at(-1);
  if (typeof last === "string" && isRecord(node) && Object.hasOwn(node, last)) node[last] = text;
  else if (typeof last === "number" && Array.isArray(node) && last < node.length) node[last] = text;
}

/**
 * The item with every flagged text replaced by its notice, and its description starting with a
 * notice that says the item was flagged (a description that was itself flagged is that notice).
 * `extra` is a notice of the caller's (a changed definition), put first.
 */
export function flagItem(
  item: Record<string, unknown>,
  findings: readonly ItemFinding[],
  extra?: string,
): Record<string, unknown> {
  const texts = findings.filter((f) => f.text);
  // One copy for every replacement: the server's item is never changed.
  const next = texts.length ? structuredClone(item) : item;
  for (const finding of texts) replaceAt(next, finding.path, listingNotice(finding));
  const description = typeof next.description === "string" ? next.description : "";
  const own = findings.filter((f) => f.at !== "description");
  const heads = [
    ...(extra ? [extra] : []),
    ...(own.length
      ? [`${NOTICE_PREFIX}flagged: ${[...new Set(own.map((f) => `${f.where} (${f.rule})`))].join(", ")}]`]
      : []),
  ];
  if (heads.length === 0) return next;
  return { ...next, description: [...heads, description].filter(Boolean).join(" ") };
}

/** An item's name as a notice may show it: printable ASCII, at most 64 characters. */
export function shownName(name: string): string {
  const shown = name.replace(/[^\x20-\x7e]/g, "?");
  return shown.length > 64 ? `${shown.slice(0, 61)}...` : shown;
}

/** A listing result with its items replaced and the withheld ones named in `_meta`. */
export function withItems(
  result: Record<string, unknown>,
  kind: ListingKind,
  items: unknown[],
  withheld: readonly { name: string; rule: string; reason: string }[],
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...result, [kind]: items };
  if (withheld.length > 0) {
    const meta = isRecord(result._meta) ? result._meta : {};
    next._meta = {
      ...meta,
      [WITHHELD_META]: withheld.map(({ name, rule, reason }) => ({ name: shownName(name), rule, reason })),
    };
  }
  return next;
}
