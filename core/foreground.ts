/**
 * How long one request counts as in front: its first moments, when it reads, decides and commits.
 * A request that waits longer (a slash command waiting on its app) stops holding delivery back.
 */
const HOLD_MS = 50;
/**
 * How long background work waits for the requests in front at most: under requests that never
 * let up, delivery still moves, a step every this often, instead of stopping.
 */
const MAX_WAIT_MS = 20;

/**
 * Requests go first: the delivery engine, on the same event loop and the same store writer as the
 * API, starts attempts and commits their records only while no request is in its first moments,
 * or once it has waited MAX_WAIT_MS; attempts under way go on. A post otherwise waits behind
 * delivery's work, most of the loop's and of the store's, which takes its turns in between each
 * of the post's reads and writes.
 */
export class Foreground {
  /**
   * When each request in front began, oldest first. No timer per request: one that outlives
   * HOLD_MS is let go when it is next looked at (a timer each, set and cleared, took 3% of the
   * main thread's time for a post, in a CPU profile of posting).
   */
  #since = new Set<{ at: number }>();
  #waiting: (() => void)[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Runs a request's handler in front, for HOLD_MS at most. */
  async during<T>(handle: () => T | Promise<T>): Promise<T> {
    const hold = { at: performance.now() };
    this.#since.add(hold);
    try {
      return await handle();
    } finally {
      if (this.#since.delete(hold) && !this.#inFront()) this.#letGo();
    }
  }

  /**
   * What background work awaits before its next step: nothing (undefined, no turn of the loop
   * lost) while no request is in front, else a promise kept once none is, or MAX_WAIT_MS passed.
   */
  turn(): Promise<void> | undefined {
    if (!this.#inFront()) return undefined;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push(resolve);
    this.#timer ??= setTimeout(() => this.#letGo(), MAX_WAIT_MS);
    return promise;
  }

  /** Whether a request is in its first moments; forgets those past them. */
  #inFront(): boolean {
    const before = performance.now() - HOLD_MS;
    for (const hold of this.#since) {
      if (hold.at > before) return true;
      this.#since.delete(hold);
    }
    return false;
  }

  #letGo() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}
