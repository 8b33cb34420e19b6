/**
 * Sends asked for by hand, outside the automatic schedule: a test ping, a redelivery of one
 * delivery's event, a recover of what failed for good. Each is one attempt, recorded like any
 * other and never retried, to the owner's URL only.
 */
import { loadWebhook } from "./webhooks.ts";
import type { Ctx } from "../context.ts";
import type { OutboxEvent, Subject } from "../../core/types.ts";
import type { Redelivery, Subscription } from "../../core/webhook_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { type Settled, unwrap } from "../../core/settled.ts";
import { getDelivery } from "../../kv/outbox/deliveries.ts";
import { insertRedeliveries, insertRedelivery } from "../../kv/outbox/redeliveries.ts";
import { listFailedEvents } from "../../kv/outbox/failed_events.ts";
import { keys } from "../../kv/keys.ts";
import { chunks } from "../../core/chunks.ts";
import { pendingJobs } from "../../kv/outbox/backlog.ts";
import type { CatalogType } from "./event_schemas.ts";
import { exampleData } from "./examples.ts";

/**
 * One attempt of an event asked for by hand (redeliver, test, recover): sent once, never retried,
 * on the subscription as the request saw it or newer.
 */
const redeliveryOf = (
  sub: Deno.KvEntry<Subscription>,
  eventId: string,
  createdAt = nowIso(),
): Redelivery => ({
  id: newId(),
  subscription_id: sub.value.id,
  event_id: eventId,
  created_at: createdAt,
  subscription_version: sub.versionstamp,
});

/** What sends on demand (redeliver, test, recover) needs: an active subscription, else 422. */
function assertActive(sub: Subscription): void {
  if (sub.status !== "active") {
    throw invalid("webhookSubscription", "The subscription is disabled; re-enable it first.");
  }
}

/**
 * Sends a signed test event to the subscription now, as one attempt recorded like any other
 * (never retried), so a receiver can be checked without posting into a channel: a `ping`, or
 * the catalog's example of an event type (domain/webhooks/examples.ts). The subscription must be
 * active (422 on `webhookSubscription`).
 */
export async function testWebhook(
  ctx: Ctx,
  subject: Subject,
  { id, type = "ping" }: { id: string; type?: CatalogType },
): Promise<{ event_id: string }> {
  return await retrying("test webhook", async () => {
    const entry = await loadWebhook(ctx, subject, id, "subscription.manage");
    assertActive(entry.value);
    const created_at = nowIso();
    const event: OutboxEvent = {
      id: newId(),
      type,
      team_id: entry.value.team_id,
      channel_id: "",
      created_at,
      data: exampleData(type, {
        subscriptionId: entry.value.id,
        channelId: entry.value.channel_ids?.[0],
      }),
    };
    const redelivery = redeliveryOf(entry, event.id, created_at);
    return await insertRedelivery(ctx.kv, entry, redelivery, event) ? { event_id: event.id } : null;
  });
}

/**
 * Queues one more attempt of a delivery's event, outside the schedule and never retried. The
 * subscription must be active (422 on `webhookSubscription`) and the event still kept.
 */
export async function redeliver(
  ctx: Ctx,
  subject: Subject,
  id: string,
  deliveryId: string,
): Promise<{ event_id: string }> {
  return await retrying("redeliver", async () => {
    const entry = await loadWebhook(ctx, subject, id, "subscription.manage");
    const stored = storedId(deliveryId);
    const delivery = stored ? await getDelivery(ctx.kv, entry.value.id, stored) : null;
    if (!delivery) throw notFound("Delivery not found.");
    assertActive(entry.value);
    const event = await ctx.kv.get<OutboxEvent>(keys.event(delivery.event_id));
    if (event.versionstamp === null) {
      throw invalid("delivery", "The event of this delivery is no longer kept.");
    }
    return await insertRedelivery(ctx.kv, entry, redeliveryOf(entry, delivery.event_id))
      ? { event_id: delivery.event_id }
      : null;
  });
}

/** How far back a recover may reach. */
export const RECOVER_WINDOW_MS = 7 * 24 * 3_600_000;
/** Redeliveries written per commit by a recover (KV allows 1000 mutations). */
const RECOVER_BATCH = 300;

/** The smallest UUIDv7 of a millisecond: ids at or after it were made then or later. */
const firstIdAt = (ms: number) => {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`;
};

/**
 * Sends again, once each and in event order, every event since `since` (at most 7 days back)
 * whose every attempt to this subscription failed, as Svix's recover does. The subscription must
 * be active (422 on `webhookSubscription`). Returns how many events will be sent.
 */
export async function recoverWebhook(
  ctx: Ctx,
  subject: Subject,
  id: string,
  input: Settled<Date>,
): Promise<{ events: number; retrying: number }> {
  const entry = await loadWebhook(ctx, subject, id, "subscription.manage");
  const since = unwrap(input);
  assertActive(entry.value);
  const now = Date.now();
  if (since.getTime() < now - RECOVER_WINDOW_MS || since.getTime() > now) {
    throw invalid("since", "The since time must be within the last 7 days.");
  }
  const eventIds: string[] = [];
  for await (const e of listFailedEvents(ctx.kv, entry.value.id, firstIdAt(since.getTime()))) {
    eventIds.push(e.key[2] as string);
  }
  for (const batch of chunks(eventIds, RECOVER_BATCH)) {
    const redeliveries = batch.map((eventId) => redeliveryOf(entry, eventId));
    await insertRedeliveries(ctx.kv, entry.value.id, redeliveries);
  }
  return { events: eventIds.length, retrying: await pendingJobs(ctx.kv, entry.value.id) };
}
