import type { EventType, OutboxEvent, User, UserType } from "../domain/types.ts";
import type { Subscription } from "../domain/webhook_records.ts";
import { newId } from "../domain/ids.ts";
import { RecentMap } from "../domain/recent_map.ts";
import { getAll } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";
import { queuesAvailable } from "./queue_support.ts";

/** The user a subscription belongs to: it hears only the channels this user can see. */
export interface RouteOwner {
  id: string;
  type: UserType;
}

/** What the team index holds per subscription: just enough to route an event. */
export interface WebhookRoute {
  events: EventType[];
  channel_ids: string[] | null;
  status: "active" | "disabled";
  /** Absent on routes written before owners were kept: loadRoutes fills it in. Null: nobody. */
  owner?: RouteOwner | null;
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
  /** The subscriptions with a job, so a wake-up for work already done costs no read. */
  subscription_ids: string[];
}

export type RouteTable = { id: string; route: WebhookRoute }[];

/** The team's subscriptions and their routes: read once before a write that emits events. */
export async function loadRoutes(kv: Deno.Kv, teamId: string): Promise<RouteTable> {
  const out: RouteTable = [];
  for await (const e of kv.list<WebhookRoute>({ prefix: keys.teamWebhooks(teamId) })) {
    out.push({ id: e.key[2] as string, route: e.value });
  }
  await fillOwners(kv, out.filter((r) => r.route.owner === undefined));
  return out;
}

/**
 * Finds the owners of routes written before routes kept them, from their subscriptions, so that
 * subscriptions made before then follow the same visibility rule. A subscription without a
 * creator hears nothing.
 */
async function fillOwners(kv: Deno.Kv, routes: RouteTable): Promise<void> {
  if (routes.length === 0) return;
  const subs = await getAll<Subscription>(kv, routes.map((r) => keys.webhook(r.id)));
  const ownerIds = subs.map((e) => e.value?.created_by ?? null);
  const users = await getAll<User>(kv, ownerIds.flatMap((id) => id ? [keys.user(id)] : []));
  const byId = new Map(users.flatMap((e) => e.value ? [[e.value.id, e.value]] : []));
  routes.forEach((r, i) => {
    const user = byId.get(ownerIds[i] ?? "");
    r.route = { ...r.route, owner: user ? { id: user.id, type: user.type } : null };
  });
}

/** Teams' routes as last listed, by the versionstamp of the team's routes version then. */
const routeCache = new RecentMap<string, { versionstamp: string | null; routes: RouteTable }>(
  10_000,
);

/**
 * The team's routes without listing them again, when `version` (the team's routes-version
 * entry, read with the request's first resource) shows no change since they were last listed.
 * Every route change in any process rewrites that entry, so a stale table is never used.
 */
export async function routesAt(
  kv: Deno.Kv,
  teamId: string,
  version: Deno.KvEntryMaybe<unknown>,
): Promise<RouteTable> {
  const hit = routeCache.get(teamId);
  if (hit && hit.versionstamp === version.versionstamp) return hit.routes;
  const routes = await loadRoutes(kv, teamId);
  routeCache.set(teamId, { versionstamp: version.versionstamp, routes });
  return routes;
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
 * matching active subscription, and what wakes the delivery engine: a queue message, or, when
 * this process runs the engine, a call once the commit lands (see onEventsCommitted). The
 * change, its event and its jobs then exist together or not at all.
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
    op.set(keys.job(subscription_id, event.id), firstJob(event, subscription_id));
  }
  if (commitListeners.size > 0) {
    announceOnCommit(op, event);
  } else if (queuesAvailable()) {
    const wake: EventQueued = { kind: "event", event_id: event.id, subscription_ids };
    op.enqueue(wake, { keysIfUndelivered: [keys.undelivered(event.id)] });
  }
  return event;
}

/** The job an event starts with for each matching subscription. */
export const firstJob = (event: OutboxEvent, subscriptionId: string): DeliveryJob => ({
  subscription_id: subscriptionId,
  event_id: event.id,
  attempt: 1,
  next_attempt_at: event.created_at,
  created_at: event.created_at,
});

/**
 * Hears, in this process, of events with delivery jobs right after their commit succeeds;
 * `versionstamp` is the commit's, so also that of the jobs it wrote.
 */
export type CommitListener = (events: OutboxEvent[], versionstamp: string) => void;

const commitListeners = new Set<CommitListener>();
const announced = new WeakMap<Deno.AtomicOperation, OutboxEvent[]>();

/**
 * Lets the delivery engine of this process take an event the moment its commit lands, in place
 * of the queue message: Deno KV's queue polls (it delivers 0–100 ms after the commit) and each
 * message costs about as much CPU as a delivery. Nothing is lost if this process dies before
 * it delivers: the jobs are committed, and the sweeper finds them (at start, and every minute
 * from any other instance). Writers without an engine (the CLI, other processes) still
 * enqueue. Returns the unsubscribe function.
 */
export function onEventsCommitted(listener: CommitListener): () => void {
  commitListeners.add(listener);
  return () => commitListeners.delete(listener);
}

/** Wraps this operation's commit, once, to tell the listeners of its events on success. */
function announceOnCommit(op: Deno.AtomicOperation, event: OutboxEvent) {
  const events = announced.get(op);
  if (events) {
    events.push(event);
    return;
  }
  const batch = [event];
  announced.set(op, batch);
  const commit = op.commit.bind(op);
  op.commit = async () => {
    const res = await commit();
    if (res.ok) { for (const listener of commitListeners) listener(batch, res.versionstamp); }
    return res;
  };
}
