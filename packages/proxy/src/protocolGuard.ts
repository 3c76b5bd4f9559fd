/**
 * L2 on what the server says over the protocol beside tool results (C-app and C-full):
 *
 * - `initialize`: its `instructions` are read as listing text;
 * - `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`: every item read
 *   (validator `scanItem`), and every tool checked against its pin (pins.ts). A flagged text is
 *   replaced by a `[mcpguard: ...]` notice and the item says it was flagged; an item with a
 *   finding in its data (a name, an enum value, a default), a tool whose name another server has
 *   pinned, and a pinned tool whose definition changed (policy `pins.onChange`: "block", the
 *   default) are withheld: left out of the listing, named in its `_meta["mcpguard/withheld"]`, and
 *   a call to them is refused. With "flag", a changed tool stays listed with a notice first;
 * - `prompts/get`: the prompt's messages;
 * - `sampling/createMessage` and `elicitation/create`, the requests the server sends the client:
 *   a sampling request's flagged texts are replaced by notices, a form that asks for credentials
 *   or carries a flagged message is refused on the user's behalf (the server gets an error, the
 *   client never sees it).
 *
 * Every item acted on is one audit record (`l2.listing.*`, `l2.pin.*`, `l2.prompt.*`,
 * `l2.request.*`); a tool pinned after the first listing is an `allow` record (`l2.pin.added`).
 */
import { ErrorCode, errorResponse, type JsonRpcId, type Message } from "@mcpguard/protocol";
import type { ItemFinding, ListingKind, NameSet } from "@mcpguard/validator";
import type { PinBook, PinCheck } from "./pins.js";
import type { Interceptor, ItemDecision, ResultChange, Verdict } from "./router.js";

type Validator = typeof import("@mcpguard/validator");

export interface GuardOptions {
  validator: Validator;
  pins: PinBook;
  /** What a pinned tool whose definition changed gets: withheld ("block") or listed with a notice ("flag"). */
  onChange: "block" | "flag";
  /** Rules an override turned off: the tool's, or (no tool) the server's. */
  disabledRules(tool?: string): ReadonlySet<string> | undefined;
  maxDepth?: number;
}

const LAYER = "L2";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

interface PinOutcome {
  /** Withhold the tool, with this rule and reason. */
  withhold?: { rule: string; reason: string };
  /** List it with this notice first. */
  notice?: string;
  record?: ItemDecision;
}

/** One item's fate in a listing. */
interface ItemOutcome {
  item: unknown;
  withheld?: { name: string; rule: string; reason: string };
  records: ItemDecision[];
}

/** A change made of item decisions: the message, the rules in order, and a one-line summary. */
function change(message: Message, records: ItemDecision[]): ResultChange | undefined {
  if (records.length === 0) return undefined;
  const acted = records.filter((r) => r.decision !== "allow");
  const rules = [...new Set(acted.map((r) => r.rule))];
  return {
    message,
    layer: LAYER,
    rule: rules.join(","),
    reason: acted.length ? `${acted.length} item(s): ${rules.join(", ")}` : "pinned",
    records,
  };
}

export class ProtocolGuard {
  readonly #opts: GuardOptions;
  /** Tools withheld from the last listing that named them: a call to one is refused. */
  readonly #withheld = new Map<string, { rule: string; reason: string }>();
  /** Every tool name the server listed: its own words in its other listings. */
  readonly #toolNames = new Set<string>();
  /** The top-level defaults of each listed tool's input schema: what the server fills in. */
  readonly #defaults = new Map<string, Record<string, unknown>>();
  #serverVersion: string | undefined;

  constructor(options: GuardOptions) {
    this.#opts = options;
  }

  /** A call to a tool the guard withheld from the listing. */
  toolCall(name: string): Verdict | undefined {
    const withheld = this.#withheld.get(name);
    if (!withheld) return undefined;
    return {
      decision: "deny",
      layer: LAYER,
      rule: withheld.rule,
      reason: `the tool was withheld from the listing: it ${withheld.reason}`,
    };
  }

  /** What the server fills in for the arguments a call to `name` leaves out (router.ts, callDefaults). */
  defaults(name: string): Readonly<Record<string, unknown>> | undefined {
    return this.#defaults.get(name);
  }

  /** The server's answer to `method` (with the client's `params`). */
  response(method: string, params: unknown, message: Message): ResultChange | undefined {
    const result = message.result;
    if (!isRecord(result)) return undefined;
    if (method === "initialize") return this.#initialize(result, message);
    const kind = Object.hasOwn(this.#opts.validator.LISTINGS, method)
      ? this.#opts.validator.LISTINGS[method]
      : undefined;
    if (kind) return this.#listing(kind, result, message);
    if (method === "prompts/get") {
      const name = isRecord(params) && typeof params.name === "string" ? params.name : method;
      const scanned = this.#opts.validator.scanPrompt(result, this.#opts.disabledRules());
      return change({ ...message, result: scanned.value }, this.#records(name, "modify", scanned.findings));
    }
    return undefined;
  }

  /** A request the server sends the client (sampling, elicitation). */
  serverRequest(method: string, message: Message): ResultChange | undefined {
    const params = message.params;
    if (!isRecord(params)) return undefined;
    const { validator } = this.#opts;
    if (method === "sampling/createMessage") {
      const scanned = validator.scanSampling(params, this.#opts.disabledRules());
      return change({ ...message, params: scanned.value }, this.#records(method, "modify", scanned.findings));
    }
    if (method === "elicitation/create") {
      const findings = validator.scanElicitation(params, this.#opts.disabledRules());
      const made = change(message, this.#records(method, "deny", findings));
      if (!made) return undefined;
      const id = message.id as JsonRpcId;
      const first = findings[0];
      made.reply = errorResponse(id, {
        code: ErrorCode.InvalidRequest,
        message: `Blocked by mcpguard (L2): the form was not shown: it ${first?.reason} (${first?.rule})`,
      });
      return made;
    }
    return undefined;
  }

  #records(
    subject: string,
    decision: ItemDecision["decision"],
    findings: readonly { rule: string; reason: string; at: string }[],
  ): ItemDecision[] {
    return findings.map((f) => ({
      subject,
      decision,
      layer: LAYER,
      rule: f.rule,
      reason: `${f.at}: ${f.reason}`,
    }));
  }

  #initialize(result: Record<string, unknown>, message: Message): ResultChange | undefined {
    const info = result.serverInfo;
    if (isRecord(info) && typeof info.version === "string") this.#serverVersion = info.version.slice(0, 100);
    const scanned = this.#opts.validator.scanInstructions(
      result,
      this.#opts.disabledRules(),
      this.#opts.pins.foreignNames,
    );
    return change(
      { ...message, result: scanned.value },
      this.#records("initialize", "modify", scanned.findings),
    );
  }

  #listing(kind: ListingKind, result: Record<string, unknown>, message: Message): ResultChange | undefined {
    const items = result[kind];
    if (!Array.isArray(items)) return undefined;
    const names =
      kind === "tools"
        ? items
            .filter(isRecord)
            .map((t) => t.name)
            .filter((n): n is string => typeof n === "string")
        : [];
    for (const name of names) this.#toolNames.add(name);
    // The server's own names, found by any name that reads as one (names.ts).
    const own = new this.#opts.validator.NameKeys([...this.#toolNames, ...this.#opts.pins.names]);
    const outcomes = items.map(
      (item): ItemOutcome => (isRecord(item) ? this.#item(kind, item, own) : { item, records: [] }),
    );
    if (kind === "tools" && typeof result.nextCursor !== "string") this.#opts.pins.listed();
    const records = outcomes.flatMap((o) => o.records);
    if (records.length === 0) return undefined;
    const withheld = outcomes.flatMap((o) => (o.withheld ? [o.withheld] : []));
    const kept = outcomes.filter((o) => !o.withheld).map((o) => o.item);
    const next = this.#opts.validator.withItems(result, kind, kept, withheld);
    return change({ ...message, result: next }, records);
  }

  #item(kind: ListingKind, item: Record<string, unknown>, own: NameSet): ItemOutcome {
    const { validator, pins } = this.#opts;
    const name = validator.itemName(kind, item);
    const findings = validator.scanItem(kind, item, {
      ownNames: own,
      foreignNames: pins.foreignNames,
      disabledRules: (n) => this.#disabled(n),
      maxDepth: this.#opts.maxDepth,
    });
    const pin = kind === "tools" ? this.#pin(name, pins.check(item)) : {};
    const dataFinding = findings.find((f) => !f.text);
    const withhold =
      pin.withhold ??
      (dataFinding
        ? { rule: dataFinding.rule, reason: `${dataFinding.where}: ${dataFinding.reason}` }
        : undefined);
    const records = [
      ...findings.map((f) => this.#findingRecord(name, f, withhold !== undefined)),
      ...(pin.record ? [pin.record] : []),
    ];
    if (kind === "tools") {
      if (withhold) this.#withheld.set(name, withhold);
      else this.#withheld.delete(name);
      const defaults = schemaDefaults(item.inputSchema);
      if (defaults) this.#defaults.set(name, defaults);
      else this.#defaults.delete(name);
    }
    if (withhold) return { item, withheld: { name, ...withhold }, records };
    if (findings.length === 0 && !pin.notice) return { item, records };
    return { item: validator.flagItem(item, findings, pin.notice), records };
  }

  #findingRecord(subject: string, f: ItemFinding, withheld: boolean): ItemDecision {
    return {
      subject,
      decision: withheld ? "deny" : "modify",
      layer: LAYER,
      rule: f.rule,
      reason: `${f.where}: ${f.reason}`,
    };
  }

  #disabled(tool: string): ReadonlySet<string> | undefined {
    const forTool = this.#opts.disabledRules(tool);
    const forServer = this.#opts.disabledRules();
    if (!forTool) return forServer;
    if (!forServer) return forTool;
    return new Set([...forTool, ...forServer]);
  }

  /** What a tool's pin check means under the policy. */
  #pin(name: string, check: PinCheck): PinOutcome {
    const off = (rule: string) => this.#disabled(name)?.has(rule) === true;
    if (check.kind === "added") {
      return {
        record: {
          subject: name,
          decision: "allow",
          layer: LAYER,
          rule: "l2.pin.added",
          reason: "a tool not pinned before, pinned from now on",
        },
      };
    }
    if (check.kind === "unpinnable" && !off("l2.pin.name")) {
      const reason = "has a name no pin file can hold, so its definition cannot be pinned";
      return {
        withhold: { rule: "l2.pin.name", reason },
        record: { subject: name, decision: "deny", layer: LAYER, rule: "l2.pin.name", reason },
      };
    }
    if (check.kind === "collision" && !off("l2.pin.collision")) {
      const as = check.name === undefined ? "" : ` as "${check.name}", whose name this one reads as`;
      const reason = `takes a name another server of the client config has pinned ("${check.other}"${as}); pin it for this server after review`;
      return {
        withhold: { rule: "l2.pin.collision", reason },
        record: { subject: name, decision: "deny", layer: LAYER, rule: "l2.pin.collision", reason },
      };
    }
    if (check.kind !== "changed" || off("l2.pin.changed")) return {};
    const pinned = this.#opts.pins.pinnedVersion;
    const version =
      check.since === "the pin file" && pinned && this.#serverVersion && pinned !== this.#serverVersion
        ? "; the server now claims another version than the pinned one, which is no review"
        : "";
    const like =
      check.like === undefined
        ? ""
        : `; its name reads as the pinned "${this.#opts.validator.shownName(check.like)}" but is not it`;
    const reason = `changed its definition since ${check.since} (${check.fields.join(", ")})${like}${version}; review it and pin it again (mcpguard pin)`;
    const block = this.#opts.onChange === "block";
    return {
      ...(block
        ? { withhold: { rule: "l2.pin.changed", reason } }
        : { notice: `${this.#opts.validator.NOTICE_PREFIX}this tool ${reason} (l2.pin.changed)]` }),
      record: {
        subject: name,
        decision: block ? "deny" : "modify",
        layer: LAYER,
        rule: "l2.pin.changed",
        reason,
      },
    };
  }
}

/** Two layers' changes to one message, as one: the second applied to the first's message. */
function merged(subject: string, first?: ResultChange, second?: ResultChange): ResultChange | undefined {
  if (!first) return second;
  if (!second) return first;
  const own: ItemDecision[] = second.records ?? [
    { subject, decision: "modify", layer: second.layer, rule: second.rule, reason: second.reason },
  ];
  return {
    message: second.message,
    layer: first.rule ? first.layer : second.layer,
    rule: [first.rule, second.rule].filter(Boolean).join(","),
    reason: `${first.reason}; ${second.reason}`,
    records: [...(first.records ?? []), ...own],
  };
}

/** The `default` of each top-level property of an input schema, or undefined when none has one. */
function schemaDefaults(schema: unknown): Record<string, unknown> | undefined {
  const properties = isRecord(schema) ? schema.properties : undefined;
  if (!isRecord(properties)) return undefined;
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, property] of Object.entries(properties))
    if (isRecord(property) && Object.hasOwn(property, "default")) define(out, key, property.default);
  return Object.keys(out).length ? out : undefined;
}

/** An own, enumerable property, whatever its name (`__proto__` included). */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Put the guard in front of an interceptor's hooks: a call to a withheld tool is refused once
 * the other layers allowed it; answers and the server's requests pass the guard first, then the
 * sanitizer (a request the guard refused goes no further); the calls are decided with the listed
 * tools' defaults put in (router.ts, callDefaults).
 */
export function guardProtocol(interceptor: Interceptor, guard: ProtocolGuard): void {
  const { toolCall, response, serverMessage } = interceptor;
  interceptor.callDefaults = (name) => guard.defaults(name);
  interceptor.toolCall = (call) => {
    const verdict = toolCall.call(interceptor, call);
    return verdict.decision === "deny" ? verdict : (guard.toolCall(call.name) ?? verdict);
  };
  interceptor.response = (request, message) => {
    const guarded = guard.response(request.method, request.params, message);
    const rest = response?.call(interceptor, request, guarded?.message ?? message);
    return merged(request.call?.name ?? request.method, guarded, rest);
  };
  interceptor.serverMessage = (method, message) => {
    const guarded = guard.serverRequest(method, message);
    if (guarded?.reply) return guarded;
    const rest = serverMessage?.call(interceptor, method, guarded?.message ?? message);
    return merged(method, guarded, rest);
  };
}
