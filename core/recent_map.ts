/**
 * A map that keeps at most `max` entries, forgetting the least recently set one first: for
 * in-process caches whose keys (tokens, teams, lists) are unbounded over a process's life. With
 * `weigh`, `max` bounds the entries' total weight instead (a cache of lists of any length).
 */
export class RecentMap<K, V> {
  #entries = new Map<K, V>();
  #weight = 0;

  constructor(
    private readonly max: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.delete(key);
    this.#entries.set(key, value);
    this.#weight += this.weigh(value);
    // The entry just set stays, however heavy: the caller is about to use it.
    while (this.#weight > this.max && this.#entries.size > 1) {
      this.delete(this.#entries.keys().next().value!);
    }
  }

  delete(key: K): void {
    if (!this.#entries.has(key)) return;
    this.#weight -= this.weigh(this.#entries.get(key)!);
    this.#entries.delete(key);
  }
}
