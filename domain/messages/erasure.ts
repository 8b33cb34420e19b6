/**
 * Deleting erases the text (decisions.md, "Data over time"): events keep the message as it was
 * when they were made, so the delete rewrites every stored event that carries it (`planErasure`),
 * and whatever serves an event later (the feed, the stream, an attempt not yet sent) serves a
 * deleted message as it is now, the tombstone, in any case. An edit is not an erasure:
 * `message.created` keeps the body it was posted with.
 */
import type { Message, OutboxEvent } from "../../core/types.ts";
import { idTime } from "../../core/ids.ts";
import { getAll } from "../../kv/store/commit.ts";
import { eventsCarrying } from "../../kv/stream/event_feed.ts";
import { EVENT_TTL_MS, keys } from "../../kv/keys.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { carriedMessageId } from "../../kv/outbox/outbox.ts";
import { storedMessageView } from "../views.ts";
import type { Store } from "../../kv/store/store.ts";

/** Whether the event carries a message's text: the message whose id it names. */
export const messageIdOf = (event: OutboxEvent): string | null => carriedMessageId(event);

/** The events, each carrying its message as it is now where that message has been deleted. */
export async function asTheyAreNow(kv: Store, events: OutboxEvent[]): Promise<OutboxEvent[]> {
  const ids = [...new Set(events.map(messageIdOf).filter((id) => id !== null))];
  if (ids.length === 0) return events;
  const read = await getAll<Message>(kv, ids.map((id) => keys.message(id)));
  const deleted = new Map(read.flatMap((e) => e.value?.deleted_at ? [[e.value.id, e.value]] : []));
  return events.map((e) => erasedBy(e, deleted.get(messageIdOf(e) ?? "")));
}

/** The event as it is once `message` (the one it names, now) is deleted; unchanged if not. */
export const erasedBy = (event: OutboxEvent, message: Message | undefined | null): OutboxEvent =>
  message?.deleted_at ? { ...event, data: storedMessageView(message) } : event;

/** Events rewritten in the delete's own commit; a message edited more often has the rest after. */
const ERASED_IN_COMMIT = 20;
/** How far from its message's creation or edit an event of an older release is looked for. */
const OLD_EVENT_SLACK_MS = 10_000;

/**
 * Rewrites every stored event that carries the deleted message's text (its message.created, its
 * message.updated) to carry the tombstone instead, keeping each one's expiry: the first into `op`,
 * the delete's own commit, so a backup or export taken after the delete holds the text nowhere.
 * Returns what to run once that commit landed: the rest, for a message edited very often.
 */
export async function planErasure(
  kv: Store,
  op: Plan,
  tombstone: Message,
): Promise<() => Promise<void>> {
  const near = [Date.parse(tombstone.created_at)];
  if (tombstone.edited_at) near.push(Date.parse(tombstone.edited_at));
  const ids = await eventsCarrying(kv, {
    messageId: tombstone.id,
    channelId: tombstone.channel_id,
    near,
    slackMs: OLD_EVENT_SLACK_MS,
  });
  const entries = (await getAll<OutboxEvent>(kv, ids.map((id) => keys.event(id))))
    .filter((e) => e.value !== null && messageIdOf(e.value) === tombstone.id);
  // Unchecked: nothing but an erasure changes an event, and the delete's commit has few checks
  // to spare (KV Connect allows 10).
  const rewrite = (into: Plan, e: Deno.KvEntryMaybe<OutboxEvent>) => {
    const expireIn = idTime(e.value!.id) + EVENT_TTL_MS - Date.now();
    if (expireIn > 0) into.set(e.key, erasedBy(e.value!, tombstone), { expireIn });
  };
  const [now, later] = [entries.slice(0, ERASED_IN_COMMIT), entries.slice(ERASED_IN_COMMIT)];
  for (const e of now) rewrite(op, e);
  return async () => {
    for (const e of later) {
      const next = kv.atomic();
      rewrite(next, e);
      await next.commit();
    }
  };
}
