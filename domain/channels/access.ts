/**
 * Loading a channel for an action: its record and the subject's membership (where membership
 * can change the answer), the token's pending check, and a caller's extra keys, in one read; then
 * the policy's answer. What a write must check at commit to hold what it read (`checksOf`).
 */
import type { Ctx } from "../context.ts";
import type { Channel, MemberRef, Subject } from "../../core/types.ts";
import {
  authorize,
  type ChannelAction,
  channelNotFound,
  type ChannelShape,
  membershipDecides,
  permits,
} from "../policy.ts";
import { ApiError, notFound } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import { CacheKind } from "../../core/memory.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { audienceKeys, type AudienceVersions } from "../webhooks/audience.ts";

/** How a load reads (see `loadChannelWith`). */
export type ChannelReads = "plain" | "fresh" | "reused";

/** What a load reads besides the channel, by name: each name to the type of its value. */
export type Extra = Record<string, unknown>;

/** What to load with a channel, and for what. */
export interface ChannelLoad<E extends Extra> {
  /** Read in the same getMany, by name; a null key yields an absent entry under its name. */
  extra?: { [K in keyof E]: Deno.KvKey | null };
  /** Also read the versions the channel's event audience is built from (`audienceOf`). */
  audience?: boolean;
  action?: ChannelAction;
  reads?: ChannelReads;
}

export interface ChannelAccess {
  entry: Deno.KvEntry<Channel>;
  channel: Channel;
  /**
   * Whether the subject is a member. Membership is not read where it cannot change any rule (a
   * human in a public channel of its team): there this is false, whatever the truth.
   */
  isMember: boolean;
}

export interface ChannelRead<E extends Extra> extends ChannelAccess {
  /** The subject's membership entry as read, to re-check at commit; null when not read. */
  member: Deno.KvEntryMaybe<MemberRef> | null;
  extra: { [K in keyof E]: Deno.KvEntryMaybe<E[K]> };
  /** The audience's versions, when asked for (`audience`); else none. */
  versions: AudienceVersions;
}

/**
 * What never changes about a channel once created. Remembering it lets a request skip the
 * membership read when it cannot matter; every other field is read afresh each time.
 */
const SHAPES = new CacheKind<ChannelShape>("channel shapes", 50_000);

function rememberShape(ctx: Ctx, ch: Channel) {
  const shapes = ctx.kv.cache(SHAPES);
  if (shapes.has(ch.id)) return;
  shapes.set(ch.id, { team_id: ch.team_id, visibility: ch.visibility, is_direct: ch.is_direct });
}

const absent = { key: [], value: null, versionstamp: null };

/** What a subject gets for a channel it may not know exists, or that does not. */
const hiddenChannel = (subject: Subject) => notFound(channelNotFound(subject));

/** Not a channel id at all: nothing to hide, so the 404 says what ids look like. */
const notAnId = (id: string) =>
  notFound(
    `Channel not found: ${
      JSON.stringify(id.slice(0, 40))
    } is not a channel id. Ids are UUIDs; GET /api/v1/channels lists yours.`,
  );

/**
 * Loads a channel for `action` and asks the policy whether the subject may take it: the 404 that
 * hides the channel (malformed ids are 404 too: to a caller they are just channels that don't
 * exist), or the 403 of the action. A few more keys, named in `extra`, and the audience's
 * versions are fetched in the same `getMany` (at most 10 keys in all), so a request's
 * preconditions cost one round trip.
 *
 * `reads` other than "plain" are for a write whose commit checks every entry this returns
 * (`checksOf`): "fresh" reads them and remembers them, "reused" may start from the entries last
 * read for such a write instead of reading (kv/store/checked_reads.ts). Whatever a "reused" load then
 * decides without a commit to check it, an error above all, is decided again with "fresh".
 */
export async function loadChannelWith<E extends Extra = Record<never, never>>(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  { extra, audience = false, action = "channel.read", reads = "plain" }: ChannelLoad<E> = {},
): Promise<ChannelRead<E>> {
  if (!isUuid(channelId)) throw notAnId(channelId);
  const memberKey = membershipDecides(subject, ctx.kv.cache(SHAPES).get(channelId))
    ? keys.member(channelId, subject.user_id)
    : null;
  const named = Object.entries(extra ?? {}) as [keyof E, Deno.KvKey | null][];
  const versionKeys = audience ? audienceKeys({ team_id: subject.team_id, id: channelId }) : [];
  const slots = [memberKey, ...named.map(([, k]) => k), ...versionKeys];
  const wanted = slots.filter((k) => k !== null);
  const [channel, ...read] = reads === "plain"
    ? await ctx.kv.getMany<[Channel, ...unknown[]]>([keys.channel(channelId), ...wanted])
    : await ctx.kv.readForCheck<[Channel, ...unknown[]]>(
      [keys.channel(channelId), ...wanted],
      reads === "reused",
    );
  // Each slot's entry, in slot order (absent where there was no key to read).
  let next = 0;
  const [member, ...rest] = slots.map((k) => k === null ? absent : read[next++]);
  if (channel.versionstamp === null) throw hiddenChannel(subject);
  rememberShape(ctx, channel.value);
  const isMember = memberKey !== null && member.versionstamp !== null;
  authorize(subject, action, { channel: channel.value, isMember });
  return {
    entry: channel,
    channel: channel.value,
    isMember,
    member: memberKey ? member as Deno.KvEntryMaybe<MemberRef> : null,
    extra: Object.fromEntries(named.map(([name], i) => [name, rest[i]])) as ChannelRead<E>["extra"],
    versions: rest.slice(named.length),
  };
}

/** What a write must check to hold everything `read` gave it, its `extra` entries aside. */
export const checksOf = (read: ChannelRead<Extra>): Deno.AtomicCheck[] => [
  read.entry,
  ...(read.member ? [read.member] : []),
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
): Promise<ChannelAccess> => loadChannelWith(ctx, subject, channelId, { action });

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
