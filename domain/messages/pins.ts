/**
 * Pinned messages (Slack's `pins.*`, decisions.md "More of the Web API"): whoever may post in a
 * channel pins one of its live messages, or unpins it; whoever reads the channel lists them. A
 * delete takes the message's pin with it (domain/messages/changes.ts).
 */
import type { Ctx } from "../context.ts";
import type { Message, Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { checksOf, loadChannel, loadChannelWith } from "../channels/access.ts";
import { authorize } from "../policy.ts";
import { messageIn, messageKeyFor } from "./access.ts";
import { isSystem } from "./draft.ts";

/** Who pinned a message, and when. */
export interface Pin {
  pinned_by: string;
  pinned_at: string;
}

/** Pins a message (`present`) or unpins it; 422 on `message` when it already is, or isn't. */
export function pinMessage(
  ctx: Ctx,
  subject: Subject,
  { channelId, messageId, present }: { channelId: string; messageId: string; present: boolean },
): Promise<void> {
  const stored = storedId(messageId);
  return retrying("pin", async () => {
    const read = await loadChannelWith<{ message: Message; pin: Pin }>(ctx, subject, channelId, {
      extra: {
        message: messageKeyFor(messageId),
        pin: stored ? keys.pin(channelId, stored) : null,
      },
      reads: "fresh",
    });
    const message = messageIn(read.channel, read.extra.message);
    authorize(subject, "message.pin", read);
    if (message.value.deleted_at || isSystem(message.value)) {
      throw invalid("message", "A deleted message or a notice can't be pinned.");
    }
    const pinned = read.extra.pin;
    if ((pinned.versionstamp !== null) === present) {
      throw invalid("message", present ? "The message is pinned already." : "It is not pinned.");
    }
    const op = ctx.kv.atomic().check(...checksOf(read), message, pinned);
    const key = keys.pin(channelId, message.value.id);
    if (present) op.set(key, { pinned_by: subject.user_id, pinned_at: nowIso() });
    else op.delete(key);
    return (await op.commit()).ok ? true : null;
  }).then(() => {});
}

/** A channel's pinned messages, newest pin first, with who pinned each. */
export async function listPins(ctx: Ctx, subject: Subject, channelId: string) {
  const { channel } = await loadChannel(ctx, subject, channelId);
  const pins = await Array.fromAsync(ctx.kv.list<Pin>({ prefix: keys.pins(channel.id) }));
  const messages = await getAll<Message>(ctx.kv, pins.map((p) => keys.message(p.key[2] as string)));
  return pins.flatMap((p, i) => {
    const message = messages[i].value;
    return message && !message.deleted_at ? [{ message, pin: p.value }] : [];
  }).sort((a, b) => b.pin.pinned_at.localeCompare(a.pin.pinned_at));
}
