import { claimRequests } from "../../kv/service/rate_counts.ts";
import type { Store } from "../../kv/store/store.ts";

const WINDOW_MS = 60_000;

/** One name's window, as this process knows it. */
interface Count {
  window: number;
  /** What every process had claimed of the window at this process's last claim. */
  claimed: number;
  /** What this process claimed and has not admitted yet, and what its last claim won. */
  left: number;
  won: number;
  claiming: Promise<void> | null;
}

export interface Verdict {
  allowed: boolean;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetIn: number;
}

/**
 * A fixed one-minute window per name (a token, an incoming webhook), aligned to the clock and
 * shared by every instance on the store. An instance admits requests from a share of the window
 * it claimed in KV: half of what is still unclaimed, so others always find some left, claimed
 * again in the background when half of it is spent. Claims are compare-and-set, so all instances
 * together never admit more than the limit, and a single instance, which ends up claiming it
 * all, admits exactly the limit. A request waits for a commit only when its instance's share ran
 * out before the next claim landed.
 */
export class RateLimiter {
  readonly #counts = new Map<string, Count>();

  constructor(private readonly kv: Store, readonly limit: number) {}

  /** Counts one request of `name` if the window allows it. */
  async hit(name: string, now = Date.now()): Promise<Verdict> {
    const window = Math.floor(now / WINDOW_MS);
    const c = this.#count(name, window);
    // Requests that waited together for a claim may spend it before this one: claim again.
    while (c.left === 0 && c.claimed < this.limit) await this.#claim(name, c);
    const allowed = c.left > 0;
    if (allowed) c.left--;
    if (c.left <= c.won / 2 && c.claimed < this.limit) void this.#claim(name, c).catch(() => {});
    return {
      allowed,
      remaining: this.limit - c.claimed + c.left,
      resetIn: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)),
    };
  }

  /** Waits for the claims still under way (made in the background as shares run low). */
  close(): Promise<void> {
    return Promise.all([...this.#counts.values()].map((c) => c.claiming)).then(() => {});
  }

  #count(name: string, window: number): Count {
    let c = this.#counts.get(name);
    if (!c || c.window !== window) {
      if (this.#counts.size > 10_000) this.#forgetBefore(window);
      c = { window, claimed: 0, left: 0, won: 0, claiming: null };
      this.#counts.set(name, c);
    }
    return c;
  }

  #forgetBefore(window: number) {
    for (const [name, c] of this.#counts) if (c.window < window) this.#counts.delete(name);
  }

  /** Claims half of what is unclaimed (at least one), one claim per name at a time. */
  #claim(name: string, c: Count): Promise<void> {
    c.claiming ??= claimRequests(
      this.kv,
      c.window,
      name,
      (claimed) => claimed >= this.limit ? 0 : Math.ceil((this.limit - claimed) / 2),
    ).then(({ claimed, won }) => {
      c.claimed = claimed;
      c.left += won;
      c.won = won;
    }).finally(() => c.claiming = null);
    return c.claiming;
  }
}
