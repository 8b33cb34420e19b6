/**
 * Changing a channel after it is made: its name (its creator or a team admin), its topic and
 * purpose (its members). `PATCH /channels/{channel}`; Slack's conversations.rename, setTopic and
 * setPurpose.
 */
import type { Ctx } from "../context.ts";
import type { Channel, Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { checkOptionalName } from "../text.ts";
import { authorize } from "../policy.ts";
import { channelAndMembership, channelName, NAME_TAKEN } from "./channels.ts";
import { updateChannel } from "../../kv/channels.ts";
import { keys } from "../../kv/keys.ts";

/** What a change sets: any of them; a topic or purpose of null clears it. */
export interface ChannelChange {
  name?: string;
  topic?: string | null;
  purpose?: string | null;
}

/**
 * Changes a channel in one commit, each part by its own rule: a name by "channel.rename" (the
 * slug follows, and no other channel of the team may hold it), a topic or purpose by
 * "channel.describe". Every field is checked before anything is read.
 */
export function changeChannel(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  change: ChannelChange,
): Promise<Channel> {
  const fields = checkedChange(change);
  return retrying("change channel", async () => {
    // A rename's rule reaches a private channel an admin is not in; a description's needs the
    // membership, which a plain load skips for a human in a public channel.
    const { entry, channel, isMember } = await channelAndMembership(
      ctx,
      subject,
      channelId,
      fields.slug === undefined ? "channel.read" : "channel.rename",
    );
    if ("topic" in fields || "purpose" in fields) {
      authorize(subject, "channel.describe", { channel, isMember });
    }
    // Nothing asked: the channel as it is, as Stripe answers an empty update.
    if (Object.keys(fields).length === 0) return channel;
    if (fields.slug !== undefined && fields.slug !== channel.slug) {
      const holder = await ctx.kv.get<string>(keys.channelSlug(channel.team_id, fields.slug));
      if (holder.value !== null) throw invalid("name", NAME_TAKEN);
    }
    const next = { ...channel, ...fields };
    return await updateChannel(ctx.kv, entry, next) ? next : null;
  });
}

/** The change's fields as the record holds them, each checked. */
function checkedChange(change: ChannelChange): Partial<Channel> {
  const fields: Partial<Channel> = {};
  if (change.name !== undefined) Object.assign(fields, channelName(change.name));
  if (change.topic !== undefined) fields.topic = checkOptionalName("topic", change.topic);
  if (change.purpose !== undefined) fields.purpose = checkOptionalName("purpose", change.purpose);
  return fields;
}
