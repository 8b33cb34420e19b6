/**
 * The writes that move a delivery job between its stored states (core/job_states.ts): a job row,
 * an event's handed-jobs record and a subscription's counts of jobs made and settled change here
 * and nowhere else (tests/job_states_test.ts reads the other modules to hold them to it). The
 * module the table names for a move decides when it happens and calls the move here, inside the
 * commit it makes; the states that live only in a process's memory (`waiting`, `in_flight`) are
 * the delivery engine's.
 */
import type { OutboxEvent } from "../../core/types.ts";
import type { DeliveryJob, HandedJobs, Redelivery } from "../../core/webhook_records.ts";
import { keys } from "../keys.ts";

/** What a move writes into: a commit, or a plan. */
export interface MoveWriter {
  check(...checks: Deno.AtomicCheck[]): unknown;
  set(key: Deno.KvKey, value: unknown): unknown;
  sum(key: Deno.KvKey, n: bigint): unknown;
  delete(key: Deno.KvKey): unknown;
}

/** A job or a redelivery: work one process at a time may hold under a lease. */
export type Leasable = DeliveryJob | Redelivery;

/** The job an event starts with for a matching subscription. */
export const firstJob = (
  event: Pick<OutboxEvent, "id" | "created_at">,
  subscriptionId: string,
  leaseUntil: number | null,
  subscriptionVersion: string,
): DeliveryJob => ({
  subscription_id: subscriptionId,
  event_id: event.id,
  attempt: 1,
  next_attempt_at: event.created_at,
  created_at: event.created_at,
  lease_until: leaseUntil,
  subscription_version: subscriptionVersion,
});

/**
 * Job move "enqueue" (and where a handed first attempt leaves its record as a job, "expand",
 * "wait_out" and "retry"): a job row, counted as made in the same commit (pending = created -
 * settled, kv/outbox/backlog.ts).
 */
export function enqueue(op: MoveWriter, job: DeliveryJob): void {
  op.set(keys.job(job.subscription_id, job.event_id), job);
  op.sum(keys.jobsCreated(job.subscription_id), 1n);
}

/**
 * Job moves "hand" and "wait": an event's first attempts leased to the committing process, in one
 * record keyed by when the lease runs out.
 */
export function hand(
  op: MoveWriter,
  { event, jobs, leaseUntil }: {
    event: Pick<OutboxEvent, "id" | "created_at">;
    jobs: DeliveryJob[];
    leaseUntil: number;
  },
): { key: Deno.KvKey; value: HandedJobs } {
  const value: HandedJobs = {
    event_id: event.id,
    created_at: event.created_at,
    lease_until: leaseUntil,
    pending: jobs.map((j) => ({
      subscription_id: j.subscription_id,
      subscription_version: j.subscription_version!,
    })),
  };
  const key = keys.handedJob(leaseUntil, event.id);
  op.set(key, value);
  return { key, value };
}

/**
 * A handed-jobs record without `ids`' first attempts (each one handed, settled, dropped or turned
 * into a job): rewritten with the rest, or deleted with the last, under a check of the record as
 * last known. Returns what it becomes.
 */
export function takeOut(
  op: MoveWriter,
  entry: Deno.KvEntry<HandedJobs>,
  ids: Set<string>,
): HandedJobs | null {
  const rest = entry.value.pending.filter((p) => !ids.has(p.subscription_id));
  op.check(entry);
  if (rest.length === 0) {
    op.delete(entry.key);
    return null;
  }
  const next = { ...entry.value, pending: rest };
  op.set(entry.key, next);
  return next;
}

/**
 * Job move "expand": a record whose lease ran out, gone, and `jobs` (its first attempts whose
 * subscription still exists) free for any engine, with the delivery signal.
 */
export function expand(
  op: MoveWriter,
  entry: Deno.KvEntry<HandedJobs>,
  jobs: DeliveryJob[],
): void {
  op.check(entry);
  op.delete(entry.key);
  for (const job of jobs) enqueue(op, job);
  if (jobs.length > 0) signal(op);
}

/** Tells every engine that free jobs wait (kv/outbox/backlog.ts). */
export function signal(op: MoveWriter): void {
  op.set(keys.deliverySignal(), Date.now());
}

/**
 * Job move "lease": the entry held until `until`, if it is unchanged since it was read. Returns
 * its value as written.
 */
export function lease<T extends Leasable>(
  op: MoveWriter,
  entry: Deno.KvEntry<T>,
  until: number,
): T {
  const next = { ...entry.value, lease_until: until };
  op.check(entry);
  op.set(entry.key, next);
  return next;
}

/**
 * Job move "lapse", at once: an entry its holder will not attempt after all (it stops), free
 * again, if it is unchanged.
 */
export function unlease(op: MoveWriter, entry: Deno.KvEntry<Leasable>): void {
  op.check(entry);
  op.set(entry.key, { ...entry.value, lease_until: null });
}

/**
 * Whether `entry` is free to lease at `now`: nobody holds it, or the holder's lease ran out (job
 * move "lapse", as unlease makes it at once).
 */
export const isFree = (entry: Deno.KvEntry<Leasable>, now: number) =>
  (entry.value.lease_until ?? 0) <= now;

/**
 * Job move "retry": the job at its next attempt. A first attempt out of a handed-jobs record has
 * no row yet: its retry is a job of its own, counted as made.
 */
export function retry(
  op: MoveWriter,
  { key, handed }: { key: Deno.KvKey; handed: boolean },
  job: DeliveryJob,
): void {
  if (handed) enqueue(op, job);
  else op.set(key, job);
}

const isJobKey = (key: Deno.KvKey) => key[0] === keys.jobs()[0];

/**
 * Job moves "settle" and "drop": a job or redelivery done with, deleted. Returns how many jobs it
 * settled (0 or 1), for `countSettled`.
 */
export function settle(op: MoveWriter, key: Deno.KvKey): bigint {
  op.delete(key);
  return isJobKey(key) ? 1n : 0n;
}

/** Counts `n` of a subscription's jobs as settled, once per commit. */
export function countSettled(op: MoveWriter, subscriptionId: string, n: bigint): void {
  if (n > 0n) op.sum(keys.jobsSettled(subscriptionId), n);
}

/**
 * A subscription's counts set so that none is pending (settled as many as were made), whatever
 * raced its jobs' deletes, if `created` is unchanged.
 */
export function settleAll(op: MoveWriter, created: Deno.KvEntryMaybe<Deno.KvU64>, id: string) {
  op.check(created);
  op.set(keys.jobsSettled(id), created.value ?? new Deno.KvU64(0n));
}

/**
 * A subscription's count of jobs made set to what its rows and settled count say, if both counts
 * are unchanged (a store of releases before the counts, or whose counts drifted).
 */
export function recount(
  op: MoveWriter,
  { created, settled, waiting }: {
    created: Deno.KvEntryMaybe<Deno.KvU64>;
    settled: Deno.KvEntryMaybe<Deno.KvU64>;
    waiting: bigint;
  },
): void {
  const made = (settled.value?.value ?? 0n) + waiting;
  op.check(created, settled);
  op.set(created.key, new Deno.KvU64(made));
}
