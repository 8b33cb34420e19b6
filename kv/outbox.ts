import type { EventType, OutboxEvent, User, UserType } from "../domain/types.ts";
import type { Subscription } from "../domain/webhook_records.ts";
import { newId } from "../domain/ids.ts";
import { RecentMap } from "../domain/recent_map.ts";
import { getAll } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";

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
  /**
   * Until when (ms) one process holds the job: no other attempts it before then. Null or absent:
   * free for whoever finds it due.
   */
  lease_until?: number | null;
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
 * This process's delivery engine, as the outbox sees it: the engine takes the jobs of the
 * process's own commits at once, without a read, while its window has room.
 */
export interface LocalDelivery {
  /** Promises room for a job of each subscription; the ids it could take (possibly none). */
  claim(subscriptionIds: string[]): string[];
  /** The claimed jobs of a commit that landed; `versionstamp` is the commit's (so theirs). */
  take(handed: Handed[], versionstamp: string): void;
  /** Gives back the room of claimed jobs whose commit failed. */
  release(subscriptionIds: string[]): void;
  /** Until when a claimed job is leased to this process, from `now`. */
  leaseUntil(now: number): number;
  /** Redeliveries of the subscription were committed here: take them now. */
  wake(subscriptionId: string): void;
}

const engines = new WeakMap<Deno.Kv, LocalDelivery>();

/** This process's engine on `kv`, if it runs one. */
export const localDelivery = (kv: Deno.Kv): LocalDelivery | undefined => engines.get(kv);

/** Lets this process's engine take the jobs of events committed to `kv` here. */
export function attachDelivery(kv: Deno.Kv, engine: LocalDelivery): () => void {
  engines.set(kv, engine);
  return () => engines.get(kv) === engine && engines.delete(kv);
}

/**
 * Adds an event to a commit (the transactional outbox): the event itself and one delivery job
 * per matching active subscription. Jobs this process's engine claims are written leased to it
 * and handed over once the commit lands; the rest are written free, with the delivery signal
 * that engines of every process watch (see kv/deliveries.ts). The change, its event and its
 * jobs then exist together or not at all.
 */
export function addEvent(
  kv: Deno.Kv,
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
  op.set(keys.teamEvent(event.team_id, event.id), {
    type: event.type,
    channel_id: event.channel_id,
  }, {
    expireIn: EVENT_TTL_MS,
  });
  if (subscription_ids.length === 0) return event;
  const engine = engines.get(kv);
  const claimed = new Set(engine?.claim(subscription_ids) ?? []);
  const jobs: Record<string, DeliveryJob> = {};
  for (const id of subscription_ids) {
    jobs[id] = firstJob(event, id, claimed.has(id) ? engine!.leaseUntil(now) : null);
    op.set(keys.job(id, event.id), jobs[id]).sum(keys.jobsCreated(id), 1n);
  }
  if (claimed.size > 0) handOver(op, engine!, { event, jobs: [...claimed].map((id) => jobs[id]) });
  if (claimed.size < subscription_ids.length) op.set(keys.deliverySignal(), now);
  return event;
}

/** The job an event starts with for a matching subscription. */
export const firstJob = (
  event: OutboxEvent,
  subscriptionId: string,
  leaseUntil: number | null = null,
): DeliveryJob => ({
  subscription_id: subscriptionId,
  event_id: event.id,
  attempt: 1,
  next_attempt_at: event.created_at,
  created_at: event.created_at,
  lease_until: leaseUntil,
});

/** An event's jobs written leased to this process's engine. */
export interface Handed {
  event: OutboxEvent;
  jobs: DeliveryJob[];
}

const handOvers = new WeakMap<Deno.AtomicOperation, Handed[]>();

/**
 * Wraps this operation's commit, once, to hand its claimed jobs to the engine when it lands, or
 * give their room back when it does not. Nothing is lost if the process dies in between: the
 * jobs are committed, and their lease runs out for another engine to take them.
 */
function handOver(op: Deno.AtomicOperation, engine: LocalDelivery, handed: Handed) {
  const known = handOvers.get(op);
  if (known) {
    known.push(handed);
    return;
  }
  const batch = [handed];
  handOvers.set(op, batch);
  const commit = op.commit.bind(op);
  op.commit = async () => {
    let res: Deno.KvCommitResult | Deno.KvCommitError | undefined;
    try {
      res = await commit();
      return res;
    } finally {
      if (res?.ok) engine.take(batch, res.versionstamp);
      else engine.release(batch.flatMap((h) => h.jobs.map((j) => j.subscription_id)));
    }
  };
}
