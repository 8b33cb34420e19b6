import { log } from "../core/log.ts";
import { deliveryStalls } from "../core/metrics.ts";
import type { Dispatcher } from "../core/dispatcher.ts";
import type { Puller } from "./puller.ts";

export interface StallWatchDeps {
  dispatcher: Dispatcher;
  puller: Puller;
  /** Pulls the backlogged subscriptions again: what mends a stall the window has room for. */
  pull(): void;
}

/**
 * The engine's invariant, read from memory alone: while due work is known to wait (a task in the
 * window not started, or a subscription whose last pull found due work it had no room for),
 * something is under way: an attempt, or a pull. Otherwise nothing in this process takes that
 * work before the next sweep or cron run. Moments where it does not hold are normal (the last
 * attempt just finished and its room is about to be pulled into); a breach seen at two checks in
 * a row, with no room freed between them, is a stall: it is logged, counted
 * (`webhook_delivery_stalls_total`) and met with a pull.
 */
export class StallWatch {
  /** The dispatcher's `freed` at the last check that found a breach. */
  #breachedAt: number | null = null;

  constructor(private readonly deps: StallWatchDeps) {}

  /** Checks the invariant; true when it found a stall. */
  check(): boolean {
    const { dispatcher, puller } = this.deps;
    const idle = dispatcher.running === 0 && puller.pulling === null;
    if (!idle || (dispatcher.waiting === 0 && puller.unfit.size === 0)) {
      this.#breachedAt = null;
      return false;
    }
    if (this.#breachedAt !== dispatcher.freed) {
      this.#breachedAt = dispatcher.freed;
      return false;
    }
    this.#breachedAt = null;
    deliveryStalls.inc();
    const unfit = [...puller.unfit];
    log.warn("delivery: stalled: due work waits and nothing is under way; pulling again", {
      waiting: dispatcher.waiting,
      held: dispatcher.held,
      subscriptions_waiting: unfit.length,
      room: Math.max(0, ...unfit.map((id) => dispatcher.room(id))),
    });
    this.deps.pull();
    return true;
  }
}
