import { pruneById } from "../kv/outbox/deliveries.ts";
import { clearUndelivered, listSubscriptionIds } from "../kv/outbox/backlog.ts";
import type { Store } from "../kv/store/store.ts";

export interface SweepTarget {
  kv: Store;
  /** Subscriptions with new Delivery records since the last sweep; emptied by the sweep. */
  touched: Set<string>;
}

/**
 * Housekeeping after a pull has looked over everything pending: forgets queue messages the queue
 * gave up on (their work is found by pulls anyway), and prunes the Delivery records that older
 * releases keyed by id beyond the latest 100 (`pruneById`; this release writes a ring of 100 that
 * needs none). `everything`: every subscription, not only those attempted lately.
 */
export async function sweep(t: SweepTarget, opts: { everything: boolean }): Promise<void> {
  const touched = [...t.touched];
  t.touched.clear();
  await clearUndelivered(t.kv);
  const ids = opts.everything ? await listSubscriptionIds(t.kv) : touched;
  for (const id of ids) while (await pruneById(t.kv, id) > 0);
}
