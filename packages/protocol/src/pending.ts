import { idKey, type JsonRpcId } from "./jsonrpc.js";

export interface PendingRequest<T> {
  id: JsonRpcId;
  method: string;
  /** `process.hrtime.bigint()` when the request was seen. */
  startedAt: bigint;
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

/** Requests in flight in one direction, correlated by id (string and number ids kept apart). */
export class PendingRequests<T = undefined> {
  readonly #byKey = new Map<string, PendingRequest<T>>();
  /** How many requests in flight share each {@link looseIdKey}. */
  readonly #loose = new Map<string, number>();

  add(id: JsonRpcId, method: string, context: T): PendingRequest<T> {
    const entry = { id, method, startedAt: process.hrtime.bigint(), context };
    const key = idKey(id);
    if (!this.#byKey.has(key)) this.#countLoose(id, 1);
    this.#byKey.set(key, entry);
    return entry;
  }

  has(id: JsonRpcId): boolean {
    return this.#byKey.has(idKey(id));
  }

  /** Whether a request in flight has an id that a coercing client would take for `id`. */
  hasLoose(id: JsonRpcId): boolean {
    return this.#loose.has(looseIdKey(id));
  }

  /** Remove and return the request a response answers, if its id is exactly one in flight. */
  take(id: JsonRpcId | null): PendingRequest<T> | undefined {
    if (id === null) return undefined;
    const key = idKey(id);
    const entry = this.#byKey.get(key);
    if (entry) {
      this.#byKey.delete(key);
      this.#countLoose(id, -1);
    }
    return entry;
  }

  /** Remove and return every request still in flight. */
  drain(): PendingRequest<T>[] {
    const all = [...this.#byKey.values()];
    this.#byKey.clear();
    this.#loose.clear();
    return all;
  }

  get size(): number {
    return this.#byKey.size;
  }

  #countLoose(id: JsonRpcId, delta: number): void {
    const key = looseIdKey(id);
    const count = (this.#loose.get(key) ?? 0) + delta;
    if (count > 0) this.#loose.set(key, count);
    else this.#loose.delete(key);
  }
}
