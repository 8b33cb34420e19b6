import { pruneBeyond, pruneDeliveries } from "../kv/deliveries.ts";
import { clearUndelivered, listSubscriptionIds } from "../kv/backlog.ts";
import type { Store } from "../kv/store.ts";

/** Delivery records kept per subscription; older ones are pruned. */
export const KEEP_DELIVERIES = 100;

export interface SweepTarget {
  kv: Store;
  /** Subscriptions with new Delivery records since the last sweep; emptied by the sweep. */
  touched: Set<string>;
  /**
   * Subscriptions whose records the next sweep counts one by one: every one at start (`all`),
   * and those whose counts a sweep could not set (they moved meanwhile).
   */
  uncounted: { all: boolean; ids: Set<string> };
}

/**
 * Housekeeping after a pull has looked over everything pending: forgets queue messages the queue
 * gave up on (their work is found by pulls anyway), and prunes old Delivery records. Those of the
 * subscriptions attempted lately go by their counts; the uncounted are counted one by one, which
 * sets the counts where a release before 0.29.0 wrote records without them. Counting them all every
 * 30 s read 100-110 records of each subscription attempted lately, a hundred subscriptions' in a
 * row, on the store's one thread that a post's commit waits for too.
 */
export async function sweep(t: SweepTarget): Promise<void> {
  const touched = [...t.touched];
  t.touched.clear();
  await clearUndelivered(t.kv);
  const { uncounted } = t;
  if (uncounted.all) {
    uncounted.all = false;
    for (const id of await listSubscriptionIds(t.kv)) uncounted.ids.add(id);
  }
  for (const id of touched) {
    if (!uncounted.ids.has(id)) await pruneBeyond(t.kv, id, KEEP_DELIVERIES);
  }
  for (const id of [...uncounted.ids]) {
    if (await pruneDeliveries(t.kv, id, KEEP_DELIVERIES) !== null) uncounted.ids.delete(id);
  }
}
