/**
 * A message named by its Slack-style `ts` (decisions.md, "The Slack Web API subset"): the
 * channel's index from `ts` to id, read with the channel's access, so the same rules decide.
 */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { keys } from "../../kv/keys.ts";
import { loadChannelWith } from "../channels/access.ts";

const TS = /^[0-9]{1,12}\.[0-9]{6}$/;

/**
 * The id of the message `ts` names in the channel, which the subject must see (the channel's 404
 * otherwise); a `ts` that names nothing there is the message's 404. Messages stored before 0.29
 * have no `ts` index and are not found by it.
 */
export async function messageIdByTs(
  ctx: Ctx,
  subject: Subject,
  { channelId, ts }: { channelId: string; ts: string },
): Promise<string> {
  const read = await loadChannelWith<{ id: string }>(ctx, subject, channelId, {
    extra: { id: TS.test(ts) ? keys.messageTs(channelId, ts) : null },
  });
  const id = read.extra.id.value;
  if (!id) throw notFound("Message not found.");
  return id;
}
