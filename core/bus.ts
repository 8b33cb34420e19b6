import { errorFields, log } from "./log.ts";

/**
 * An in-process bus: what one part of the process publishes, every subscriber hears at once, in
 * the order they subscribed. The store publishes what its commits wrote; the delivery engine and
 * the stream hub subscribe at start-up (main.ts). A subscriber that throws is logged and does not
 * keep the others from hearing.
 */
export class Bus<T> {
  readonly #listeners = new Set<(message: T) => void>();

  /** Hears every message published from now on; returns how to stop. */
  subscribe(listener: (message: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(message: T): void {
    for (const listener of this.#listeners) {
      try {
        listener(message);
      } catch (e) {
        log.error("a subscriber to the bus failed", errorFields(e));
      }
    }
  }
}
