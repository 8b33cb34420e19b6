/**
 * A stream far behind its team catches up from what its reader may see, not from the team's
 * whole log (issue 33): the feed's indexes give the reader's events in id order, and each event's
 * entry gives its place in commit order (its versionstamp). Ids are made just before their
 * commit, at most FEED_LAG_MS before it (the feed relies on the same), so once the events with
 * ids up to I are read, every event the reader may see that committed before one of them whose
 * id is FEED_LAG_MS older than I has been read too: those, in commit order, are a page.
 */
import type { Ctx } from "../context.ts";
import { idsFrom, idTime } from "../../core/ids.ts";
import type { Subject } from "../../core/types.ts";
import { getAll } from "../../kv/store/commit.ts";
import type { FeedEntry } from "../../kv/stream/event_feed.ts";
import { keys } from "../../kv/keys.ts";
import { after, type LogPosition } from "../../kv/stream/stream_log.ts";
import type { LoggedEvent } from "../../kv/stream/stream_markers.ts";
import { FEED_LAG_MS, feedSources, mergedSources } from "./feed.ts";
import type { StreamFilter } from "./audience.ts";

/** A stream whose cursor is older than this catches up from its reader's indexes. */
const FAR_BEHIND_MS = 4 * FEED_LAG_MS;

export const isFarBehind = (cursor: LogPosition) =>
  cursor.id === "" || idTime(cursor.id) < Date.now() - FAR_BEHIND_MS;

export interface CatchUpPage {
  /** The events after the cursor, up to `frontier`, in commit order. */
  events: LoggedEvent[];
  /** Where the page ends: everything the reader may see up to it is in `events`. */
  frontier: LogPosition;
}

/**
 * The events after `from` that `subject` may see (of `filter.channelIds`, when given), in
 * commit order, about `limit` of them; null when no page can end yet (the stream is near its
 * team's end: the team's log takes it from there).
 */
export async function visiblePage(
  ctx: Ctx,
  { subject, filter, cursor: from }: {
    subject: Subject;
    filter: StreamFilter;
    cursor: LogPosition;
  },
  limit: number,
): Promise<CatchUpPage | null> {
  const now = Date.now();
  const sources = await feedSources(ctx, subject, filter.channelIds);
  // Ids a little older than the cursor's may have committed after it.
  const lowest = from.id === "" ? null : idsFrom(idTime(from.id) - FEED_LAG_MS);
  // `limit` events, and those made up to FEED_LAG_MS after the last of them: the page then ends
  // after the first `limit` at least.
  const read: FeedEntry[] = [];
  let exhausted = true;
  let closeAt = Infinity;
  for await (const e of mergedSources(ctx, sources, { after: lowest, untilMs: now, limit })) {
    if (idTime(e.id) > closeAt) {
      exhausted = false;
      break;
    }
    read.push(e);
    if (read.length === limit) closeAt = idTime(e.id) + FEED_LAG_MS;
  }
  const entries = await getAll(ctx.kv, read.map((e) => keys.event(e.id)));
  const placed = read.flatMap((e, i) => {
    const versionstamp = entries[i].versionstamp;
    return versionstamp === null ? [] : [{ ...e, versionstamp, marker: e.id }];
  });
  const readUpTo = exhausted ? now : idTime(read.at(-1)!.id);
  const closed = placed.filter((e) => idTime(e.id) <= readUpTo - FEED_LAG_MS);
  if (closed.length === 0) return null;
  const frontier = closed.reduce((a, b) => after(b, a) ? b : a);
  if (!after(frontier, from)) return null;
  const events = placed
    .filter((e) => after(e, from) && !after(e, frontier))
    .sort((a, b) => after(a, b) ? 1 : after(b, a) ? -1 : 0);
  return { events, frontier: { versionstamp: frontier.versionstamp, id: frontier.id } };
}
