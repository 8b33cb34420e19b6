/**
 * Hands out dense positions (1, 2, 3, ...) for a timeline without a KV round trip per post.
 *
 * Posts to one channel then commit concurrently instead of queueing behind a counter key:
 * each commit checks that its slot is still empty and raises the length with the
 * conflict-free `max` mutation. Another writer (a second instance, the CLI) taking a slot
 * first makes that check fail; the caller then calls `reset` and takes again, which reloads
 * the length from KV.
 */
export class PositionAllocator {
  #next = new Map<string, Promise<{ next: number }>>();

  async take(kv: Deno.Kv, lengthKey: Deno.KvKey): Promise<number> {
    const id = JSON.stringify(lengthKey);
    let counter = this.#next.get(id);
    if (!counter) {
      counter = kv.get<Deno.KvU64>(lengthKey).then((e) => ({
        next: Number(e.value?.value ?? 0n) + 1,
      }));
      this.#next.set(id, counter);
      counter.catch(() => this.#next.delete(id));
    }
    const c = await counter;
    return c.next++;
  }

  /** Gives back a position whose commit failed, when nothing was handed out after it. */
  async release(lengthKey: Deno.KvKey, pos: number): Promise<void> {
    const counter = this.#next.get(JSON.stringify(lengthKey));
    if (!counter) return;
    const c = await counter;
    if (c.next === pos + 1) c.next = pos;
  }

  /** Forgets what it knows; the next `take` reads the length from KV again. */
  reset(lengthKey: Deno.KvKey): void {
    this.#next.delete(JSON.stringify(lengthKey));
  }
}

/** Runs `fn` with no other `fn` of the same name running in this process. */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(name) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.catch(() => {});
    this.#tails.set(name, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    }
  }
}
