import type { Ctx } from "../context.ts";
import { mergeSorted } from "../../core/merge.ts";
import type { EventType, OutboxEvent, Subject } from "../../core/types.ts";
import { loadChannel, visibleChannelIds } from "../channels/access.ts";
import { asTheyAreNow } from "../messages/erasure.ts";
import { requireWithinHorizon } from "./horizon.ts";
import {
  type FeedEntry,
  type FeedSource,
  listClosedChannelIds,
  listFeedSource,
  readEvents,
} from "../../kv/stream/event_feed.ts";
import { idTime, placeAt } from "../../core/ids.ts";
import { permits } from "../policy.ts";
import { type ChannelList, channelListOf } from "../channels/channel_list.ts";

/**
 * Events younger than this are not listed yet. An event's id is made just before its commit, so
 * two commits can land in the other order than their ids; holding back the last few seconds
 * means a client that pages on with `after` never passes an event that lands later.
 */
export const FEED_LAG_MS = 5_000;
/** Events of types the query did not ask for looked at per page at most, so a page still ends. */
const SCAN_LIMIT = 1_000;

export interface FeedQuery {
  after: string | null;
  types: EventType[] | null;
  channelId: string | null;
  limit: number;
}

export interface FeedPage {
  events: OutboxEvent[];
  /** Where to go on from: the last event looked at that the reader sees, or `after` again. */
  nextCursor: string | null;
  hasMore: boolean;
  /** Events made up to this time (epoch ms) are listed; later ones are held back for now. */
  untilMs: number;
}

/**
 * GET /events: the team's events the subject can see (the visibility rules, as for the channel
 * now), oldest first, after `after`. The envelopes are those webhooks deliver, with the same ids,
 * so a receiver that was down can fill the gap and de-duplicate on `id`.
 *
 * It reads only what the subject may see: the events every human of the team sees and those of
 * each private or direct channel it belongs to (a bot: those of each channel it belongs to),
 * merged in id order, each index as far as the page needs. The policy still decides each
 * channel shown. `after` is a position in time: an id nobody may see, another team's or one
 * never made are all just a place to go on from, and one past the horizon is a 410.
 */
export async function listEvents(ctx: Ctx, subject: Subject, q: FeedQuery): Promise<FeedPage> {
  if (q.after) requireWithinHorizon(q.after);
  if (q.channelId) await loadChannel(ctx, subject, q.channelId);
  // A bot's events are those of its channels: its list says which, and whether it sees them.
  const list = !q.channelId && subject.type === "bot" ? await channelListOf(ctx, subject) : null;
  const sources = list
    ? botSources(subject, list)
    : await feedSources(ctx, subject, q.channelId ? [q.channelId] : null);
  const untilMs = Date.now() - FEED_LAG_MS;
  const merged = mergedSources(ctx, sources, { after: q.after, untilMs, limit: q.limit });
  const see = list
    ? (ids: string[]) => Promise.resolve(seenIn(subject, list, ids))
    : (ids: string[]) => visibleChannelIds(ctx, subject, ids);
  return { ...await readPage({ ctx, q, merged, see }), untilMs };
}

/**
 * A bot in more channels than this reads its team's one index of events, passing those of
 * channels it isn't in, rather than one index per channel: a page then costs what it looks at,
 * not how many channels the bot is in.
 */
const TEAM_SCAN_FROM = 32;

/** A bot's sources: an index per channel, or, in many, its team's one index. */
const botSources = (subject: Subject, list: ChannelList): FeedSource[] =>
  list.channels.length > TEAM_SCAN_FROM
    ? [{ teamOf: subject.team_id, member: list.placeOf }]
    : list.channels.map((c) => ({ channelId: c.id }));

/**
 * Those of the channels `ids` the member sees now (the policy's "channel.read"), decided from its
 * channel list, which is as current as a read (channel_list.ts).
 */
function seenIn(subject: Subject, list: ChannelList, ids: string[]): Set<string> {
  return new Set(ids.filter((id) => {
    const place = list.placeOf.get(id);
    return place !== undefined &&
      permits(subject, "channel.read", { channel: list.channels[place], isMember: true });
  }));
}

/** Each index read a little beyond its share of the page, so that few need a second trip. */
const batchOf = (source: FeedSource, count: number, limit: number) =>
  "openOf" in source || count === 1
    ? limit + 1
    : Math.min(limit + 1, Math.max(4, Math.ceil((2 * limit) / count)));

/**
 * The indexes that hold the events the subject may see (of `channelIds` only, when given): the
 * team's open events and its private and direct channels', or a bot's channels'.
 */
export async function feedSources(
  ctx: Ctx,
  subject: Subject,
  channelIds: string[] | null,
): Promise<FeedSource[]> {
  if (channelIds) return channelIds.map((channelId) => ({ channelId }));
  if (subject.type === "bot") {
    return (await channelListOf(ctx, subject)).channels.map((c) => ({ channelId: c.id }));
  }
  const closed = await listClosedChannelIds(ctx.kv, subject.user_id);
  return [{ openOf: subject.team_id }, ...closed.map((id) => ({ channelId: id }))];
}

/** The sources' entries after `after`, up to `untilMs`, merged in id order. */
export function mergedSources(
  ctx: Ctx,
  sources: FeedSource[],
  { after, untilMs, limit }: { after: string | null; untilMs: number; limit: number },
): AsyncGenerator<FeedEntry> {
  return mergeSorted(
    sources.map((source) =>
      listFeedSource(ctx.kv, source, {
        after,
        untilMs,
        batch: batchOf(source, sources.length, limit),
      })
    ),
    (e) => e.id,
  );
}

/**
 * The page from the merged entries: those the policy lets the subject see (`see` says which
 * channels), of the types asked, SCAN_LIMIT entries looked at at most.
 */
async function readPage({ ctx, q, merged, see }: {
  ctx: Ctx;
  q: FeedQuery;
  merged: AsyncGenerator<FeedEntry>;
  see: (channelIds: string[]) => Promise<Set<string>>;
}): Promise<Omit<FeedPage, "untilMs">> {
  const sees = new Map<string, boolean>();
  const shown: FeedEntry[] = [];
  let last = q.after;
  let passed: string | null = null;
  let looked = 0;
  const page = async (hasMore: boolean) => ({
    events: await asTheyAreNow(ctx.kv, await readEvents(ctx.kv, shown.map((e) => e.id))),
    nextCursor: hasMore ? beyond(last, passed) : last,
    hasMore,
  });
  for (;;) {
    const want = Math.min(SCAN_LIMIT - looked, q.limit - shown.length) + 1;
    const batch = await take(merged, want);
    const unknown = [...new Set(batch.flatMap((e) => e.passed ? [] : [e.channel_id]))]
      .filter((id) => !sees.has(id));
    if (unknown.length > 0) {
      const visible = await see(unknown);
      for (const id of unknown) sees.set(id, visible.has(id));
    }
    for (const e of batch) {
      if (shown.length === q.limit || looked === SCAN_LIMIT) return await page(true);
      looked++;
      if (e.passed || !sees.get(e.channel_id)) {
        passed = e.id;
        continue;
      }
      last = e.id;
      if (!q.types || q.types.includes(e.type)) shown.push(e);
    }
    if (batch.length < want) return await page(false);
  }
}

/**
 * Where a page that ended on events the reader doesn't see goes on from: past them, without
 * naming one. The start of the last one's millisecond is a place no event is at. An event of that
 * millisecond before it that the reader saw is `last` or before it, and then `last` is where to go
 * on from; otherwise all of that millisecond up to it was hidden, and is looked at again. So a
 * cursor moves on even after a page that saw nothing.
 */
function beyond(last: string | null, passed: string | null): string | null {
  if (!passed) return last;
  const place = placeAt(idTime(passed));
  return last === null || place > last ? place : last;
}

/** Up to `n` more items of `items`. */
async function take<T>(items: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    const next = await items.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}
