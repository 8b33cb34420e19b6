import type { OutboxEvent } from "../../core/types.ts";
import type { Redelivery, Subscription } from "../../core/webhook_records.ts";
import { commitOrThrow } from "../store/commit.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import { signal } from "./job_moves.ts";
import type { Store } from "../store/store.ts";

/** Wakes the engine for a redelivery asked for by hand. */
export interface RedeliveryQueued {
  kind: "redeliver";
  subscription_id: string;
  redelivery_id: string;
}

/**
 * Records a redeliver request and wakes the engine for it, provided the subscription is still
 * as read (active). False when it changed since.
 */
export async function insertRedelivery(
  kv: Store,
  subscription: Deno.KvEntry<Subscription>,
  redelivery: Redelivery,
  /** An event made for this one attempt (a test ping), written with it. */
  event?: OutboxEvent,
): Promise<boolean> {
  const key = keys.redelivery(redelivery.subscription_id, redelivery.id);
  const wake: RedeliveryQueued = {
    kind: "redeliver",
    subscription_id: redelivery.subscription_id,
    redelivery_id: redelivery.id,
  };
  const op = kv.atomic().check(subscription).set(key, redelivery).wake(redelivery.subscription_id);
  signal(op);
  if (event) op.set(keys.event(event.id), event, { expireIn: EVENT_TTL_MS });
  if (kv.queues) {
    op.enqueue(wake, { keysIfUndelivered: [keys.undelivered(redelivery.id)] });
  }
  return (await op.commit()).ok;
}

/**
 * Records many redeliveries of one subscription at once (a recover), and wakes the engines. Not
 * checked against the subscription: one deleted or disabled meanwhile drops them unattempted.
 */
export async function insertRedeliveries(
  kv: Store,
  subscriptionId: string,
  redeliveries: Redelivery[],
): Promise<void> {
  const op = kv.atomic().wake(subscriptionId);
  signal(op);
  for (const r of redeliveries) op.set(keys.redelivery(subscriptionId, r.id), r);
  await commitOrThrow(op, "recover");
}

/** A subscription's pending redeliveries. */
export function listRedeliveries(kv: Store, subscriptionId: string) {
  return kv.list<Redelivery>({ prefix: keys.redeliveries(subscriptionId) });
}
