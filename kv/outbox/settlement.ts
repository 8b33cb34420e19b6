import type { Delivery, DeliveryJob, Subscription } from "../../core/webhook_records.ts";
import { addAudit, type AuditDraft } from "../audit.ts";
import { markFailed } from "./failed_events.ts";
import { keys } from "../keys.ts";
import { countSettled, retry, settle as settleEntry } from "./job_moves.ts";
import { putRoute } from "../routes.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";
import { DELIVERY_SLOTS } from "./deliveries.ts";
import type { HandedShare, Work } from "./handed_share.ts";

/** Wakes the engine when a job's next attempt is due. */
export interface RetryQueued {
  kind: "retry";
  subscription_id: string;
  event_id: string;
  attempt: number;
}

/** A job or redelivery an attempt settles: deleted, or moved to its next attempt. */
export interface Settlement {
  pending: Work;
  retry?: { job: DeliveryJob; delayMs: number };
  /** Whether the attempt that settles it succeeded: recover re-sends what never did. */
  succeeded: boolean;
  /**
   * Whether the commit checks it is unchanged. A job this process holds the lease of for a while
   * yet needs none: nobody else writes it meanwhile, but with a change to the subscription too,
   * which the commit checks anyway.
   */
  checked: boolean;
}

/** Everything some attempts of one subscription change, written by `commitAttempt`. */
export interface AttemptCommit {
  /** The subscription as last known (checked), and what it becomes. */
  subscription: Deno.KvEntry<Subscription>;
  next: Subscription;
  deliveries: Delivery[];
  /** Each checked one that changed meanwhile makes the commit fail. */
  settle: Settlement[];
  audit?: AuditDraft;
  /**
   * The streak reached half the limit, or disabled the subscription, in this commit (one commit
   * makes each transition): its people are told once it landed, with the last failed attempt.
   */
  trouble?: { stage: "half" | "disabled"; last: Delivery };
}

/**
 * The one commit after attempts of some subscriptions (each once): their Delivery records, each
 * subscription's stats (and route, when the status changes), and each job deleted or moved to
 * its next attempt with the queue message that will wake it. Null on a conflict: re-read and try
 * again.
 */
export async function commitAttempts(kv: Store, cs: AttemptCommit[]): Promise<string | null> {
  const op = kv.atomic();
  const handed = new Map<HandedShare, string[]>();
  for (const c of cs) addAttempt(kv, op, c, handed);
  // Each record once, whatever number of its first attempts the commit settles.
  const taken = [...handed].map(([share, ids]) => ({ share, next: share.takeOut(op, ids) }));
  const res = await op.commit();
  if (!res.ok) return null;
  for (const { share, next } of taken) share.landed(next, res.versionstamp);
  return res.versionstamp;
}

/**
 * One subscription's part of `commitAttempts`; first attempts settled out of a handed-jobs record
 * are gathered in `handed`, by record.
 */
function addAttempt(
  kv: Store,
  op: Plan,
  c: AttemptCommit,
  handed: Map<HandedShare, string[]>,
): void {
  const sub = c.next;
  op.check(c.subscription).set(keys.webhook(sub.id), sub);
  if (sub.status !== c.subscription.value.status) {
    putRoute(op, sub);
  }
  putInSlots(op, c);
  let settled = 0n;
  for (const s of c.settle) {
    if (s.pending.handed) takeOutOfRecord(op, sub.id, s, handed);
    else if (s.checked) op.check(s.pending);
    if (s.retry) scheduleRetry(kv, op, s.pending, s.retry);
    else if (!s.pending.handed) settled += settle(op, sub.id, s);
  }
  countSettled(op, sub.id, settled);
  if (c.audit) addAudit(op, c.audit);
}

/**
 * The commit's Delivery records, each in the slot after the last the subscription was written
 * to, as its checked value counts them: each replaces the record 100 before it, in place, so a
 * subscription never holds more than 100 and no commit reads or deletes old ones.
 */
function putInSlots(op: Plan, c: AttemptCommit) {
  const first = c.subscription.value.records_written ?? 0;
  // The recorder's commits carry 20 a subscription at most; more would set a slot twice, so only
  // the newest 100 are written.
  const newest = Math.max(0, c.deliveries.length - DELIVERY_SLOTS);
  for (let i = newest; i < c.deliveries.length; i++) {
    op.set(keys.deliverySlot(c.next.id, (first + i) % DELIVERY_SLOTS), c.deliveries[i]);
  }
}

/**
 * A first attempt settled out of its handed-jobs record (the record is written once per commit,
 * see `commitAttempts`).
 */
function takeOutOfRecord(
  op: Plan,
  subscriptionId: string,
  { pending, retry, succeeded }: Settlement,
  handed: Map<HandedShare, string[]>,
): void {
  handed.set(pending.handed!, [...handed.get(pending.handed!) ?? [], subscriptionId]);
  if (!retry && !succeeded) markFailed(op, subscriptionId, pending.value.event_id);
}

/**
 * A job or redelivery done with, deleted (job move "settle", core/job_states.ts). Returns how many
 * jobs it settled (0 or 1).
 */
function settle(op: Plan, subscriptionId: string, { pending, succeeded }: Settlement): bigint {
  const jobs = settleEntry(op, pending.key);
  if (jobs === 0n) {
    if (succeeded) op.delete(keys.failedEvent(subscriptionId, pending.value.event_id));
    return 0n;
  }
  // A job given up is failed for good, until a redelivery of its event succeeds.
  if (!succeeded) markFailed(op, subscriptionId, pending.value.event_id);
  return jobs;
}

/**
 * A job moved to its next attempt (job move "retry", core/job_states.ts), with the queue message
 * that will wake it. A first attempt out of a handed-jobs record has no job row yet: its retry is a
 * job of its own, counted as made.
 */
function scheduleRetry(
  kv: Store,
  op: Plan,
  pending: Work,
  { job, delayMs }: NonNullable<Settlement["retry"]>,
): void {
  retry(op, { key: pending.key, handed: pending.handed !== undefined }, job);
  if (!kv.queues) return;
  const wake: RetryQueued = {
    kind: "retry",
    subscription_id: job.subscription_id,
    event_id: job.event_id,
    attempt: job.attempt,
  };
  const lost = keys.undelivered(`${job.subscription_id}/${job.event_id}`);
  op.enqueue(wake, { delay: delayMs, keysIfUndelivered: [lost] });
}

/**
 * Deletes a job or redelivery that can no longer be attempted, if it is still as read; takes a
 * first attempt out of its handed-jobs record.
 */
export async function dropIfUnchanged(kv: Store, entry: Work): Promise<void> {
  if (entry.handed) return await entry.handed.drop(kv, [entry.value.subscription_id]);
  const op = kv.atomic().check(entry);
  countSettled(op, entry.value.subscription_id, settleEntry(op, entry.key));
  await op.commit();
}
