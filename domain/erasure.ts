/**
 * Deleting erases the text (decisions.md, "Data over time"): events keep the message as it was
 * when they were made, so whatever serves an event later (the feed, the stream, an attempt not
 * yet sent) serves a deleted message as it is now, the tombstone, instead. An edit is not an
 * erasure: `message.created` keeps the body it was posted with.
 */
import type { Message, OutboxEvent } from "../core/types.ts";
import { getAll } from "../kv/commit.ts";
import { keys } from "../kv/keys.ts";
import { messageView } from "./views.ts";
import type { Store } from "../kv/store.ts";

/** Whether the event carries a message's text: the message whose id it names. */
export function messageIdOf(event: OutboxEvent): string | null {
  if (event.type !== "message.created" && event.type !== "message.updated") return null;
  const id = (event.data as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : null;
}

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
  message?.deleted_at ? { ...event, data: messageView(message) } : event;
