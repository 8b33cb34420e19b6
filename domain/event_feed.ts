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
 */
export async function listEvents(ctx: Ctx, subject: Subject, q: FeedQuery): Promise<FeedPage> {
  await verifySubject(ctx, subject);
  if (q.channelId) await loadChannel(ctx, subject, q.channelId);
  const { entries, reachedEnd } = await listTeamEvents(
    ctx.kv,
    subject.team_id,
    q.after,
    Date.now() - FEED_LAG_MS,
    SCAN_LIMIT,
  );
  const wanted = new Set(
    entries.filter((e) =>
      (!q.types || q.types.includes(e.type)) && (!q.channelId || e.channel_id === q.channelId)
    ),
  );
  const visible = await visibleChannelIds(ctx, subject, [
    ...new Set([...wanted].map((e) => e.channel_id)),
  ]);
  const shown: FeedEntry[] = [];
  let last = q.after;
  let more = !reachedEnd;
  for (const e of entries) {
    if (shown.length === q.limit) {
      more = true;
      break;
    }
    last = e.id;
    if (wanted.has(e) && visible.has(e.channel_id)) shown.push(e);
  }
  return {
    events: await readEvents(ctx.kv, shown.map((e) => e.id)),
    nextCursor: last,
    hasMore: more,
  };
}
