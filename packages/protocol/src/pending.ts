import { idKey, type JsonRpcId } from "./jsonrpc.js";

export interface PendingRequest<T> {
  id: JsonRpcId;
  method: string;
  /** `process.hrtime.bigint()` when the request was seen. */
  startedAt: bigint;
  context: T;
}

/** Requests in flight in one direction, correlated by id (string and number ids kept apart). */
export class PendingRequests<T = undefined> {
  readonly #byKey = new Map<string, PendingRequest<T>>();

  add(id: JsonRpcId, method: string, context: T): PendingRequest<T> {
    const entry = { id, method, startedAt: process.hrtime.bigint(), context };
    this.#byKey.set(idKey(id), entry);
    return entry;
  }

  has(id: JsonRpcId): boolean {
    return this.#byKey.has(idKey(id));
  }

  /** Remove and return the request a response answers, if it is known. */
  take(id: JsonRpcId | null): PendingRequest<T> | undefined {
    if (id === null) return undefined;
    const key = idKey(id);
    const entry = this.#byKey.get(key);
    if (entry) this.#byKey.delete(key);
    return entry;
  }

  /** Remove and return every request still in flight. */
  drain(): PendingRequest<T>[] {
    const all = [...this.#byKey.values()];
    this.#byKey.clear();
    return all;
  }

  get size(): number {
    return this.#byKey.size;
  }
}
