import type { Ctx } from "../context.ts";
import type { Channel, MemberRef, Subject, Team, User } from "../../core/types.ts";
import { authorize, type ChannelAction } from "../policy.ts";
import { type Actor, subjectOfPerson } from "../principals.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { loadChannel, loadChannelWith } from "./access.ts";
import { cleanChannelName, slugify } from "./slug.ts";
import { checkName, checkOptionalName } from "../text.ts";
import {
  insertChannel,
  listTeamChannels as listTeamChannelRecords,
  updateChannel,
} from "../../kv/channels.ts";
import { getTeam, listTeamUsers, memberRef } from "../../kv/workspace.ts";
import { keys } from "../../kv/keys.ts";
import { decodeChannelCursor, encodeChannelCursor } from "../paging.ts";
import { byName, channelListOf } from "./channel_list.ts";

/** The channels the subject belongs to, archived ones included, by name. Never change it. */
export async function listChannels(ctx: Ctx, subject: Subject): Promise<readonly Channel[]> {
  return (await channelListOf(ctx, subject)).channels;
}

/**
 * Every channel of a team, direct messages included, by name: for its admins and owners, and
 * the operator (the CLI's channel:list), who see them all whatever their membership.
 */
export async function listTeamChannels(ctx: Ctx, teamId: string, actor: Actor): Promise<Channel[]> {
  authorize(actor, "team.administer", { team_id: teamId });
  const team = await getTeam(ctx.kv, teamId);
  if (!team) throw notFound(`No team ${teamId}.`);
  const people = (await listTeamUsers(ctx.kv, team.id)).filter((u) => u.type === "human");
  const channels = await listTeamChannelRecords(ctx.kv, team.id, people.map((u) => u.id));
  return channels.sort(byName);
}

/** A page of the subject's channels, and the cursor of the next page (null on the last). */
export interface ChannelPage {
  channels: Channel[];
  nextCursor: string | null;
}

/**
 * The subject's channels by name, from where an earlier page's `cursor` ended (a channel the
 * subject has left since still marks the place), `limit` at most.
 */
export async function pageChannels(
  ctx: Ctx,
  subject: Subject,
  { limit, cursor }: { limit: number; cursor: string | null },
): Promise<ChannelPage> {
  const after = cursor && decodeChannelCursor(ctx.keyring, subject.user_id, cursor);
  const { channels: all, placeOf } = await channelListOf(ctx, subject);
  let start = 0;
  if (after) {
    const place = placeOf.get(after);
    const mark = place === undefined
      ? (await ctx.kv.get<Channel>(keys.channel(after))).value
      : all[place];
    if (!mark) throw invalid("cursor", "The channel this cursor went on after is gone.");
    start = place === undefined ? firstAfter(all, mark) : place + 1;
  }
  const channels = all.slice(start, start + limit);
  const more = start + limit < all.length;
  return {
    channels,
    nextCursor: more
      ? encodeChannelCursor(ctx.keyring, subject.user_id, channels.at(-1)!.id)
      : null,
  };
}

/** Where in `sorted` the channels after `mark` begin (a binary search). */
function firstAfter(sorted: readonly Channel[], mark: Channel): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byName(sorted[mid], mark) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A channel the subject may take `action` on (by default: sees), its entry as read (for a commit
 * to check), and whether the subject is a member of it (read, whatever the channel).
 */
export async function channelAndMembership(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  action: ChannelAction = "channel.read",
) {
  const channel = storedId(channelId);
  const read = await loadChannelWith<{ membership: MemberRef }>(ctx, subject, channelId, {
    extra: { membership: channel ? keys.member(channel, subject.user_id) : null },
    action,
  });
  return {
    entry: read.entry,
    channel: read.channel,
    isMember: read.extra.membership.versionstamp !== null,
  };
}

/**
 * The channels `user` is in, archived ones included, by name: for its team's admins (the
 * policy's "team.administer"), who add bots to channels and choose what an incoming webhook
 * posts as.
 */
export async function channelsOf(
  ctx: Ctx,
  actor: Actor,
  user: User,
): Promise<readonly Channel[]> {
  authorize(actor, "team.administer", user);
  return await listChannels(ctx, subjectOfPerson(user));
}

export interface NewChannel {
  name: string;
  visibility: "public" | "private";
  topic?: string | null;
}

/** A channel's name as given, checked, and the slug that makes it unique in its team. */
export function channelName(given: string): { name: string; slug: string } {
  const name = cleanChannelName(checkName("name", given));
  const slug = slugify(name);
  if (!slug) throw invalid("name", "The name must contain at least one letter or digit.");
  return { name, slug };
}

export const NAME_TAKEN = "A channel with this name already exists.";

/** Creates a channel in the subject's team with the subject as its first member. */
export async function createChannel(
  ctx: Ctx,
  subject: Subject,
  input: NewChannel,
): Promise<Channel> {
  const { name, slug } = channelName(input.name);
  const topic = checkOptionalName("topic", input.topic) ?? null;
  const channel: Channel = {
    id: newId(),
    team_id: subject.team_id,
    name,
    slug,
    visibility: input.visibility,
    topic,
    is_general: false,
    is_archived: false,
    is_direct: false,
    created_by: subject.user_id,
    created_at: nowIso(),
  };
  const creator: MemberRef = { id: subject.user_id, name: subject.name, type: subject.type };
  if (!(await insertChannel(ctx.kv, channel, [creator]))) {
    throw invalid("name", NAME_TAKEN);
  }
  return channel;
}

function setArchived(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  archived: boolean,
): Promise<Channel> {
  return retrying("archive channel", async () => {
    const { entry, channel } = await loadChannel(ctx, subject, channelId, "channel.archive");
    if (channel.is_archived === archived) {
      const message = archived
        ? "The channel is already archived."
        : "The channel is not archived.";
      throw invalid("channel", message);
    }
    const next = { ...channel, is_archived: archived };
    return await updateChannel(ctx.kv, entry, next) ? next : null;
  });
}

export const archiveChannel = (ctx: Ctx, subject: Subject, channelId: string) =>
  setArchived(ctx, subject, channelId, true);

export const unarchiveChannel = (ctx: Ctx, subject: Subject, channelId: string) =>
  setArchived(ctx, subject, channelId, false);

/** The team's general channel record, as created with the team. */
export function generalChannelFor(team: Pick<Team, "id" | "general_channel_id">): Channel {
  return {
    id: team.general_channel_id,
    team_id: team.id,
    name: "general",
    slug: "general",
    visibility: "public",
    topic: null,
    is_general: true,
    is_archived: false,
    is_direct: false,
    created_by: null,
    created_at: nowIso(),
  };
}

/**
 * A direct-message conversation between users of one team (the admin CLI's; the Integrations
 * bot's with `id`, derived so that there is one per person). A DM made meanwhile under the same
 * id is the one returned.
 */
export async function createDirectChannel(
  ctx: Ctx,
  users: User[],
  { id = newId() }: { id?: string } = {},
): Promise<Channel> {
  const teamId = users[0].team_id;
  if (users.some((u) => u.team_id !== teamId)) {
    throw new ApiError(422, "All users of a direct message must be in the same team.");
  }
  const channel: Channel = {
    id,
    team_id: teamId,
    name: users.map((u) => u.name).join(", "),
    // Not in the team's slug index: a DM's name is not a channel name anyone can take.
    slug: `dm-${id.replaceAll("-", "")}`,
    visibility: "private",
    topic: null,
    is_general: false,
    is_archived: false,
    is_direct: true,
    created_by: null,
    created_at: nowIso(),
  };
  if (await insertChannel(ctx.kv, channel, users.map(memberRef))) return channel;
  return (await ctx.kv.get<Channel>(keys.channel(id))).value ?? channel;
}
