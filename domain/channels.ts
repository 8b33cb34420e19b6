import type { Ctx } from "./context.ts";
import type { Channel, MemberRef, Subject, Team, User } from "../core/types.ts";
import {
  type Actor,
  authorize,
  CHANNEL_NOT_FOUND,
  type ChannelAction,
  permits,
  subjectOfPerson,
  whoOf,
} from "./policy.ts";
import { ApiError, invalid, notFound } from "../core/errors.ts";
import { isUuid, newId, nowIso } from "../core/ids.ts";
import { RecentMap } from "../core/recent_map.ts";
import { retrying } from "../core/retry.ts";
import { pendingTokenKey, settleTokenCheck, verifySubject } from "./authenticate.ts";
import { cleanChannelName, slugify } from "./slug.ts";
import { checkName, checkOptionalName } from "./text.ts";
import { insertChannel, listUserChannels, updateChannel } from "../kv/channels.ts";
import { getAll } from "../kv/commit.ts";
import { keys } from "../kv/keys.ts";
import { decodeChannelCursor, encodeChannelCursor } from "./paging.ts";

export interface ChannelAccess {
  entry: Deno.KvEntry<Channel>;
  channel: Channel;
  /**
   * Whether the subject is a member. Membership is not read where it cannot change any rule (a
   * human in a public channel of its team): there this is false, whatever the truth.
   */
  isMember: boolean;
}

export interface ChannelRead<T extends unknown[]> extends ChannelAccess {
  /** The subject's membership entry as read, to re-check at commit; null when not read. */
  member: Deno.KvEntryMaybe<MemberRef> | null;
  /** The token's entry when the request's first read settled its check, else null. */
  token: Deno.KvEntryMaybe<unknown> | null;
  /**
   * Read with the token when the read may be reused: every revocation and rotation rewrites it,
   * and its last use does not (kv/tokens.ts).
   */
  tokensVersion: Deno.KvEntryMaybe<unknown> | null;
  extra: { [K in keyof T]: Deno.KvEntryMaybe<T[K]> };
}

type Shape = Pick<Channel, "team_id" | "visibility" | "is_direct">;

/**
 * What never changes about a channel once created. Remembering it lets a request skip the
 * membership read when it cannot matter; every other field is read afresh each time.
 */
const shapes = new RecentMap<string, Shape>(50_000);

function rememberShape(ch: Channel) {
  if (shapes.has(ch.id)) return;
  shapes.set(ch.id, { team_id: ch.team_id, visibility: ch.visibility, is_direct: ch.is_direct });
}

/** Membership decides nothing for a human in a public channel of its own team. */
const membershipMatters = (subject: Subject, shape: Shape | undefined) =>
  !shape || subject.type === "bot" || shape.is_direct || shape.visibility !== "public" ||
  shape.team_id !== subject.team_id;

const absent = { key: [], value: null, versionstamp: null };

/** What a subject gets for a channel it may not know exists, or that does not. */
const channelNotFound = () => notFound(CHANNEL_NOT_FOUND);

/**
 * Loads a channel for `action` and asks the policy whether the subject may take it: the 404 that
 * hides the channel (malformed ids are 404 too: to a caller they are just channels that don't
 * exist), or the 403 of the action. Up to 7 more keys are fetched in the same `getMany`, so a
 * request's preconditions cost one round trip; a null key (nothing to read) yields an absent
 * entry in its place.
 *
 * `reuse`, true or false, is for a write whose commit checks every entry this returns
 * (`checksOf`): its reads are remembered, and with true it may start from the entries last read
 * for such a write instead of reading (kv/checked_reads.ts). Whatever it then decides without a
 * commit to check it, an error above all, it must decide again with `reuse` false.
 */
export async function loadChannelWith<T extends unknown[]>(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  extraKeys: (Deno.KvKey | null)[],
  action: ChannelAction = "channel.read",
  reuse?: boolean,
): Promise<ChannelRead<T>> {
  if (!isUuid(channelId)) throw channelNotFound();
  const tokenKey = pendingTokenKey(subject);
  const memberKey = membershipMatters(subject, shapes.get(channelId))
    ? keys.member(channelId, subject.user_id)
    : null;
  const wanted = extraKeys.filter((k) => k !== null);
  // What a commit checks to hold a remembered token unrevoked, however many tokens it carries.
  const guardKey = tokenKey && reuse !== undefined ? keys.tokensVersion() : null;
  const wantedKeys: [Deno.KvKey, ...Deno.KvKey[]] = [
    keys.channel(channelId),
    ...(memberKey ? [memberKey] : []),
    ...wanted,
    ...(tokenKey ? [tokenKey] : []),
    ...(guardKey ? [guardKey] : []),
  ];
  const [channel, ...read] = reuse === undefined
    ? await ctx.kv.getMany<[Channel, ...unknown[]]>(wantedKeys)
    : await ctx.kv.readForCheck<[Channel, ...unknown[]]>(wantedKeys, reuse);
  const tokensVersion = guardKey ? read.pop()! : null;
  const token = tokenKey ? read.pop()! : null;
  if (token) settleTokenCheck(subject, token, !reuse);
  const member = memberKey ? read.shift() as Deno.KvEntryMaybe<MemberRef> : null;
  const extra = extraKeys.map((k) => k === null ? absent : read.shift());
  if (channel.versionstamp === null) throw channelNotFound();
  rememberShape(channel.value);
  const isMember = member?.versionstamp != null;
  authorize(subject, action, { channel: channel.value, isMember });
  return {
    entry: channel,
    channel: channel.value,
    isMember,
    member,
    token,
    tokensVersion,
    extra: extra as ChannelRead<T>["extra"],
  };
}

/** What a write must check to hold everything `read` gave it, its `extra` entries aside. */
export const checksOf = (read: ChannelRead<unknown[]>): Deno.AtomicCheck[] => [
  read.entry,
  ...(read.member ? [read.member] : []),
  ...(read.tokensVersion ? [read.tokensVersion] : []),
];

/**
 * The tries of a write that may reuse (see loadChannelWith), for `retrying`: the first from what
 * was last read, every other on a fresh read. Only a commit vouches for what was reused, so a
 * refusal from it is decided again on a fresh read.
 */
export function reusingFirst<T>(
  attempt: (reuse: boolean) => Promise<T | null>,
): () => Promise<T | null> {
  let first = true;
  return async () => {
    if (!first) return await attempt(false);
    first = false;
    try {
      return await attempt(true);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return await attempt(false);
    }
  };
}

/** `loadChannelWith` and nothing more to read. */
export const loadChannel = (
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  action: ChannelAction = "channel.read",
): Promise<ChannelAccess> => loadChannelWith<[]>(ctx, subject, channelId, [], action);

/** Those of the channels `ids` the subject may read now (the policy's "channel.read"), in a few reads. */
export async function visibleChannels(
  ctx: Ctx,
  subject: Subject,
  ids: string[],
): Promise<Channel[]> {
  const [channels, memberships] = await Promise.all([
    getAll<Channel>(ctx.kv, ids.map((id) => keys.channel(id))),
    getAll(ctx.kv, ids.map((id) => keys.member(id, subject.user_id))),
  ]);
  return channels.flatMap(({ value: channel }, i) =>
    channel !== null &&
      permits(subject, "channel.read", {
        channel,
        isMember: memberships[i].versionstamp !== null,
      })
      ? [channel]
      : []
  );
}

/** Which of the channels `ids` the subject sees now. */
export const visibleChannelIds = async (ctx: Ctx, subject: Subject, ids: string[]) =>
  new Set((await visibleChannels(ctx, subject, ids)).map((c) => c.id));

const names = new Intl.Collator();

/** The order of a list of channels: by name, as people read names, then by id. */
const byName = (a: Channel, b: Channel) =>
  names.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The channels the subject belongs to, archived ones included, by name. */
export async function listChannels(ctx: Ctx, subject: Subject): Promise<Channel[]> {
  return (await listUserChannels(ctx.kv, subject.user_id)).sort(byName);
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
  const all = await listChannels(ctx, subject);
  let start = 0;
  if (after) {
    const mark = all.find((c) => c.id === after) ??
      (await ctx.kv.get<Channel>(keys.channel(after))).value;
    if (!mark) throw invalid("cursor", "The channel this cursor went on after is gone.");
    start = firstAfter(all, mark);
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
function firstAfter(sorted: Channel[], mark: Channel): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byName(sorted[mid], mark) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The private channels and direct messages `user` is in, by name: what a token for it reads
 * beyond public channels. For an admin about to mint a token for a bot (the policy's
 * "team.administer"), so it knows what that token will read.
 */
export async function privateReach(ctx: Ctx, actor: Actor, user: User): Promise<Channel[]> {
  authorize(whoOf(actor), "team.administer", user);
  const channels = await listChannels(ctx, subjectOfPerson(user));
  return channels.filter((c) => c.visibility === "private" || c.is_direct);
}

export interface NewChannel {
  name: string;
  visibility: "public" | "private";
  topic?: string | null;
}

/** Creates a channel in the subject's team with the subject as its first member. */
export async function createChannel(
  ctx: Ctx,
  subject: Subject,
  input: NewChannel,
): Promise<Channel> {
  await verifySubject(ctx, subject);
  const name = cleanChannelName(checkName("name", input.name));
  const topic = checkOptionalName("topic", input.topic) ?? null;
  const slug = slugify(name);
  if (!slug) throw invalid("name", "The name must contain at least one letter or digit.");
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
    throw invalid("name", "A channel with this name already exists.");
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

/** A direct-message conversation between users of one team (admin CLI only). */
export async function createDirectChannel(ctx: Ctx, users: User[]): Promise<Channel> {
  const teamId = users[0].team_id;
  if (users.some((u) => u.team_id !== teamId)) {
    throw new ApiError(422, "All users of a direct message must be in the same team.");
  }
  const id = newId();
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
  await insertChannel(
    ctx.kv,
    channel,
    users.map((u) => ({ id: u.id, name: u.name, type: u.type })),
  );
  return channel;
}
