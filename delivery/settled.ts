import { RecentMap } from "../domain/recent_map.ts";

/**
 * Attempts this process recorded lately, so that a late or repeated wake-up for one (the queue
 * message of an event the local hook already delivered, a retry message the sweeper beat) is
 * dropped without a read. Bounded, oldest forgotten first: forgetting only costs that read.
 */
export class SettledAttempts {
  readonly #keys: RecentMap<string, true>;

  constructor(max = 50_000) {
    this.#keys = new RecentMap(max);
  }

  add(subscriptionId: string, eventId: string, attempt: number): void {
    this.#keys.set(`${subscriptionId}/${eventId}/${attempt}`, true);
  }

  has(subscriptionId: string, eventId: string, attempt: number): boolean {
    return this.#keys.has(`${subscriptionId}/${eventId}/${attempt}`);
  }
}
