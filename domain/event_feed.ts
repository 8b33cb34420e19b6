import type { Ctx } from "../core/context.ts";
import type { EventType, OutboxEvent, Subject } from "../core/types.ts";
import { loadChannel, visibleChannelIds } from "./channels.ts";
import { verifySubject } from "./authenticate.ts";
import { type FeedEntry, listTeamEvents, readEvents } from "../kv/event_feed.ts";

/**
 * Events younger than this are not listed yet. An event's id is made just before its commit, so
 * two commits can land in the other order than their ids; holding back the last few seconds
 * means a client that pages on with `after` never passes an event that lands later.
 */
export const FEED_LAG_MS = 5_000;
/** Index entries looked at per page at most, so a page of hidden events still ends. */
const SCAN_LIMIT = 1_000;

export interface FeedQuery {
  after: string | null;
  types: EventType[] | null;
  channelId: string | null;
  limit: number;
}

export interface FeedPage {
  events: OutboxEvent[];
  /** Where to go on from: the last event looked at (shown or not), or `after` again. */
  nextCursor: string | null;
  hasMore: boolean;
}

/**
 * GET /events: the team's events the subject can see (the visibility rules, as for the channel
 * now), oldest first, after `after`. The envelopes are those webhooks deliver, with the same ids,
 * so a receiver that was down can fill the gap and de-duplicate on `id`.
 *
 * The index is read a little beyond what the page still needs, and again while it falls short:
 * a page costs what its `limit` asks, not SCAN_LIMIT entries.
 */
export async function listEvents(ctx: Ctx, subject: Subject, q: FeedQuery): Promise<FeedPage> {
  await verifySubject(ctx, subject);
  if (q.channelId) await loadChannel(ctx, subject, q.channelId);
  const until = Date.now() - FEED_LAG_MS;
  const sees = new Map<string, boolean>();
  const shown: FeedEntry[] = [];
  let last = q.after;
  let scanned = 0;
  const page = async (hasMore: boolean): Promise<FeedPage> => ({
    events: await readEvents(ctx.kv, shown.map((e) => e.id)),
    nextCursor: last,
    hasMore,
  });
  for (;;) {
    const want = Math.min(SCAN_LIMIT - scanned, 2 * (q.limit - shown.length) + 1);
    const { entries, reachedEnd } = await listTeamEvents(
      ctx.kv,
      subject.team_id,
      last,
      until,
      want,
    );
    const wanted = entries.filter((e) => asked(q, e));
    const unknown = [...new Set(wanted.map((e) => e.channel_id))].filter((id) => !sees.has(id));
    if (unknown.length > 0) {
      const visible = await visibleChannelIds(ctx, subject, unknown);
      for (const id of unknown) sees.set(id, visible.has(id));
    }
    for (const e of entries) {
      if (shown.length === q.limit) return await page(true);
      last = e.id;
      scanned++;
      if (asked(q, e) && sees.get(e.channel_id)) shown.push(e);
    }
    if (reachedEnd || shown.length === q.limit || scanned >= SCAN_LIMIT) {
      return await page(!reachedEnd);
    }
  }
}

/** Whether the query asked for this event (its types and channel), seen or not. */
const asked = (q: FeedQuery, e: FeedEntry) =>
  (!q.types || q.types.includes(e.type)) && (!q.channelId || e.channel_id === q.channelId);
