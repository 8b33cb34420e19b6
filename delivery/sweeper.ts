import {
  clearUndelivered,
  listJobs,
  listRedeliveries,
  listSubscriptionIds,
  pruneDeliveries,
} from "../kv/deliveries.ts";
import type { DeliveryJob } from "../kv/outbox.ts";

/** Delivery records kept per subscription; older ones are pruned. */
export const KEEP_DELIVERIES = 100;

export interface SweepTarget {
  kv: Deno.Kv;
  /** Hands a job or redelivery to the dispatcher, which ignores what it already has. */
  job(entry: Deno.KvEntry<DeliveryJob>): void;
  redelivery(subscriptionId: string, redeliveryId: string): void;
  /** Subscriptions with new Delivery records since the last sweep; emptied by the sweep. */
  touched: Set<string>;
}

/**
 * Re-dispatches what nothing else will: jobs that are due (the process died mid-attempt, or
 * the queue gave up on their message) and redeliveries not yet attempted; then prunes old
 * Delivery records. `graceMs`: leave what became due more recently than this to its own queue
 * message. `everything`: prune every subscription, not only those attempted lately.
 */
export async function sweep(
  t: SweepTarget,
  opts: { graceMs: number; everything: boolean },
): Promise<void> {
  const cutoff = Date.now() - opts.graceMs;
  const touched = [...t.touched];
  t.touched.clear();
  for await (const entry of listJobs(t.kv)) {
    if (Date.parse(entry.value.next_attempt_at) <= cutoff) t.job(entry);
  }
  for await (const { value: r } of listRedeliveries(t.kv)) {
    if (Date.parse(r.created_at) <= cutoff) t.redelivery(r.subscription_id, r.id);
  }
  await clearUndelivered(t.kv);
  const ids = opts.everything ? await listSubscriptionIds(t.kv) : touched;
  for (const id of ids) await pruneDeliveries(t.kv, id, KEEP_DELIVERIES);
}
