import { pruneBeyond, reconcileCounts } from "../kv/deliveries.ts";
import { clearUndelivered, listSubscriptionIds } from "../kv/backlog.ts";
import type { Store } from "../kv/store.ts";

/** Delivery records kept per subscription; older ones are pruned. */
export const KEEP_DELIVERIES = 100;

export interface SweepTarget {
  kv: Store;
  /** Subscriptions with new Delivery records since the last sweep; emptied by the sweep. */
  touched: Set<string>;
  /** Subscriptions whose record counts this process found right: pruned by the counts alone. */
  counted: Set<string>;
}

/**
 * Housekeeping after a pull has looked over everything pending: forgets queue messages the queue
 * gave up on (their work is found by pulls anyway), and prunes old Delivery records.
 * `everything`: prune every subscription, not only those attempted lately. A subscription's
 * records are counted one by one only until this process found its counts right; from then on
 * the counts alone say what to prune, so a sweep costs what it deletes, not every record kept.
 */
export async function sweep(t: SweepTarget, opts: { everything: boolean }): Promise<void> {
  const touched = [...t.touched];
  t.touched.clear();
  await clearUndelivered(t.kv);
  const ids = opts.everything ? await listSubscriptionIds(t.kv) : touched;
  for (const id of ids) {
    if (!t.counted.has(id) && await reconcileCounts(t.kv, id)) t.counted.add(id);
    while (await pruneBeyond(t.kv, id, KEEP_DELIVERIES) > 0);
  }
}
