import type { Ctx } from "./context.ts";
import type { Channel } from "./types.ts";
import { canSee } from "./access.ts";
import { keys } from "../kv/keys.ts";
import { type RouteOwner, routesAt, type RouteTable } from "../kv/outbox.ts";
import { membersAt } from "../kv/roster.ts";

/**
 * What a write that emits events of a channel reads with its first resource: the team's routes
 * version and the channel's members version.
 */
export const audienceKeys = (channel: Pick<Channel, "team_id" | "id">): Deno.KvKey[] => [
  keys.routesVersion(channel.team_id),
  keys.membersVersion(channel.id),
];

/** The versions `audienceKeys` named, as read. */
export type AudienceVersions = Deno.KvEntryMaybe<unknown>[];

/** Who hears a channel's events now, and what the write's commit must check to keep it so. */
export interface Audience {
  routes: RouteTable;
  checks: Deno.AtomicCheck[];
}

/** A membership the very commit that emits the events changes: it counts as done. */
export interface MembershipChange {
  userId: string;
  member: boolean;
}

/** Only a human sees a public channel without being in it; a bot and a direct message need it. */
const needsMembership = (owner: RouteOwner, channel: Channel) =>
  owner.type === "bot" || channel.is_direct || channel.visibility !== "public";

/**
 * The subscriptions that hear events of `channel`: those whose owner can see it at the moment
 * of the event (the visibility rules; admins get no exception). When an owner's membership
 * decides, the commit checks the channel's members version, so a join or leave committed
 * meanwhile makes it read again rather than route by the old membership.
 */
export async function audienceOf(
  ctx: Ctx,
  channel: Channel,
  [routesVersion, membersVersion]: AudienceVersions,
  change?: MembershipChange,
): Promise<Audience> {
  const all = await routesAt(ctx.kv, channel.team_id, routesVersion);
  const routes = all.filter((r) => r.route.status === "active" && r.route.owner);
  const asked = routes.map((r) => r.route.owner!).filter((o) => needsMembership(o, channel));
  if (asked.length === 0) return { routes, checks: [] };
  const members = await membersAt(ctx.kv, channel.id, membersVersion, asked.map((o) => o.id));
  if (change) {
    if (change.member) members.add(change.userId);
    else members.delete(change.userId);
  }
  const sees = (o: RouteOwner) =>
    canSee({ team_id: channel.team_id, type: o.type, role: null }, channel, members.has(o.id));
  return {
    routes: routes.filter((r) => sees(r.route.owner!)),
    checks: [{ key: keys.membersVersion(channel.id), versionstamp: membersVersion.versionstamp }],
  };
}
