import type { Channel, Message } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { storedId } from "../../core/ids.ts";
import { keys } from "../../kv/keys.ts";
import { LockKind } from "../../core/memory.ts";

/**
 * Changes to one message (edit, delete, reactions) queue up in this process instead of racing
 * each other's versionstamp checks: a popular message gets many reactions at once, and
 * optimistic retries alone would starve some of them. Other processes still meet the checks.
 */
export const MESSAGE_LOCKS = new LockKind("messages");

/** The key of the message an id names, or null when the id can't name one (not a uuid). */
export const messageKeyFor = (id: string | null | undefined) => {
  const stored = storedId(id);
  return stored ? keys.message(stored) : null;
};

/** The message entry when it exists in this channel; else the 404 (other channels included). */
export function messageIn(
  channel: Channel,
  entry: Deno.KvEntryMaybe<Message> | undefined,
): Deno.KvEntry<Message> {
  if (!entry?.value || entry.value.channel_id !== channel.id) {
    throw notFound("Message not found.");
  }
  return entry as Deno.KvEntry<Message>;
}
