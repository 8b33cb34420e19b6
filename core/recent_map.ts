/**
 * A map that keeps at most `max` entries, forgetting the least recently set one first: for
 * in-process caches whose keys (tokens, teams, lists) are unbounded over a process's life.
 */
export class RecentMap<K, V> {
  #entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}
