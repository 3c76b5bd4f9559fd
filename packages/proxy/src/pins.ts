/**
 * Tool pins: the definitions of a client config's tools as a person reviewed them, so that a
 * definition that changes later (a rug pull) and a tool that takes another server's name (a
 * collision) are caught.
 *
 * The pin file is reviewable JSON, kept where no server may write it (`mcpguard run` refuses it
 * otherwise; `mcpguard wrap` keeps it in its own folder), one entry per server name (the name the
 * audit log uses: `--server-name`, the policy's, or the command's):
 *
 *     { "version": 1,
 *       "servers": { "files": { "serverInfo": { "name": "workspace-files", "version": "1.0.0" },
 *                               "tools": { "read_file": { "description": "...",
 *                                                          "annotations": { "readOnlyHint": true },
 *                                                          "schema": "sha256:..." } } } } }
 *
 * A tool's pin is its description and title as written (a diff of the file shows what the agent
 * will read), its annotations, the sha256 of its input and output schemas in canonical JSON (every
 * property's description, enum value and default with them), and the sha256 of its `_meta` and of
 * its `icons` when it has them (a client may show them or pass them on). `mcpguard pin` writes it;
 * `mcpguard run --pins FILE` compares every listing with it. A server the file does not hold is
 * pinned by its first listing in the session (trust on first use).
 *
 * Names are compared as people compare them (validator names.ts: NFKC, the confusable skeleton of
 * UTS #39, case folded, default-ignorable code points taken out). A tool whose name reads as a
 * pinned one of its server but is not it (`send_emaіl` with a Cyrillic і for `send_email`, its NFD
 * or full-width form, another case) is that tool changed; one whose name reads as a tool another
 * server pinned is a collision. The exact name stays the tool's identity for calls.
 *
 * Benign update or rug pull: a pinned definition never changes without a person. Tools may come and
 * go (a new tool is scanned like any listing text and pinned from then on), but a change to a
 * pinned tool is a change, whatever version the server now claims: a server writes its own
 * `serverInfo.version`, so a bump proves nothing. The operator reviews an update by running
 * `mcpguard pin` again and committing the diff.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { NameIndex, NameKeys } from "@mcpguard/validator";
import "@mcpguard/protocol/zodEnglish";
import * as z from "zod/mini";
import { digest } from "./audit.js";

/** How names are compared: the validator's (names.ts), given by the caller that loaded it. */
export interface NameRules {
  NameIndex: typeof NameIndex;
  NameKeys: typeof NameKeys;
}

const SHA256 = z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 hex digits'));

export const PinnedTool = z.strictObject({
  title: z.optional(z.string()),
  description: z.string(),
  annotations: z.optional(z.record(z.string(), z.unknown())),
  /** sha256 of the canonical JSON of `{inputSchema, outputSchema}`. */
  schema: SHA256,
  /** sha256 of the canonical JSON of the tool's `_meta`, when it has one. */
  meta: z.optional(SHA256),
  /** sha256 of the canonical JSON of the tool's `icons`, when it has them. */
  icons: z.optional(SHA256),
});
export type PinnedTool = z.infer<typeof PinnedTool>;

export const PinnedServer = z.strictObject({
  serverInfo: z.optional(z.strictObject({ name: z.string(), version: z.string() })),
  tools: z.record(z.string(), PinnedTool),
});
export type PinnedServer = z.infer<typeof PinnedServer>;

export const PinFile = z.strictObject({
  version: z.literal(1),
  description: z.optional(z.string()),
  servers: z.record(z.string(), PinnedServer),
});
export type PinFile = z.infer<typeof PinFile>;

/** A pin file that cannot be used: one line, naming the file and the field of its first problem. */
export class PinError extends Error {
  override readonly name = "PinError";
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What a listing's tool is pinned as. */
export function pinOf(tool: Record<string, unknown>): PinnedTool {
  const pin: PinnedTool = {
    description: typeof tool.description === "string" ? tool.description : "",
    schema: digest({ inputSchema: tool.inputSchema ?? null, outputSchema: tool.outputSchema ?? null }),
  };
  if (typeof tool.title === "string") pin.title = tool.title;
  if (isRecord(tool.annotations)) pin.annotations = tool.annotations;
  if (tool._meta !== undefined) pin.meta = digest(tool._meta);
  if (tool.icons !== undefined) pin.icons = digest(tool.icons);
  return pin;
}

/** The fields of a definition that differ from its pin, in a fixed order. */
export function changedFields(pinned: PinnedTool, now: PinnedTool): string[] {
  const fields: string[] = [];
  if (pinned.description !== now.description) fields.push("description");
  if ((pinned.title ?? null) !== (now.title ?? null)) fields.push("title");
  if (digest(pinned.annotations ?? null) !== digest(now.annotations ?? null)) fields.push("annotations");
  if (pinned.schema !== now.schema) fields.push("schema");
  if ((pinned.meta ?? null) !== (now.meta ?? null)) fields.push("_meta");
  if ((pinned.icons ?? null) !== (now.icons ?? null)) fields.push("icons");
  return fields;
}

export function emptyPins(): PinFile {
  return { version: 1, servers: {} };
}

/** Read and validate a pin file; a missing file is an empty one when `missingOk`. */
export function loadPins(file: string, missingOk = false): PinFile {
  if (missingOk && !existsSync(file)) return emptyPins();
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PinError(
      `${file}: ${code ? `cannot read: ${code}` : `not valid JSON: ${(error as Error).message}`}`,
    );
  }
  // A `__proto__` key would be dropped by the schema, and its pin with it: say so instead.
  const servers = isRecord(json) && isRecord(json.servers) ? json.servers : {};
  for (const [server, entry] of Object.entries(servers)) {
    const tools = isRecord(entry) && isRecord(entry.tools) ? Object.keys(entry.tools) : [];
    for (const name of [server, ...tools])
      if (!pinnable(name))
        throw new PinError(`${file}: servers.${server}: the name "${name}" cannot be pinned (remove it)`);
  }
  const parsed = PinFile.safeParse(json);
  if (!parsed.success) {
    // One line: the first problem, and how many more there are.
    const [first, ...more] = parsed.error.issues;
    const where = first?.path.length ? `${first.path.join(".")}: ` : "";
    const rest = more.length ? ` (and ${more.length} more problem${more.length > 1 ? "s" : ""})` : "";
    throw new PinError(`${file}: ${where}${first?.message ?? "not a pin file"}${rest}`);
  }
  return parsed.data;
}

/** Keys sorted at every level, so a re-pin shows as a small diff. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted(value[key])]),
  );
}

/** Write a pin file atomically (beside it, then renamed), keys sorted, two-space indented. */
export function savePins(file: string, pins: PinFile): void {
  const { version, description, servers } = pins;
  const text = `${JSON.stringify({ version, ...(description ? { description } : {}), servers: sorted(servers) }, null, 2)}\n`;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/**
 * Whether a pin file can hold the name: JSON parsers that build objects (the schema's included)
 * drop a `__proto__` key, so such a pin would silently vanish on the next load.
 */
export function pinnable(name: string): boolean {
  return name !== "__proto__";
}

/** Every tool name another server of the file has pinned, with that server's name. */
export function foreignTools(pins: PinFile | undefined, server: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [other, entry] of Object.entries(pins?.servers ?? {})) {
    if (other === server) continue;
    for (const name of Object.keys(entry.tools)) if (!names.has(name)) names.set(name, other);
  }
  return names;
}

export type PinCheck =
  | { kind: "same" }
  /** A name no pin file can hold (`__proto__`): never pinned, so never trusted. */
  | { kind: "unpinnable" }
  /** Not pinned before: the server's first listing (trust on first use), or a tool added later. */
  | { kind: "first" | "added" }
  /** `like`: the pinned tool whose name this one's reads as, when it is not the same name. */
  | { kind: "changed"; fields: string[]; since: "the pin file" | "the first listing"; like?: string }
  /** `other`: the server that pinned the name; `name`: its pinned name, when it is not the same. */
  | { kind: "collision"; other: string; name?: string };

/**
 * One server's pins for one proxy session: the pin file's entry if it has one, else what the
 * server listed first; tools added later are pinned as they appear.
 */
export class PinBook {
  readonly #fromFile: ReadonlyMap<string, PinnedTool> | undefined;
  readonly #session = new Map<string, PinnedTool>();
  /** The pinned names (the file's, then the session's), found by any name that reads as theirs. */
  readonly #fileNames: NameIndex<string>;
  readonly #sessionNames: NameIndex<string>;
  readonly #foreign: NameIndex<{ server: string; name: string }>;
  readonly #foreignNames: NameKeys;
  readonly pinnedVersion: string | undefined;
  #listed = false;

  constructor(server: string, pins: PinFile | undefined, names: NameRules) {
    const entry = pins && Object.hasOwn(pins.servers, server) ? pins.servers[server] : undefined;
    this.#fromFile = entry ? new Map(Object.entries(entry.tools)) : undefined;
    this.#fileNames = new names.NameIndex(
      Object.keys(entry?.tools ?? {}).map((name) => [name, name] as const),
    );
    this.#sessionNames = new names.NameIndex<string>();
    this.pinnedVersion = entry?.serverInfo?.version;
    const foreign = [...foreignTools(pins, server)];
    this.#foreign = new names.NameIndex(
      foreign.map(([name, other]) => [name, { server: other, name }] as const),
    );
    this.#foreignNames = new names.NameKeys(foreign.map(([name]) => name));
  }

  /** Tool names other servers have pinned: holds every name that reads as one of them. */
  get foreignNames(): NameKeys {
    return this.#foreignNames;
  }

  /** Whether the server's tools come from the pin file (else from its first listing). */
  get pinned(): boolean {
    return this.#fromFile !== undefined;
  }

  /** Every tool pinned so far, by the file or in the session. */
  get names(): string[] {
    return [...new Set([...(this.#fromFile?.keys() ?? []), ...this.#session.keys()])];
  }

  /** A listing has been read in full (its last page): tools that appear from now on are additions. */
  listed(): void {
    this.#listed = true;
  }

  check(tool: Record<string, unknown>): PinCheck {
    const name = typeof tool.name === "string" ? tool.name : "";
    if (!pinnable(name)) return { kind: "unpinnable" };
    const now = pinOf(tool);
    const fromFile = this.#fromFile?.get(name);
    const reference = fromFile ?? this.#session.get(name);
    if (reference) {
      const fields = changedFields(reference, now);
      if (fields.length === 0) return { kind: "same" };
      return { kind: "changed", fields, since: fromFile ? "the pin file" : "the first listing" };
    }
    // Another name that reads as a pinned one: the pinned tool renamed, whatever else it says.
    const inFile = this.#fileNames.find(name);
    const like = inFile ?? this.#sessionNames.find(name);
    const pinned =
      like === undefined ? undefined : inFile ? this.#fromFile?.get(like) : this.#session.get(like);
    if (like !== undefined && pinned) {
      return {
        kind: "changed",
        fields: ["name", ...changedFields(pinned, now)],
        since: inFile ? "the pin file" : "the first listing",
        like,
      };
    }
    const other = this.#foreign.find(name);
    if (other !== undefined)
      return { kind: "collision", other: other.server, ...(other.name !== name ? { name: other.name } : {}) };
    this.#session.set(name, now);
    this.#sessionNames.set(name, name);
    return this.#listed || this.#fromFile ? { kind: "added" } : { kind: "first" };
  }
}
