import { isFree, type Leasable } from "../kv/outbox/job_moves.ts";
import { lease } from "../kv/outbox/leases.ts";
import type { Store } from "../kv/store/store.ts";
import type { Work } from "../kv/outbox/handed_share.ts";
import type { DeliveryJob } from "../core/webhook_records.ts";

/** Beyond the attempt's own timeout, what a lease leaves for waiting in the window and recording. */
const LEASE_SLACK_MS = 15_000;
/** Less than the timeout and this left, and a lease is renewed before its attempt starts. */
const RENEW_SLACK_MS = 5_000;

/**
 * This process's leases on delivery work. A lease lets one process at a time attempt a job or
 * redelivery: it is taken with a commit that checks the entry as read, so of two processes
 * that found the same work one wins, and it runs out, so work of a process that died is taken
 * up by another.
 */
export class Leases {
  constructor(private readonly kv: Store, private readonly timeoutMs: number) {}

  /** How long a lease lasts. */
  get duration(): number {
    return this.timeoutMs + LEASE_SLACK_MS;
  }

  /** Until when a lease taken at `now` lasts. */
  until(now: number): number {
    return now + this.duration;
  }

  /** Whether a lease until `leaseUntil` covers an attempt started at `now`, and its recording. */
  covers(leaseUntil: number, now: number): boolean {
    return leaseUntil - now >= this.timeoutMs + RENEW_SLACK_MS;
  }

  /** Leases the free ones of `entries`; returns those won, as they now stand. */
  async take<T extends Leasable>(entries: Deno.KvEntry<T>[]): Promise<Deno.KvEntry<T>[]> {
    const now = Date.now();
    const free = entries.filter((e) => isFree(e, now));
    return await lease(this.kv, free, this.until(now)) as Deno.KvEntry<T>[];
  }

  /**
   * The entry, still this process's for long enough to make an attempt: renewed when its lease is
   * short. A first attempt whose handed-jobs record runs out too soon becomes a job of its own,
   * leased afresh. Null when it is no longer ours (someone took it after it ran out, or settled it).
   */
  async keep<T extends Leasable>(entry: Work<T>): Promise<Work<T> | null> {
    const now = Date.now();
    if (this.covers(entry.value.lease_until ?? 0, now)) return entry;
    if (entry.handed) {
      const job = entry.value as DeliveryJob;
      const [own] = await entry.handed.toJobs(this.kv, [job], this.until(now));
      return own as Work<T> | undefined ?? null;
    }
    const [renewed] = await lease(this.kv, [entry], this.until(now));
    return renewed as Deno.KvEntry<T> | undefined ?? null;
  }
}
