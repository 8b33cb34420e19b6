/**
 * Ephemeral messages (decisions.md, "Ephemeral messages"): seen by one person only, on that
 * person's open streams (an SSE `message.ephemeral`, relayed to every instance) and in the answer
 * of the request that caused them. Never stored: not in the timeline, the feed, webhooks, exports
 * or logs.
 */
import type { Ctx } from "../context.ts";
import type { Block, Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import { keys } from "../../kv/keys.ts";
import { relayNotice } from "../../kv/ephemeral.ts";
import { getUser } from "../../kv/workspace.ts";
import { loadChannel } from "../channels/access.ts";
import { permits } from "../policy.ts";
import { bodyAndBlocks } from "./messages.ts";

/** What a person sees of an ephemeral message. */
export interface Ephemeral {
  channel_id: string;
  text: string;
  blocks: Block[] | null;
  /** The app whose reply it is, when an app's. */
  app_id: string | null;
}

/**
 * Shows `text` (or `blocks`) to `userId` alone in a channel: the subject must be able to post
 * there, and the person to see it (422 on `user` otherwise).
 */
export async function sendEphemeral(
  ctx: Ctx,
  subject: Subject,
  { channelId, userId, message, appId }: {
    channelId: string;
    userId: string;
    message: { body?: string | null; blocks?: unknown };
    appId?: string | null;
  },
): Promise<Ephemeral> {
  const { channel } = await loadChannel(ctx, subject, channelId, "channel.post");
  const user = isUuid(userId) ? await getUser(ctx.kv, userId.toLowerCase()) : null;
  const isMember = !!user &&
    (await ctx.kv.get(keys.member(channel.id, user.id))).versionstamp !== null;
  const principal = user &&
    { user_id: user.id, team_id: user.team_id, type: user.type, role: user.role };
  if (!user || user.deactivated_at || !permits(principal, "channel.read", { channel, isMember })) {
    throw invalid("user", "The user is not in this channel.");
  }
  const { body, blocks } = bodyAndBlocks(message, "text");
  return await showEphemeral(ctx, {
    userId: user.id,
    teamId: channel.team_id,
    ephemeral: { channel_id: channel.id, text: body, blocks, app_id: appId ?? null },
  });
}

/** Relays an ephemeral message to its person's streams, wherever they are open. */
export async function showEphemeral(
  ctx: Ctx,
  { userId, teamId, ephemeral }: { userId: string; teamId: string; ephemeral: Ephemeral },
): Promise<Ephemeral> {
  await relayNotice(ctx, teamId, {
    user_id: userId,
    channel_id: ephemeral.channel_id,
    type: "message.ephemeral",
    data: ephemeral,
  });
  return ephemeral;
}
