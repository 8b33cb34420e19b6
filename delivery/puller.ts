import { errorFields, log } from "../core/log.ts";
import type { DeliveryJob, Redelivery } from "../core/webhook_records.ts";
import { type JobRange, listJobs, listSubscriptionIds } from "../kv/outbox/backlog.ts";
import { expandHanded } from "../kv/outbox/handed_jobs.ts";
import { isFree, type Leasable } from "../kv/outbox/job_moves.ts";
import { listRedeliveries, type RedeliveryQueued } from "../kv/outbox/redeliveries.ts";
import type { RetryQueued } from "../kv/outbox/settlement.ts";
import { keys } from "../kv/keys.ts";
import type { Dispatcher } from "../core/dispatcher.ts";
import type { Leases } from "./leases.ts";
import type { Store } from "../kv/store/store.ts";

/** Entries read past per subscription and pull, looking for due, free jobs. */
const SCAN_LIMIT = 500;
/** Entries listed per round trip at least. */
const MIN_PAGE = 32;
/** A backlogged subscription is pulled again once this many of its jobs fit (fewer reads). */
const PULL_BATCH = 16;

/** The dispatcher's key of a job: one job of an event and subscription at a time. */
export const jobKey = (subscriptionId: string, eventId: string) =>
  `job/${subscriptionId}/${eventId}`;
export const due = (job: DeliveryJob) => Date.parse(job.next_attempt_at);
/** Never early: a retry waits its full backoff, and a receiver's Retry-After. */
export const isDue = (job: DeliveryJob, now: number) => due(job) <= now;

const lane = (e: Deno.KvEntry<Leasable>) => e.value.subscription_id;

export type PullScope = "backlog" | "all";

export interface PullerDeps {
  kv: Store;
  dispatcher: Dispatcher;
  leases: Leases;
  laneWindow: number;
  submitJob(job: Deno.KvEntry<DeliveryJob>, reserved: boolean): void;
  submitRedelivery(entry: Deno.KvEntry<Redelivery>, reserved: boolean): void;
  /** Something seen in KV becomes workable at `at` (a retry falls due, a lease runs out). */
  wakeAt(at: number): void;
  /** Reads the events of work about to be attempted, in as few round trips as fit. */
  preload(eventIds: string[]): Promise<void>;
}

/**
 * Takes due, free work from KV into this process's window: subscription by subscription, under
 * leases, one pull at a time, and on through a backlog as the window empties.
 */
export class Puller {
  /** Subscriptions whose pending work did not all fit at the last pull, and where to read on. */
  readonly backlogged = new Set<string>();
  /**
   * Of those, the ones where due, free work was found that had no room (the rest only had more to
   * read through): the work a stall would leave waiting (see StallWatch).
   */
  readonly unfit = new Set<string>();
  readonly #cursors = new Map<string, Deno.KvKey>();
  #turn = 0;
  #pulling: Promise<void> | null = null;
  #again: PullScope | null = null;
  #stopped = false;
  readonly #stopRoom: () => void;

  constructor(private readonly deps: PullerDeps) {
    // A backlog is pulled on as the window empties, not only when someone signals.
    const refillAt = Math.max(1, Math.min(PULL_BATCH, Math.floor(deps.laneWindow / 2)));
    this.#stopRoom = deps.dispatcher.onRoom(() => {
      for (const id of this.backlogged) {
        if (deps.dispatcher.room(id) >= refillAt) return void this.request("backlog");
      }
    });
  }

  /** The pull under way, if any. */
  get pulling(): Promise<void> | null {
    return this.#pulling;
  }

  /**
   * Pulls over every subscription (and its redeliveries), or over the backlogged ones. One pull
   * at a time; asking during one runs one more after it, over everything if any asked so.
   */
  request(scope: PullScope): Promise<void> {
    if (this.#pulling) {
      if (this.#again !== "all") this.#again = scope;
      return this.#pulling;
    }
    this.#pulling = (async () => {
      let next: PullScope | null = scope;
      while (next) {
        if (next === "all") await this.#expandHanded();
        const ids = next === "all" ? await listSubscriptionIds(this.deps.kv) : [...this.backlogged];
        await this.#pull(ids, next === "all");
        [next, this.#again] = [this.#again, null];
      }
    })().catch((e) => log.error("delivery: a pull failed", errorFields(e)))
      .finally(() => {
        this.#pulling = null;
        // Asked for after the loop last looked and before this ran (an attempt that finished in
        // between freed room): served now, or nothing would pull for it until the stall watch.
        const again = this.#again;
        this.#again = null;
        if (again && !this.#stopped) void this.request(again);
      });
    return this.#pulling;
  }

  /**
   * Leases what was found and hands what it won to the dispatcher (see `#take`); resolves with
   * how many had no room.
   */
  takeJobs(found: Deno.KvEntry<DeliveryJob>[]): Promise<number> {
    return this.#take(found, (job, reserved) => this.deps.submitJob(job, reserved));
  }

  takeRedeliveries(found: Deno.KvEntry<Redelivery>[]): Promise<number> {
    return this.#take(found, (e, reserved) => this.deps.submitRedelivery(e, reserved));
  }

  /** A queue message's job or redelivery, when it is still as the message says. */
  async takeQueued(message: RetryQueued | RedeliveryQueued): Promise<void> {
    const { kv } = this.deps;
    if (message.kind === "retry") {
      const job = await kv.get<DeliveryJob>(keys.job(message.subscription_id, message.event_id));
      if (job.versionstamp === null || job.value.attempt !== message.attempt) return;
      if (!isDue(job.value, Date.now())) return;
      await this.takeJobs([job as Deno.KvEntry<DeliveryJob>]);
      return;
    }
    const key = keys.redelivery(message.subscription_id, message.redelivery_id);
    const entry = await kv.get<Redelivery>(key);
    if (entry.versionstamp === null) return;
    await this.takeRedeliveries([entry as Deno.KvEntry<Redelivery>]);
  }

  /** Takes a subscription's pending redeliveries now. */
  async pullRedeliveries(id: string): Promise<void> {
    const found: Deno.KvEntry<Redelivery>[] = [];
    for await (const e of listRedeliveries(this.deps.kv, id)) {
      if (!this.deps.dispatcher.has(`redelivery/${e.value.id}`)) found.push(e);
    }
    await this.takeRedeliveries(found);
  }

  stop(): void {
    this.#stopped = true;
    this.#stopRoom();
  }

  /**
   * First attempts whose process let their lease run out become free jobs, pulled below like any
   * other; the engine wakes when the next such lease runs out.
   */
  async #expandHanded() {
    const { nextAt } = await expandHanded(this.deps.kv);
    if (nextAt !== null) this.deps.wakeAt(nextAt);
  }

  /** Pulls for `ids`, starting at a different one each time so none is always last. */
  async #pull(ids: string[], redeliveries: boolean) {
    const start = this.#turn++ % Math.max(1, ids.length);
    for (const id of [...ids.slice(start), ...ids.slice(0, start)]) {
      const more = await this.#pullSubscription(id, redeliveries);
      if (more) this.backlogged.add(id);
      else this.backlogged.delete(id);
      if (more === "unfit") this.unfit.add(id);
      else this.unfit.delete(id);
      if (redeliveries) await this.pullRedeliveries(id);
    }
  }

  /**
   * Leases what fits of one subscription's due, free jobs. Whether more may be waiting: "unfit"
   * when due work filled the room (or found none), "scan" when only the scan stopped short.
   */
  async #pullSubscription(id: string, fromStart: boolean): Promise<"unfit" | "scan" | false> {
    const { kv, dispatcher, wakeAt } = this.deps;
    const room = dispatcher.room(id);
    if (room < 1) return this.unfit.has(id) ? "unfit" : "scan";
    if (fromStart) this.#cursors.delete(id);
    const now = Date.now();
    const found: Deno.KvEntry<DeliveryJob>[] = [];
    let more: "unfit" | "scan" | false = false;
    // A page a little larger than the room: each entry listed is decoded, wanted or not.
    const page = Math.max(MIN_PAGE, 2 * room);
    // From where the last scan stopped, then, if that reached the end, from the start up to
    // that place: a job is met once a pull, or its room would be promised to it twice.
    const cursor = this.#cursors.get(id);
    const ranges: JobRange[] = cursor ? [{ after: cursor }, { through: cursor }] : [{}];
    for (const range of ranges) {
      let scanned = 0;
      let last: Deno.KvKey | null = null;
      for await (const e of listJobs(kv, id, range, { limit: SCAN_LIMIT, batchSize: page })) {
        scanned++;
        last = e.key;
        if (dispatcher.has(jobKey(id, e.value.event_id))) continue;
        if (!isDue(e.value, now)) {
          wakeAt(due(e.value));
          continue;
        }
        if (!isFree(e, now)) {
          // Another process holds it; if that process is gone, the lease runs out then.
          wakeAt(e.value.lease_until!);
          continue;
        }
        found.push(e);
        if (found.length >= room) break;
      }
      if (found.length >= room) {
        // A backlog is taken in order: the next pull goes on after what this one took, rather
        // than reading again past the jobs this process holds.
        more = "unfit";
        this.#cursors.set(id, found.at(-1)!.key);
        break;
      }
      if (scanned === SCAN_LIMIT && last) {
        // Too much to skip over in one go: go on from here next time.
        this.#cursors.set(id, last);
        more = "scan";
        break;
      }
      this.#cursors.delete(id);
    }
    const unfit = await this.takeJobs(found);
    return unfit > 0 ? "unfit" : more;
  }

  /**
   * Leases what was found in KV and hands what it won to the dispatcher. Room is reserved before
   * the lease is taken: a lease this process won but had no room for would keep every process
   * off the job until it ran out. The events are read meanwhile, a batch at a time.
   *
   * Every reservation is used by one submit or given back, whatever the lease found or threw:
   * one left over holds its room for good, and enough of them stop the puller (issue 33).
   */
  async #take<T extends Leasable>(
    found: Deno.KvEntry<T>[],
    submit: (entry: Deno.KvEntry<T>, reserved: boolean) => void,
  ): Promise<number> {
    const { dispatcher, leases } = this.deps;
    const roomy = found.filter((e) => {
      const fits = dispatcher.reserve(lane(e));
      if (!fits) {
        this.backlogged.add(lane(e));
        this.unfit.add(lane(e));
      }
      return fits;
    });
    let won: Deno.KvEntry<T>[] = [];
    try {
      [won] = await Promise.all([
        // Job move "lease" (core/job_states.ts).
        leases.take(roomy),
        // Only saves attempts a read: one that fails reads its event itself.
        this.deps.preload(roomy.map((e) => e.value.event_id)).catch(() => {}),
      ]);
    } finally {
      const unused = new Map<string, number>();
      for (const e of roomy) unused.set(lane(e), (unused.get(lane(e)) ?? 0) + 1);
      for (const e of won) unused.set(lane(e), unused.get(lane(e))! - 1);
      for (const [id, n] of unused) for (let i = 0; i < n; i++) dispatcher.release(id);
    }
    for (const e of won) submit(e, true);
    return found.length - roomy.length;
  }
}
