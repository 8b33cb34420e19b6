/**
 * What each open stream is sent of a page of its team's log: the events its reader may see and
 * asked for, after its cursor, as they stand now (erased where deleted), in order. Streams sent
 * the same events share one batch.
 */
import type { Ctx } from "../context.ts";
import type { OutboxEvent, Subject } from "../../core/types.ts";
import { readEvents } from "../../kv/stream/event_feed.ts";
import { after, type LogPosition } from "../../kv/stream/stream_log.ts";
import type { LoggedEvent } from "../../kv/stream/stream_markers.ts";
import { encodeCursor } from "./cursor.ts";
import { selectFor, type StreamFilter } from "./audience.ts";
import { envelopeOf } from "../views.ts";
import { asTheyAreNow } from "../messages/erasure.ts";
import { StreamBatch, StreamedEvent } from "./sink.ts";

/** A stream as delivery sees it. */
export interface Reader {
  subject: Subject;
  filter: StreamFilter;
  /** The last event sent (or the position it started from): moved past the page. */
  cursor: LogPosition;
}

/**
 * Hands each reader its share of `events` through `send`, and moves every reader's cursor past
 * the page, sent or not (a resumed stream starts after it). Returns the sends, each settling once
 * its reader has taken its batch: a stream catching up waits for them, a round does not.
 */
export async function deliver<R extends Reader>(
  ctx: Ctx,
  events: LoggedEvent[],
  readers: R[],
  send: (reader: R, batch: StreamBatch) => Promise<void>,
): Promise<Promise<void>[]> {
  if (events.length === 0 || readers.length === 0) return [];
  const picks = await selectFor(ctx, events, readers);
  const wanted = [...new Set(picks.flat())].sort((a, b) => a - b);
  const streamed = wanted.length > 0 ? await streamedAt(ctx, events, wanted) : [];
  const batches = new Map<string, StreamBatch>();
  const taken: Promise<void>[] = [];
  readers.forEach((reader, n) => {
    const mine = picks[n].filter((i) => streamed[i] && after(events[i], reader.cursor));
    if (mine.length === 0) return;
    const key = mine.join(",");
    let batch = batches.get(key);
    if (!batch) batches.set(key, batch = new StreamBatch(mine.map((i) => streamed[i]!)));
    taken.push(send(reader, batch));
  });
  const last = events.at(-1)!;
  for (const reader of readers) if (after(last, reader.cursor)) reader.cursor = last;
  return taken;
}

/** The events at `wanted` as streams send them, erased where deleted; by place in `events`. */
async function streamedAt(
  ctx: Ctx,
  events: LoggedEvent[],
  wanted: number[],
): Promise<(StreamedEvent | null)[]> {
  const bodies = new Map<string, OutboxEvent>();
  const read = await readEvents(ctx.kv, wanted.map((i) => events[i].id));
  for (const e of await asTheyAreNow(ctx.kv, read)) bodies.set(e.id, e);
  return events.map((e) => {
    const body = bodies.get(e.id);
    return body ? new StreamedEvent(encodeCursor(e), e.type, envelopeOf(body)) : null;
  });
}
