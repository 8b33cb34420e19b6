import type { Delivery, DeliveryJob, Redelivery, Subscription } from "../core/webhook_records.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { markFailed } from "./failed_events.ts";
import { keys } from "./keys.ts";
import { putRoute } from "./routes.ts";
import type { Store } from "./store.ts";
import type { Plan } from "./plan.ts";
import type { Pruned } from "./deliveries.ts";

/** Wakes the engine when a job's next attempt is due. */
export interface RetryQueued {
  kind: "retry";
  subscription_id: string;
  event_id: string;
  attempt: number;
}

/** A job or redelivery an attempt settles: deleted, or moved to its next attempt. */
export interface Settlement {
  pending: Deno.KvEntry<DeliveryJob | Redelivery>;
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
  /**
   * The subscription's oldest Delivery records to delete (see `oldestBeyond`), so that the commit
   * leaves the latest 100, under a check of the pruned count as read: commits of records are
   * serialized by the subscription's check, but a sweep's prune is not.
   */
  prune?: Pruned;
}

/**
 * The one commit after attempts of some subscriptions (each once): their Delivery records, each
 * subscription's stats (and route, when the status changes), and each job deleted or moved to
 * its next attempt with the queue message that will wake it. Null on a conflict: re-read and try
 * again.
 */
export async function commitAttempts(kv: Store, cs: AttemptCommit[]): Promise<string | null> {
  const op = kv.atomic();
  for (const c of cs) addAttempt(kv, op, c);
  const res = await op.commit();
  return res.ok ? res.versionstamp : null;
}

/** One subscription's part of `commitAttempts`. */
function addAttempt(kv: Store, op: Plan, c: AttemptCommit): void {
  const sub = c.next;
  op.check(c.subscription).set(keys.webhook(sub.id), sub);
  if (sub.status !== c.subscription.value.status) {
    putRoute(op, sub);
  }
  for (const d of c.deliveries) op.set(keys.delivery(sub.id, d.id), d);
  if (c.deliveries.length > 0) op.sum(keys.deliveriesWritten(sub.id), BigInt(c.deliveries.length));
  if (c.prune?.keys.length) {
    if (c.prune.count) op.check(c.prune.count);
    for (const key of c.prune.keys) op.delete(key);
    op.sum(keys.deliveriesPruned(sub.id), BigInt(c.prune.keys.length));
  }
  let settled = 0n;
  for (const { pending, retry, succeeded, checked } of c.settle) {
    if (checked) op.check(pending);
    if (!retry) {
      op.delete(pending.key);
      if (isJob(pending)) settled++;
      // A job given up is failed for good, until a redelivery of its event succeeds.
      if (isJob(pending) && !succeeded) markFailed(op, sub.id, pending.value.event_id);
      if (!isJob(pending) && succeeded) op.delete(keys.failedEvent(sub.id, pending.value.event_id));
      continue;
    }
    const wake: RetryQueued = {
      kind: "retry",
      subscription_id: retry.job.subscription_id,
      event_id: retry.job.event_id,
      attempt: retry.job.attempt,
    };
    op.set(pending.key, retry.job);
    if (kv.queues) {
      const lost = keys.undelivered(`${retry.job.subscription_id}/${retry.job.event_id}`);
      op.enqueue(wake, { delay: retry.delayMs, keysIfUndelivered: [lost] });
    }
  }
  if (settled > 0n) op.sum(keys.jobsSettled(sub.id), settled);
  if (c.audit) addAudit(op, c.audit);
}

const isJob = (entry: Deno.KvEntry<unknown>) => entry.key[0] === keys.jobs()[0];

/** Deletes a job or redelivery that can no longer be attempted, if it is still as read. */
export async function dropIfUnchanged(kv: Store, entry: Deno.KvEntry<unknown>): Promise<void> {
  const op = kv.atomic().check(entry).delete(entry.key);
  if (isJob(entry)) op.sum(keys.jobsSettled(entry.key[1] as string), 1n);
  await op.commit();
}
