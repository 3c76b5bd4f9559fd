import type { JsonRpcId } from "./jsonrpc.js";

export interface PendingRequest<T> {
  id: JsonRpcId;
  method: string;
  context: T;
}

/**
 * The key under which a client may match a response to `id`: clients coerce ids before they look
 * them up (the MCP TypeScript SDK does `Number(response.id)`, so "3", " 3", "3.0" and "0x3" all
 * answer 3; others use `String(id)`). Two ids with the same loose key are one request to such a
 * client. Ids that are not numbers to `Number()` only meet themselves.
 */
export function looseIdKey(id: JsonRpcId): string {
  const n = Number(id);
  return Number.isNaN(n) ? `s:${id}` : `n:${n}`;
}

/**
 * Requests in flight in one direction, correlated by id. A Map keeps `1` and `"1"` apart by
 * itself (its keys compare by type and value), so the id is the key: nothing is built per message.
 */
export class PendingRequests<T = undefined> {
  readonly #byId = new Map<JsonRpcId, PendingRequest<T>>();
  /** How many requests in flight share each {@link looseIdKey}; kept only when asked for. */
  readonly #loose: Map<string, number> | undefined;

  /** `looseIds`: keep what {@link hasLoose} needs (two map updates per request, else none). */
  constructor(options: { looseIds?: boolean } = {}) {
    this.#loose = options.looseIds ? new Map() : undefined;
  }

  add(id: JsonRpcId, method: string, context: T): PendingRequest<T> {
    const entry = { id, method, context };
    if (this.#loose && !this.#byId.has(id)) this.#countLoose(this.#loose, id, 1);
    this.#byId.set(id, entry);
    return entry;
  }

  has(id: JsonRpcId): boolean {
    return this.#byId.has(id);
  }

  /** Whether a request in flight has an id that a coercing client would take for `id`. */
  hasLoose(id: JsonRpcId): boolean {
    if (!this.#loose) throw new Error("hasLoose() needs PendingRequests({ looseIds: true })");
    return this.#loose.has(looseIdKey(id));
  }

  /** Remove and return the request a response answers, if its id is exactly one in flight. */
  take(id: JsonRpcId | null): PendingRequest<T> | undefined {
    if (id === null) return undefined;
    const entry = this.#byId.get(id);
    if (entry) {
      this.#byId.delete(id);
      if (this.#loose) this.#countLoose(this.#loose, id, -1);
    }
    return entry;
  }

  /** Remove and return every request still in flight, oldest first. */
  drain(): PendingRequest<T>[] {
    const all = [...this.#byId.values()];
    this.#byId.clear();
    this.#loose?.clear();
    return all;
  }

  get size(): number {
    return this.#byId.size;
  }

  #countLoose(loose: Map<string, number>, id: JsonRpcId, delta: number): void {
    const key = looseIdKey(id);
    const count = (loose.get(key) ?? 0) + delta;
    if (count > 0) loose.set(key, count);
    else loose.delete(key);
  }
}
