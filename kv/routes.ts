/**
 * The route index: per team, a routing copy of each subscription (events, channels, status,
 * owner) beside a routes version that every change rewrites, so a write that emits events reads
 * its team's routes once, cached for as long as that version shows no change anywhere.
 */
import { CacheKind } from "../core/memory.ts";
import type { User } from "../core/types.ts";
import type { AppListener, Subscription, WebhookRoute } from "../core/webhook_records.ts";
import { getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import type { Store } from "./store/store.ts";
import type { Plan } from "./store/plan.ts";

/** The routing copy kept in the team index, read by every write that emits events. */
const routeOf = (s: Subscription): WebhookRoute => ({
  events: s.events,
  channel_ids: s.channel_ids,
  status: s.status,
  // Subscriptions made before owners were kept get theirs when routes are loaded.
  ...(s.owner_type && s.created_by ? { owner: { id: s.created_by, type: s.owner_type } } : {}),
  ...(s.app ? { app: appRouteOf(s.app) } : {}),
});

function appRouteOf(l: AppListener): WebhookRoute["app"] {
  const route = {
    message_kinds: l.message_kinds,
    mention_of: l.mention_of,
    ...(l.metadata ? { metadata: l.metadata } : {}),
  };
  return l.socket ? { ...route, socket: { app_id: l.app_id, bot_id: l.bot_id } } : route;
}

/** Writes a subscription's route, and bumps its team's routes version (see routesAt). */
export function putRoute(op: Plan, s: Subscription): void {
  op.set(keys.teamWebhook(s.team_id, s.id), routeOf(s));
  op.set(keys.routesVersion(s.team_id), Date.now());
}

export function dropRoute(op: Plan, s: Subscription): void {
  op.delete(keys.teamWebhook(s.team_id, s.id));
  op.set(keys.routesVersion(s.team_id), Date.now());
}

/** Each subscription's route, with the versionstamp of the commit that last changed it. */
export type RouteTable = { id: string; route: WebhookRoute; version: string }[];

/** The team's subscriptions and their routes: read once before a write that emits events. */
export async function loadRoutes(kv: Store, teamId: string): Promise<RouteTable> {
  const out: RouteTable = [];
  for await (const e of kv.list<WebhookRoute>({ prefix: keys.teamWebhooks(teamId) })) {
    out.push({ id: e.key[2] as string, route: e.value, version: e.versionstamp });
  }
  await fillOwners(kv, out.filter((r) => r.route.owner === undefined));
  return out;
}

/**
 * Finds the owners of routes written before routes kept them, from their subscriptions, so that
 * subscriptions made before then follow the same visibility rule. A subscription without a
 * creator hears nothing.
 */
async function fillOwners(kv: Store, routes: RouteTable): Promise<void> {
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
const ROUTES = new CacheKind<{ versionstamp: string | null; routes: RouteTable }>(
  "routes",
  10_000,
);

/**
 * The team's routes without listing them again, when `version` (the team's routes-version
 * entry, read with the request's first resource) shows no change since they were last listed.
 * Every route change in any process rewrites that entry, so a stale table is never used.
 */
export async function routesAt(
  kv: Store,
  teamId: string,
  version: Deno.KvEntryMaybe<unknown>,
): Promise<RouteTable> {
  const routeCache = kv.cache(ROUTES);
  const hit = routeCache.get(teamId);
  if (hit && hit.versionstamp === version.versionstamp) return hit.routes;
  const routes = await loadRoutes(kv, teamId);
  routeCache.set(teamId, { versionstamp: version.versionstamp, routes });
  return routes;
}
