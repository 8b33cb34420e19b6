import type { Delivery } from "../../core/webhook_records.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** Delivery records kept per subscription: the slots of its ring. */
export const DELIVERY_SLOTS = 100;

/** Newest first: ids are UUIDv7. */
const newestFirst = (a: Delivery, b: Delivery) => a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

/** The records in a subscription's ring of slots (kv/keys.ts), in no order. */
async function ringRecords(kv: Store, subscriptionId: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for await (const e of kv.list<Delivery>({ prefix: keys.deliverySlots(subscriptionId) })) {
    out.push(e.value);
  }
  return out;
}

/**
 * A subscription's most recent attempts, newest first, from both layouts: the ring of slots and
 * the records keyed by id, which a store keeps until the ring has taken their place.
 */
export async function recentDeliveries(
  kv: Store,
  subscriptionId: string,
  limit: number,
): Promise<Delivery[]> {
  const byId: Delivery[] = [];
  const entries = kv.list<Delivery>({ prefix: keys.deliveries(subscriptionId) }, {
    reverse: true,
    limit,
  });
  for await (const e of entries) byId.push(e.value);
  const ring = await ringRecords(kv, subscriptionId);
  return [...ring, ...byId].sort(newestFirst).slice(0, limit);
}

/** One attempt of a subscription's, by id, in either layout. */
export async function getDelivery(kv: Store, subscriptionId: string, deliveryId: string) {
  const byId = (await kv.get<Delivery>(keys.delivery(subscriptionId, deliveryId))).value;
  if (byId) return byId;
  return (await ringRecords(kv, subscriptionId)).find((d) => d.id === deliveryId) ?? null;
}

/** Records pruned in one commit at most. */
const PRUNE_BATCH = 500;

/**
 * Deletes a subscription's records keyed by id (what releases before 0.32.0 wrote, and 0.31.0
 * beside it in a rolling deploy) that are not among its 100 newest of both layouts, reading both
 * only while any such record is left. The commit sums and checks the pruned count, which 0.31.0
 * prunes by (written - pruned), so neither deletes what the other counted as kept. Returns how
 * many it deleted.
 */
export async function pruneById(kv: Store, subscriptionId: string): Promise<number> {
  const pruned = await kv.get<Deno.KvU64>(keys.deliveriesPruned(subscriptionId));
  const byId: string[] = [];
  for await (const e of kv.list({ prefix: keys.deliveries(subscriptionId) })) {
    byId.push(e.key[2] as string);
  }
  if (byId.length === 0) return 0;
  const ids = [...byId, ...(await ringRecords(kv, subscriptionId)).map((d) => d.id)];
  if (ids.length <= DELIVERY_SLOTS) return 0;
  const oldestKept = ids.sort().at(-DELIVERY_SLOTS)!;
  const stale = byId.filter((id) => id < oldestKept).slice(0, PRUNE_BATCH);
  if (stale.length === 0) return 0;
  const op = kv.atomic().check(pruned)
    .sum(keys.deliveriesPruned(subscriptionId), BigInt(stale.length));
  for (const id of stale) op.delete(keys.delivery(subscriptionId, id));
  return (await op.commit()).ok ? stale.length : 0;
}
