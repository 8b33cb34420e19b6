/**
 * Attempts this process recorded lately, so that a late or repeated wake-up for one (the queue
 * message of an event the local hook already delivered, a retry message the sweeper beat) is
 * dropped without a read. Bounded, oldest forgotten first: forgetting only costs that read.
 */
export class SettledAttempts {
  readonly #keys = new Set<string>();

  constructor(private readonly max = 50_000) {}

  add(subscriptionId: string, eventId: string, attempt: number): void {
    if (this.#keys.size >= this.max) {
      this.#keys.delete(this.#keys.values().next().value!);
    }
    this.#keys.add(`${subscriptionId}/${eventId}/${attempt}`);
  }

  has(subscriptionId: string, eventId: string, attempt: number): boolean {
    return this.#keys.has(`${subscriptionId}/${eventId}/${attempt}`);
  }
}
