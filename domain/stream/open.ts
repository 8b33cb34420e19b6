/**
 * Opening an event stream (GET /events/stream) for a token's subject: what it may ask for, and
 * where a resumed stream starts. The hub serves it (domain/stream/hub.ts).
 */
import type { Ctx } from "../context.ts";
import { invalid } from "../../core/errors.ts";
import { idTime } from "../../core/ids.ts";
import type { Subject } from "../../core/types.ts";
import { readEvents } from "../../kv/stream/event_feed.ts";
import { type LogPosition, positionAt, positionOf } from "../../kv/stream/stream_log.ts";
import { decodeCursor } from "./cursor.ts";
import { visibleChannelIds } from "../channels/access.ts";
import type { StreamFilter } from "./audience.ts";
import { FEED_LAG_MS } from "./feed.ts";
import { requireWithinHorizon } from "./horizon.ts";
import type { StreamHub } from "./hub.ts";
import type { OpenedStream } from "./state.ts";

/** What a client asks a stream for, shape-checked at the edge. */
export interface StreamQuery {
  types: StreamFilter["types"];
  channelIds: string[] | null;
  /** A stream's SSE id or an event id to resume after (Last-Event-ID, or `after`); null: now. */
  after: string | null;
  /** Settles when the server is done with the response: what a cut-off stream waits for. */
  done?: Promise<void>;
}

/**
 * Opens an event stream for a token's subject (GET /events/stream): `channel_ids` must name
 * channels it can see, refused exactly like unknown ones (422, as for a subscription); a resume
 * position is resolved by `resumeFrom`.
 */
export async function openEventStream(
  ctx: Ctx,
  hub: StreamHub,
  subject: Subject,
  query: StreamQuery,
): Promise<OpenedStream> {
  if (query.channelIds) {
    const visible = await visibleChannelIds(ctx, subject, query.channelIds);
    if (query.channelIds.some((id) => !visible.has(id))) {
      throw invalid("channel_ids", "Every channel id must name a channel of this workspace.");
    }
  }
  const from = query.after === null ? null : await resumeFrom(ctx, subject, query.after);
  const filter = { types: query.types, channelIds: query.channelIds };
  return await hub.open({ subject, filter, from, done: query.done });
}

/**
 * Where a stream resumes: after an SSE id's place in the log (where its event still stands
 * there); after the place of an event the subject sees; and for any other event id (hidden, another team's, never made), alike,
 * from a little before the time its id carries (FEED_LAG_MS: commits land in about id order),
 * so nothing after it is skipped, and nothing tells those apart. Past the horizon, a 410.
 */
async function resumeFrom(ctx: Ctx, subject: Subject, text: string): Promise<LogPosition> {
  const asked = decodeCursor(text);
  if (!asked) {
    throw invalid("after", "The after cursor must be an event stream id or an event id.");
  }
  const id = "eventId" in asked ? asked.eventId : asked.id;
  requireWithinHorizon(id);
  const exact = await positionOf(ctx.kv, subject.team_id, id);
  // An SSE id names its event's place in this store: one from a store this one was moved or
  // restored from does not, and goes by its event as any other id.
  if (!("eventId" in asked) && exact?.versionstamp === asked.versionstamp) return asked;
  const event = exact && (await readEvents(ctx.kv, [id]))[0];
  if (event && (await visibleChannelIds(ctx, subject, [event.channel_id])).size > 0) return exact!;
  return await positionAt(ctx.kv, subject.team_id, idTime(id) - FEED_LAG_MS);
}
