import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

/** How long an event counts as failed for recover: its window (7 days), and a day to spare. */
export const FAILED_KEEP_MS = 8 * 24 * 3_600_000;

/** Marks an event as failed for good to a subscription, for a later recover. */
export function markFailed(op: Plan, subscriptionId: string, eventId: string) {
  op.set(keys.failedEvent(subscriptionId, eventId), { failed_at: new Date().toISOString() }, {
    expireIn: FAILED_KEEP_MS,
  });
}

/** Events failed for good to a subscription whose ids are at or after `fromId`, in id order. */
export function listFailedEvents(kv: Store, subscriptionId: string, fromId: string) {
  const prefix = keys.failedEvents(subscriptionId);
  return kv.list({ prefix, start: [...prefix, fromId] });
}
