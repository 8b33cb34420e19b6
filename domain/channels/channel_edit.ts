/**
 * Changing a channel after it is made: its name (its creator or a team admin), its topic and
 * purpose (its members). Slack's conversations.rename, setTopic and setPurpose.
 */
import type { Ctx } from "../context.ts";
import type { Channel, MemberRef, Subject } from "../../core/types.ts";
import { storedId } from "../../core/ids.ts";
import { invalid } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { checkName } from "../text.ts";
import { loadChannel, loadChannelWith } from "./access.ts";
import { authorize } from "../policy.ts";
import { channelName, NAME_TAKEN } from "./channels.ts";
import { updateChannel } from "../../kv/channels.ts";
import { keys } from "../../kv/keys.ts";

/** Renames a channel; its slug follows, and no other channel of the team may hold it. */
export function renameChannel(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  given: string,
): Promise<Channel> {
  const { name, slug } = channelName(given);
  return retrying("rename channel", async () => {
    const { entry, channel } = await loadChannel(ctx, subject, channelId, "channel.rename");
    if (slug !== channel.slug) {
      const holder = await ctx.kv.get<string>(keys.channelSlug(channel.team_id, slug));
      if (holder.value !== null) throw invalid("name", NAME_TAKEN);
    }
    const next = { ...channel, name, slug };
    return await updateChannel(ctx.kv, entry, next) ? next : null;
  });
}

/** What `describeChannel` sets: either or both; an empty text clears it. */
export interface Description {
  topic?: string;
  purpose?: string;
}

/** Sets a channel's topic or purpose, each by the rule for names (as a new channel's topic). */
export function describeChannel(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  change: Description,
): Promise<Channel> {
  const checked = Object.fromEntries(
    Object.entries(change).flatMap(([field, text]) =>
      text === undefined ? [] : [[field, text === "" ? null : checkName(field, text)]]
    ),
  );
  const stored = storedId(channelId);
  return retrying("describe channel", async () => {
    // Membership decides here even for a human in a public channel, so it is always read.
    const read = await loadChannelWith<{ membership: MemberRef }>(ctx, subject, channelId, {
      extra: { membership: stored ? keys.member(stored, subject.user_id) : null },
    });
    const { entry, channel, extra } = read;
    const isMember = extra.membership.versionstamp !== null;
    authorize(subject, "channel.describe", { channel, isMember });
    const next = { ...channel, ...checked };
    return await updateChannel(ctx.kv, entry, next) ? next : null;
  });
}
