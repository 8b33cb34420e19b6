/**
 * Kinds of in-process memory about a store: a cache of its records, or locks by name. A kind is a
 * plain description made where it is used; the store keeps one of each kind (kv/store/store.ts), so
 * two stores in one process (the tests', a move's source and target) never share what they
 * remember, and everything a process remembers about a store is found on it.
 */
export class CacheKind<V> {
  /**
   * `max`: entries kept at most, the least recently set forgotten first; with `weigh`, their
   * total weight at most.
   */
  constructor(
    readonly name: string,
    readonly max: number,
    readonly weigh?: (value: V) => number,
  ) {}

  /** Never set: it ties V to the kind, so that `Store.cache` returns a map of V. */
  declare readonly value?: V;
}

export class LockKind {
  constructor(readonly name: string) {}
}
