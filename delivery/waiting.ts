import type { DeliveryJob } from "../core/webhook_records.ts";
import type { Dispatcher } from "../core/dispatcher.ts";
import { errorFields, log } from "../core/log.ts";
import type { Store } from "../kv/store.ts";
import { unlease } from "../kv/leases.ts";
import type { Work } from "../kv/handed_share.ts";

/** How often, at most, waiting first attempts are looked over for leases running short. */
const LOOK_EVERY_MS = 1_000;

/**
 * First attempts of this process's commits that found the window full: they wait in their events'
 * handed-jobs records, durable and leased to this process, and only as a reference here, in order
 * per subscription, until their subscription has room. A burst that outruns delivery for a moment
 * is then not written into the post's commit as a job and a count per subscription, to be pulled
 * back through leases at twice the store's pages a delivery. Those whose record's lease would run
 * out before they could be attempted become free jobs, pulled like any other backlog.
 */
export class WaitingFirstAttempts {
  readonly #lanes = new Map<string, Work<DeliveryJob>[]>();
  #size = 0;
  #lookedAt = 0;

  constructor(
    private readonly deps: {
      kv: Store;
      dispatcher: Dispatcher;
      /** How many may wait at once. */
      max: number;
      /** Whether a lease until then still covers an attempt started now. */
      covers: (leaseUntil: number, now: number) => boolean;
      /** Hands one to the dispatcher, with room checked. */
      submit: (job: Work<DeliveryJob>) => void;
    },
  ) {}

  /** Whether one more may wait. */
  get roomy(): boolean {
    return this.#size < this.deps.max;
  }

  add(job: Work<DeliveryJob>): void {
    const id = job.value.subscription_id;
    const lane = this.#lanes.get(id);
    if (lane) lane.push(job);
    else this.#lanes.set(id, [job]);
    this.#size++;
  }

  /** Hands what has room now to the dispatcher. */
  feed(now = Date.now()): void {
    if (now - this.#lookedAt >= LOOK_EVERY_MS) this.#freeRunningShort(now);
    const { dispatcher, submit } = this.deps;
    for (const [id, lane] of this.#lanes) {
      let n = 0;
      while (n < lane.length && dispatcher.room(id) >= 1) submit(lane[n++]);
      lane.splice(0, n);
      this.#size -= n;
      if (lane.length === 0) this.#lanes.delete(id);
    }
  }

  /** Everything still waiting, taken out (the engine stops: it frees them). */
  takeAll(): Work<DeliveryJob>[] {
    const all = [...this.#lanes.values()].flat();
    this.#lanes.clear();
    this.#size = 0;
    return all;
  }

  /** Those whose lease runs short become free jobs, in one commit per record. */
  #freeRunningShort(now: number) {
    this.#lookedAt = now;
    const short: Work<DeliveryJob>[] = [];
    for (const [id, lane] of this.#lanes) {
      const keep: Work<DeliveryJob>[] = [];
      for (const j of lane) (this.deps.covers(j.handed!.leaseUntil, now) ? keep : short).push(j);
      if (keep.length === lane.length) continue;
      if (keep.length > 0) this.#lanes.set(id, keep);
      else this.#lanes.delete(id);
    }
    if (short.length === 0) return;
    this.#size -= short.length;
    void unlease(this.deps.kv, short).catch((e) =>
      log.error("delivery: freeing first attempts that waited too long failed", errorFields(e))
    );
  }
}
