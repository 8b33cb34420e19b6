import type { EventType, OutboxEvent } from "../domain/types.ts";
import { newId } from "../domain/ids.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";

/** What the team index holds per subscription: just enough to route an event. */
export interface WebhookRoute {
  events: EventType[];
  channel_ids: string[] | null;
  status: "active" | "disabled";
}

/** A pending delivery of one event to one subscription; removed when it is settled. */
export interface DeliveryJob {
  subscription_id: string;
  event_id: string;
  /** The attempt the next try will be (1-based). */
  attempt: number;
  next_attempt_at: string;
  created_at: string;
}

/** The queue message that wakes the delivery engine for an event. */
export interface EventQueued {
  kind: "event";
  event_id: string;
}

export type RouteTable = { id: string; route: WebhookRoute }[];

/** The team's subscriptions and their routes: read once before a write that emits events. */
export async function loadRoutes(kv: Deno.Kv, teamId: string): Promise<RouteTable> {
  const out: RouteTable = [];
  for await (const e of kv.list<WebhookRoute>({ prefix: keys.teamWebhooks(teamId) })) {
    out.push({ id: e.key[2] as string, route: e.value });
  }
  return out;
}

function matches(route: WebhookRoute, type: EventType, channelId: string): boolean {
  return route.status === "active" && route.events.includes(type) &&
    (route.channel_ids === null || route.channel_ids.includes(channelId));
}

export interface EventDraft {
  type: EventType;
  team_id: string;
  channel_id: string;
  data: unknown;
}

/**
 * Adds an event to a commit (the transactional outbox): the event itself, one delivery job per
 * matching active subscription, and a queue message that wakes the delivery engine. The change,
 * its event and its jobs then exist together or not at all.
 */
export function addEvent(
  op: Deno.AtomicOperation,
  routes: RouteTable,
  draft: EventDraft,
): OutboxEvent {
  const now = Date.now();
  const created_at = new Date(now).toISOString();
  const subscription_ids = routes.filter((r) => matches(r.route, draft.type, draft.channel_id))
    .map((r) => r.id);
  const event: OutboxEvent = { id: newId(now), ...draft, created_at, subscription_ids };
  op.set(keys.event(event.id), event, { expireIn: EVENT_TTL_MS });
  if (subscription_ids.length === 0) return event;
  for (const subscription_id of subscription_ids) {
    const job: DeliveryJob = {
      subscription_id,
      event_id: event.id,
      attempt: 1,
      next_attempt_at: created_at,
      created_at,
    };
    op.set(keys.job(subscription_id, event.id), job);
  }
  const wake: EventQueued = { kind: "event", event_id: event.id };
  op.enqueue(wake, { keysIfUndelivered: [keys.undelivered(event.id)] });
  return event;
}
