import type { Channel, MemberRef } from "../core/types.ts";
import { getAll } from "./store/commit.ts";
import { keys } from "./keys.ts";
import { setMembership } from "./workspace.ts";
import type { Store } from "./store/store.ts";

/** A channel and whether `userId` (and `otherId`) belong to it, in one read. */
export async function getChannelFor(
  kv: Store,
  channelId: string,
  userId: string,
  otherId = userId,
) {
  const [channel, member, other] = await kv.getMany<[Channel, MemberRef, MemberRef]>([
    keys.channel(channelId),
    keys.member(channelId, userId),
    keys.member(channelId, otherId),
  ]);
  return { channel, member, other };
}

/**
 * Creates a channel with its creator as first member. Returns false when the slug is taken in
 * the team (the unique index is checked in the same commit, so two creators can't both win).
 */
export async function insertChannel(
  kv: Store,
  channel: Channel,
  members: MemberRef[],
): Promise<boolean> {
  const op = kv.atomic()
    .check({ key: keys.channel(channel.id), versionstamp: null })
    .set(keys.channel(channel.id), channel)
    .set(keys.channelsVersion(channel.team_id), Date.now());
  if (!channel.is_direct) {
    op.check({ key: keys.channelSlug(channel.team_id, channel.slug), versionstamp: null })
      .set(keys.channelSlug(channel.team_id, channel.slug), channel.id);
  }
  for (const m of members) setMembership(op, channel, m);
  return (await op.commit()).ok;
}

/**
 * Replaces a channel record read as `entry`, moving its slug's index entry when it was renamed.
 * Returns false when it changed since, or when the new slug was taken meanwhile.
 */
export async function updateChannel(
  kv: Store,
  entry: Deno.KvEntry<Channel>,
  next: Channel,
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(keys.channel(next.id), next)
    .set(keys.channelsVersion(next.team_id), Date.now());
  const before = entry.value.slug;
  if (!next.is_direct && next.slug !== before) {
    op.delete(keys.channelSlug(next.team_id, before))
      .check({ key: keys.channelSlug(next.team_id, next.slug), versionstamp: null })
      .set(keys.channelSlug(next.team_id, next.slug), next.id);
  }
  return (await op.commit()).ok;
}

/** The ids of the channels a user belongs to. */
export async function listUserChannelIds(kv: Store, userId: string): Promise<string[]> {
  // Listed in large batches: each is a round trip, and a user may be in thousands.
  const entries = kv.list({ prefix: keys.userChannels(userId) }, { batchSize: 500 });
  return (await Array.fromAsync(entries)).map((e) => e.key[2] as string);
}

/** The channels a user belongs to. */
export async function listUserChannels(kv: Store, userId: string): Promise<Channel[]> {
  const ids = await listUserChannelIds(kv, userId);
  return (await getAll<Channel>(kv, ids.map((id) => keys.channel(id))))
    .flatMap((e) => e.value ? [e.value] : []);
}

/**
 * A team's channels: those with a name, by the team's slugs, and the direct messages of
 * `userIds` (the team's people: a direct message has no slug, only members).
 */
export async function listTeamChannels(
  kv: Store,
  teamId: string,
  userIds: string[],
): Promise<Channel[]> {
  const named = kv.list<string>({ prefix: keys.channelSlugs(teamId) }, { batchSize: 500 });
  const ids = new Set((await Array.fromAsync(named)).map((e) => e.value));
  for (const userId of userIds) {
    for await (const e of kv.list({ prefix: keys.userClosedChannels(userId) })) {
      ids.add(e.key[2] as string);
    }
  }
  return (await getAll<Channel>(kv, [...ids].map((id) => keys.channel(id))))
    .flatMap((e) => e.value?.team_id === teamId ? [e.value] : []);
}

/** A channel's members. */
export async function listMembers(kv: Store, channelId: string): Promise<MemberRef[]> {
  const out: MemberRef[] = [];
  for await (const e of kv.list<MemberRef>({ prefix: keys.members(channelId) })) out.push(e.value);
  return out;
}
