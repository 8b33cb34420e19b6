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
  #holding = 0;
  #waiting: (() => void)[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Runs a request's handler in front, for HOLD_MS at most. */
  async during<T>(handle: () => T | Promise<T>): Promise<T> {
    const release = this.#hold();
    try {
      return await handle();
    } finally {
      release();
    }
  }

  /**
   * What background work awaits before its next step: nothing (undefined, no turn of the loop
   * lost) while no request is in front, else a promise kept once none is, or MAX_WAIT_MS passed.
   */
  turn(): Promise<void> | undefined {
    if (this.#holding === 0) return undefined;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push(resolve);
    this.#timer ??= setTimeout(() => this.#letGo(), MAX_WAIT_MS);
    return promise;
  }

  #hold(): () => void {
    this.#holding++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      if (--this.#holding === 0) this.#letGo();
    };
    const timer = setTimeout(release, HOLD_MS);
    // A process with nothing else to do must not be kept alive by it.
    Deno.unrefTimer(timer);
    return release;
  }

  #letGo() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}
