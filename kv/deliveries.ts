import type { Delivery } from "../core/webhook_records.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store.ts";

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

const u64 = (entry: Deno.KvEntryMaybe<Deno.KvU64>) => entry.value?.value ?? 0n;

/** Records a commit deletes, with the pruned count as read, which the commit checks. */
export interface Pruned {
  keys: Deno.KvKey[];
  count?: Deno.AtomicCheck;
}

/**
 * The keys of a subscription's oldest attempts that a commit adding `adding` more must delete to
 * keep only the `keep` most recent, as its counts tell (written - pruned), reading no more than
 * those: what a commit of records deletes in the same commit. The commit checks the pruned count:
 * a sweep that pruned meanwhile would otherwise leave this list to start past what it deleted,
 * and records of the latest `keep` would go. Subscriptions whose records were written before the
 * counts existed are counted first by the sweeper (`reconcileCounts`).
 */
export async function oldestBeyond(
  kv: Store,
  subscriptionId: string,
  { adding, keep }: { adding: number; keep: number },
): Promise<Pruned> {
  const [written, pruned] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
    keys.deliveriesWritten(subscriptionId),
    keys.deliveriesPruned(subscriptionId),
  ]);
  const excess = Number(u64(written) - u64(pruned)) + adding - keep;
  if (written.versionstamp === null || excess <= 0) return { keys: [] };
  const stale: Deno.KvKey[] = [];
  const oldest = kv.list({ prefix: keys.deliveries(subscriptionId) }, {
    limit: Math.min(excess, PRUNE_BATCH),
  });
  for await (const e of oldest) stale.push(e.key);
  return { keys: stale, count: pruned };
}

/**
 * Deletes a subscription's oldest attempts beyond the `keep` most recent, as its counts tell
 * (written - pruned), without reading the rest: `oldestBeyond` adding none, in a commit that
 * checks the pruned count, so two processes never prune the same records twice. Subscriptions
 * whose records were written before the counts existed are counted first (`reconcileCounts`).
 * Returns how many it deleted.
 */
export async function pruneBeyond(kv: Store, subscriptionId: string, keep: number) {
  const stale = await oldestBeyond(kv, subscriptionId, { adding: 0, keep });
  if (!stale.count || stale.keys.length === 0) return 0;
  const op = kv.atomic().check(stale.count)
    .sum(keys.deliveriesPruned(subscriptionId), BigInt(stale.keys.length));
  for (const key of stale.keys) op.delete(key);
  return (await op.commit()).ok ? stale.keys.length : 0;
}

/**
 * Counts a subscription's attempts by reading them all, and sets its counts to agree where they
 * don't (records releases before 0.29.0 wrote were never counted): what `pruneBeyond` needs, once
 * per subscription and process. False when the counts moved meanwhile (a record written or
 * pruned): count again later.
 */
export async function reconcileCounts(kv: Store, subscriptionId: string): Promise<boolean> {
  const [written, pruned] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
    keys.deliveriesWritten(subscriptionId),
    keys.deliveriesPruned(subscriptionId),
  ]);
  let seen = 0n;
  for await (const _ of kv.list({ prefix: keys.deliveries(subscriptionId) })) seen++;
  if (u64(written) - u64(pruned) === seen) return true;
  const total = u64(written) < seen ? seen : u64(written);
  const set = await kv.atomic().check(written, pruned)
    .set(written.key, new Deno.KvU64(total))
    .set(pruned.key, new Deno.KvU64(total - seen)).commit();
  return set.ok;
}
