import type { DeliveryJob } from "../core/webhook_records.ts";
import type { Dispatcher } from "../core/dispatcher.ts";
import { errorFields, log } from "../core/log.ts";
import type { Store } from "../kv/store/store.ts";
import { unlease } from "../kv/outbox/leases.ts";
import type { Work } from "../kv/outbox/handed_share.ts";
import { Peers } from "./peers.ts";

/**
 * How long a first attempt waits for this process's room before any process may take it: long
 * enough for a burst to pass, short enough that another instance delivers it within the 2 s a
 * busy instance's posts are promised (decisions.md, "Several processes on one store"), with the
 * 250 ms its engines take to hear the delivery signal.
 */
const WAIT_HERE_MS = 500;

/** How often, at most, waiting first attempts are looked over. */
const LOOK_EVERY_MS = 100;

interface Waiting {
  job: Work<DeliveryJob>;
  since: number;
}

/**
 * First attempts of this process's commits that found the window full: they wait in their events'
 * handed-jobs records, durable and leased to this process, and only as a reference here, in order
 * per subscription, until their subscription has room. A burst that outruns delivery for a moment
 * is then not written into the post's commit as a job and a count per subscription, to be pulled
 * back through leases at twice the store's pages a delivery. Those that waited WAIT_HERE_MS while
 * another instance runs, or whose record's lease would run out before they could be attempted,
 * become free jobs, pulled by whichever engine has room (the other instance, when this one stays
 * full). Alone, freeing them would only cost this engine a commit each way.
 */
export class WaitingFirstAttempts {
  readonly #lanes = new Map<string, Waiting[]>();
  #size = 0;
  #lookedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #peers: Peers;

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
      /** Whether a timer may look over them (none on Deno Deploy: the next commit or room does). */
      timers: boolean;
      /** Whether another instance could take freed ones; by default, as delivery/peers.ts sees. */
      othersRun?: () => boolean;
    },
  ) {
    this.#peers = new Peers(deps.kv);
  }

  /** Whether one more may wait. */
  get roomy(): boolean {
    return this.#size < this.deps.max;
  }

  add(job: Work<DeliveryJob>, now = Date.now()): void {
    const id = job.value.subscription_id;
    const lane = this.#lanes.get(id);
    const waiting = { job, since: now };
    if (lane) lane.push(waiting);
    else this.#lanes.set(id, [waiting]);
    this.#size++;
    this.#lookLater();
  }

  /** Hands what has room now to the dispatcher; those that waited long enough go free. */
  feed(now = Date.now()): void {
    if (now - this.#lookedAt >= LOOK_EVERY_MS) this.#freeWaitedOut(now);
    const { dispatcher, submit } = this.deps;
    for (const [id, lane] of this.#lanes) {
      let n = 0;
      // Job move "feed" (core/job_states.ts).
      while (n < lane.length && dispatcher.room(id) >= 1) submit(lane[n++].job);
      lane.splice(0, n);
      this.#size -= n;
      if (lane.length === 0) this.#lanes.delete(id);
    }
    if (this.#size > 0) this.#lookLater();
  }

  /** Everything still waiting, taken out (the engine stops: it frees them). */
  takeAll(): Work<DeliveryJob>[] {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const all = [...this.#lanes.values()].flat().map((w) => w.job);
    this.#lanes.clear();
    this.#size = 0;
    return all;
  }

  /** A look once the oldest may have waited out, should no room or commit come first. */
  #lookLater() {
    if (!this.deps.timers || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.feed();
    }, WAIT_HERE_MS);
  }

  /**
   * Those that waited WAIT_HERE_MS while another instance runs, or whose lease runs short, become
   * free jobs, in one commit per record, with the delivery signal every engine hears.
   */
  #freeWaitedOut(now: number) {
    this.#lookedAt = now;
    const out: Work<DeliveryJob>[] = [];
    // Job move "wait_out" (core/job_states.ts). Alone on the store, a freed job would come back
    // to this engine through the store: it stays.
    const othersRun = this.deps.othersRun?.() ?? this.#peers.othersRun(now);
    const stays = (w: Waiting) =>
      (!othersRun || now - w.since < WAIT_HERE_MS) &&
      this.deps.covers(w.job.handed!.leaseUntil, now);
    for (const [id, lane] of this.#lanes) {
      const keep: Waiting[] = [];
      for (const w of lane) stays(w) ? keep.push(w) : out.push(w.job);
      if (keep.length === lane.length) continue;
      if (keep.length > 0) this.#lanes.set(id, keep);
      else this.#lanes.delete(id);
    }
    if (out.length === 0) return;
    this.#size -= out.length;
    void unlease(this.deps.kv, out).catch((e) =>
      log.error("delivery: freeing first attempts that waited too long failed", errorFields(e))
    );
  }
}
