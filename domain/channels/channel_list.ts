/**
 * A member's channels, by name, without reading them all again for every page: this process
 * keeps the sorted list while the user's memberships version and its team's channels version
 * read as they did when it was listed. Every join and leave rewrites the first and every channel
 * made or changed in the team the second, in the same commit, in any process (kv/workspace.ts,
 * kv/channels.ts), so a list kept here is current exactly while both read the same: checking
 * costs one read, and a page then costs what it returns.
 *
 * Both versions are written from 0.29.0 and read from 0.30.0 (kv/keys.ts, "Layout steps"): a
 * 0.28.0 process, which doesn't write them, can't run beside a release that reads them.
 */
import type { Ctx } from "../context.ts";
import type { Channel, Subject } from "../../core/types.ts";
import { CacheKind } from "../../core/memory.ts";
import { keys } from "../../kv/keys.ts";
import { listUserChannels } from "../../kv/channels.ts";

const names = new Intl.Collator();

/** The order of a list of channels: by name, as people read names, then by id. */
export const byName = (a: Channel, b: Channel) =>
  names.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A member's channels, archived ones included, by name; shared between requests: never change it. */
export interface ChannelList {
  channels: readonly Channel[];
  /** Each channel's place in `channels`. */
  placeOf: ReadonlyMap<string, number>;
}

/**
 * 100,000 channels in all at most (about 50 MB): a member pages through its list in a burst, so
 * the recently listed are the ones worth keeping, and a list of 20,000 channels still fits.
 */
const LISTS = new CacheKind<{ versions: string; list: ChannelList }>(
  "channel_lists",
  100_000,
  (kept) => kept.list.channels.length + 1,
);

/** Listings under way, by member and versions. */
const BUILDING = new CacheKind<Promise<ChannelList>>("channel_list_builds", 1_000);

/** The member's channel list, from this process's memory when no membership or channel changed. */
export async function channelListOf(
  ctx: Ctx,
  { user_id, team_id }: Pick<Subject, "user_id" | "team_id">,
): Promise<ChannelList> {
  const read = await ctx.kv.getMany([
    keys.userChannelsVersion(user_id),
    keys.channelsVersion(team_id),
  ]);
  const versions = read.map((e) => e.versionstamp).join("/");
  const kept = ctx.kv.cache(LISTS).get(user_id);
  if (kept?.versions === versions) return kept.list;
  // Requests that find the same change share one listing: a member's first page of a burst
  // must not list thousands of channels once per connection.
  const building = ctx.kv.cache(BUILDING);
  const key = `${user_id}/${versions}`;
  let build = building.get(key);
  if (!build) {
    build = listed(ctx, user_id, versions).finally(() => building.delete(key));
    building.set(key, build);
  }
  return await build;
}

/** Lists a member's channels afresh, and keeps the list for `versions`. */
async function listed(ctx: Ctx, userId: string, versions: string): Promise<ChannelList> {
  // Read after the versions: a change landing meanwhile shows in a newer version next time.
  const channels = Object.freeze((await listUserChannels(ctx.kv, userId)).sort(byName));
  const list = { channels, placeOf: new Map(channels.map((c, i) => [c.id, i])) };
  ctx.kv.cache(LISTS).set(userId, { versions, list });
  return list;
}
