import { pruneDeliveries } from "../kv/deliveries.ts";
import { clearUndelivered, listSubscriptionIds } from "../kv/backlog.ts";
import type { Store } from "../kv/store.ts";

/** Delivery records kept per subscription; older ones are pruned. */
export const KEEP_DELIVERIES = 100;

export interface SweepTarget {
  kv: Store;
  /** Subscriptions with new Delivery records since the last sweep; emptied by the sweep. */
  touched: Set<string>;
}

/**
 * Housekeeping after a pull has looked over everything pending: forgets queue messages the queue
 * gave up on (their work is found by pulls anyway), and prunes old Delivery records.
 * `everything`: prune every subscription, not only those attempted lately.
 */
export async function sweep(t: SweepTarget, opts: { everything: boolean }): Promise<void> {
  const touched = [...t.touched];
  t.touched.clear();
  await clearUndelivered(t.kv);
  const ids = opts.everything ? await listSubscriptionIds(t.kv) : touched;
  for (const id of ids) await pruneDeliveries(t.kv, id, KEEP_DELIVERIES);
}
