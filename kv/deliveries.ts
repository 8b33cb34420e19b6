import type { Delivery } from "../core/webhook_records.ts";
import { keys } from "./keys.ts";
import { commitInBatches } from "./commit.ts";
import type { Store } from "./store.ts";

/** A subscription's most recent attempts, newest first. */
export async function recentDeliveries(
  kv: Store,
  subscriptionId: string,
  limit: number,
): Promise<Delivery[]> {
  const out: Delivery[] = [];
  const entries = kv.list<Delivery>({ prefix: keys.deliveries(subscriptionId) }, {
    reverse: true,
    limit,
  });
  for await (const e of entries) out.push(e.value);
  return out;
}

export async function getDelivery(kv: Store, subscriptionId: string, deliveryId: string) {
  return (await kv.get<Delivery>(keys.delivery(subscriptionId, deliveryId))).value;
}

/** Deletes a subscription's attempts beyond the `keep` most recent. Returns how many. */
export async function pruneDeliveries(
  kv: Store,
  subscriptionId: string,
  keep: number,
): Promise<number> {
  const stale: Deno.KvKey[] = [];
  let seen = 0;
  for await (
    const e of kv.list({ prefix: keys.deliveries(subscriptionId) }, { reverse: true })
  ) {
    if (++seen > keep) stale.push(e.key);
  }
  await commitInBatches(kv, stale, 500, (op, key) => op.delete(key));
  return stale.length;
}
