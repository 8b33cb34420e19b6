/**
 * Who hears an event: the one rule, in one place. A subscription hears an event when it is
 * active, has an owner, that owner may read the event's channel at the moment the event is
 * written (the policy's "event.hear": admins get no exception), and it asked for the event's
 * type and, when it named channels, this channel. The store only keeps the routes (kv/routes.ts)
 * and the memberships (kv/roster.ts) this reads.
 */
import type { Ctx } from "../context.ts";
import type { Channel, EventType, OutboxEvent } from "../../core/types.ts";
import type {
  AppListener,
  ChannelKind,
  RouteOwner,
  WebhookRoute,
} from "../../core/webhook_records.ts";
import { permits } from "../policy.ts";
import { keys } from "../../kv/keys.ts";
import { addEvent, type EventDraft } from "../../kv/outbox/outbox.ts";
import { routesAt, type RouteTable } from "../../kv/routes.ts";
import { membersAt } from "../../kv/roster.ts";
import { isClosed, kindOf } from "../../core/channel_kind.ts";
import type { Plan } from "../../kv/store/plan.ts";

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
  /** Whether every human of the team sees the channel (kv/outbox/outbox.ts EventPlace). */
  open: boolean;
  /** What kind of channel it is: apps' listeners take message events of some kinds only. */
  kind: ChannelKind;
}

/** No subscription hears it: a write that emits nothing. */
export const NOBODY: Audience = { routes: [], checks: [], open: false, kind: "public" };

/** A membership the very commit that emits the events changes: it counts as done. */
export interface MembershipChange {
  userId: string;
  member: boolean;
}

const principalOf = (owner: RouteOwner, channel: Channel) => ({
  user_id: owner.id,
  team_id: channel.team_id,
  type: owner.type,
  role: null,
});

/** Whether the owner hears the channel's events, given whether it is a member. */
const hears = (owner: RouteOwner, channel: Channel, isMember: boolean) =>
  permits(principalOf(owner, channel), "event.hear", { channel, isMember });

/**
 * The subscriptions that hear events of `channel`: those whose owner can see it at the moment
 * of the event (the visibility rules; admins get no exception). The commit checks the team's
 * routes version and, when an owner's membership decides, the channel's members version, so a
 * subscription or a join or leave committed meanwhile makes it read again rather than route by
 * the old ones.
 */
export async function audienceOf(
  ctx: Ctx,
  channel: Channel,
  [routesVersion, membersVersion]: AudienceVersions,
  change?: MembershipChange,
): Promise<Audience> {
  const all = await routesAt(ctx.kv, channel.team_id, routesVersion);
  const routes = all.filter((r) => r.route.status === "active" && r.route.owner);
  const open = !isClosed(channel);
  const kind = kindOf(channel);
  const asked = routes.map((r) => r.route.owner!).filter((o) => !hears(o, channel, false));
  if (asked.length === 0) return { routes, checks: [routesVersion], open, kind };
  const members = await membersAt(ctx.kv, channel.id, membersVersion, asked.map((o) => o.id));
  if (change) {
    if (change.member) members.add(change.userId);
    else members.delete(change.userId);
  }
  return {
    routes: routes.filter((r) => hears(r.route.owner!, channel, members.has(r.route.owner!.id))),
    checks: [
      routesVersion,
      { key: keys.membersVersion(channel.id), versionstamp: membersVersion.versionstamp },
    ],
    open,
    kind,
  };
}

/** Whether a subscription that hears the channel asked for this event. */
const wants = (route: WebhookRoute, type: EventType, channelId: string) =>
  route.events.includes(type) &&
  (route.channel_ids === null || route.channel_ids.includes(channelId));

/** Whether a message names the bot as Slack's clients write it: `<@id>`, or `@name`. */
const mentions = (data: unknown, bot: { id: string; name: string }) => {
  const body = (data as { body?: unknown } | null)?.body;
  if (typeof body !== "string") return false;
  const name = bot.name.toLowerCase();
  return body.includes(`<@${bot.id}>`) || body.toLowerCase().includes(`@${name}`);
};

/**
 * Whether an app's listener takes this event: its message events only from the channel kinds it
 * asked for (Slack's `message.channels`, `message.groups`, `message.im`), and its mention
 * listener only messages naming its bot.
 */
function listens(route: WebhookRoute, audience: Audience, draft: EventDraft) {
  const app = route.app;
  if (!app) return true;
  if (app.metadata) return carriesMetadata(app.metadata, draft);
  if (app.mention_of) return mentions(draft.data, app.mention_of);
  return !draft.type.startsWith("message.") || app.message_kinds.includes(audience.kind);
}

/**
 * Whether a message event's message carries metadata a metadata listener asked for: of one of its
 * kinds, from the app it named or any (`*`).
 */
function carriesMetadata(asked: NonNullable<AppListener["metadata"]>, draft: EventDraft) {
  const carried = draft.metadata_of;
  return !!carried && draft.type.startsWith("message.") &&
    asked.some((s) =>
      s.event_type === carried.event_type && (s.app_id === "*" || s.app_id === carried.app_id)
    );
}

/** The routes of `audience` that hear an event of this type in this channel. */
const hearing = (audience: Audience, draft: EventDraft) =>
  audience.routes.filter((r) =>
    wants(r.route, draft.type, draft.channel_id) && listens(r.route, audience, draft)
  );

/**
 * Adds an event to a write's commit, with a delivery job for each subscription of `audience`
 * (from `audienceOf`) that wants it: the transactional outbox.
 */
export function emit(op: Plan, audience: Audience, draft: EventDraft): OutboxEvent {
  return addEvent(op, hearing(audience, draft), {
    ...draft,
    open: audience.open,
  });
}
