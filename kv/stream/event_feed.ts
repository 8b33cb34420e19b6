import type { EventType, OutboxEvent } from "../../core/types.ts";
import { idsFrom } from "../../core/ids.ts";
import { getAll } from "../store/commit.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** What the feed's indexes keep per event: enough to filter without reading the event. */
export interface FeedEntry {
  id: string;
  type: EventType;
  channel_id: string;
  /** Of a channel the reader is not in: a place passed, never shown (a team's source only). */
  passed?: true;
}

/**
 * Where a feed reads from: the events every human of a team sees, one channel's, or all of a
 * team's, those of channels `member` doesn't hold marked as passed (for a reader in so many of
 * its channels that one index beats one per channel).
 */
export type FeedSource =
  | { openOf: string }
  | { channelId: string }
  | { teamOf: string; member: { has(channelId: string): boolean } };

const prefixOf = (source: FeedSource): Deno.KvKey =>
  "openOf" in source
    ? keys.openEvents(source.openOf)
    : "teamOf" in source
    ? keys.teamEventsOf(source.teamOf)
    : keys.channelEvents(source.channelId);

/**
 * A source's events after `after` (exclusive) in id order, those whose id was made after
 * `untilMs` left out, read `batch` index entries a round trip.
 */
export async function* listFeedSource(
  kv: Store,
  source: FeedSource,
  { after, untilMs, batch }: { after: string | null; untilMs: number; batch: number },
): AsyncGenerator<FeedEntry> {
  const prefix = prefixOf(source);
  const selector = {
    start: after ? [...prefix, after, ""] : prefix,
    end: [...prefix, idsFrom(untilMs + 1)],
  };
  const entries = kv.list<{ type: EventType; channel_id?: string }>(selector, {
    batchSize: batch,
  });
  for await (const e of entries) {
    const id = e.key.at(-1) as string;
    const channel_id = e.value.channel_id ?? (source as { channelId: string }).channelId;
    if ("teamOf" in source && !source.member.has(channel_id)) {
      yield { id, type: e.value.type, channel_id, passed: true };
    } else yield { id, type: e.value.type, channel_id };
  }
}

/** The private and direct channels a user belongs to: the sources of its feed beyond the open. */
export async function listClosedChannelIds(kv: Store, userId: string): Promise<string[]> {
  const entries = kv.list({ prefix: keys.userClosedChannels(userId) }, { batchSize: 500 });
  return (await Array.fromAsync(entries)).map((e) => e.key[2] as string);
}

/** The events themselves, in the order asked; ones expired meanwhile left out. */
export async function readEvents(kv: Store, ids: string[]): Promise<OutboxEvent[]> {
  const read = await getAll<OutboxEvent>(kv, ids.map((id) => keys.event(id)));
  return read.flatMap((e) => e.value ? [e.value] : []);
}

/**
 * The ids of the events that carry message `messageId`'s text: those its index names (events
 * written from 0.29 on), and, for events older releases wrote, those among the channel's events
 * made within `near` (the message's creation and last edit, each give or take `slackMs`).
 */
export async function eventsCarrying(
  kv: Store,
  { messageId, channelId, near, slackMs }: {
    messageId: string;
    channelId: string;
    near: number[];
    slackMs: number;
  },
): Promise<string[]> {
  const ids = new Set<string>();
  for await (const e of kv.list({ prefix: keys.messageEvents(messageId) })) {
    ids.add(e.key[2] as string);
  }
  for (const at of near) {
    const selector = {
      start: [...keys.channelEvents(channelId), idsFrom(at - slackMs)],
      end: [...keys.channelEvents(channelId), idsFrom(at + slackMs)],
    };
    for await (const e of kv.list<{ type: EventType }>(selector)) {
      const type = e.value.type;
      if (type === "message.created" || type === "message.updated") ids.add(e.key[2] as string);
    }
  }
  return [...ids];
}

/**
 * The last event before `beforeId` that carried message `messageId` (its creation or an edit):
 * the message as it was before that event, for Slack's `previous_message`. Null once expired.
 */
export async function eventCarryingBefore(
  kv: Store,
  { messageId, beforeId }: { messageId: string; beforeId: string },
): Promise<OutboxEvent | null> {
  const earlier = kv.list({
    start: keys.messageEvents(messageId),
    end: keys.messageEvent(messageId, beforeId),
  }, { reverse: true, limit: 1 });
  for await (const e of earlier) {
    return (await kv.get<OutboxEvent>(keys.event(e.key[2] as string))).value;
  }
  return null;
}
