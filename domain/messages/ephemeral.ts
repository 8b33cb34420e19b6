/**
 * Ephemeral messages (decisions.md, "Ephemeral messages"): seen by one person only, on that
 * person's open streams (an SSE `message.ephemeral`, relayed to every instance) and in the answer
 * of the request that caused them. Never stored: not in the timeline, the feed, webhooks, exports
 * or logs.
 */
import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import type { Block, Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { newId, storedId } from "../../core/ids.ts";
import { keys } from "../../kv/keys.ts";
import { relayNotice } from "../../kv/ephemeral.ts";
import { keepEphemeral, PRESSABLE_MS } from "../../kv/apps/pressable_ephemerals.ts";
import { getUser } from "../../kv/workspace.ts";
import { loadChannel } from "../channels/access.ts";
import { permits } from "../policy.ts";
import { bodyAndBlocks } from "./messages.ts";
import { pressableElements } from "./blocks.ts";
import { mentionNames } from "./mentions.ts";
import { renderedText } from "./slack_text.ts";

/** What a person sees of an ephemeral message. */
export interface Ephemeral {
  channel_id: string;
  text: string;
  blocks: Block[] | null;
  /** The app whose reply it is, when an app's. */
  app_id: string | null;
  /**
   * Present when its person may press its elements, for 30 minutes: `POST
   * /api/v1/ephemeral/{id}/actions`. An app's ephemeral messages with elements have one.
   */
  id?: string;
}

/** The app whose ephemeral message it is, and its bot: what a press of it goes to. */
export interface EphemeralFrom {
  appId: string;
  botId: string;
}

/**
 * Shows `text` (or `blocks`) to `userId` alone in a channel: the subject must be able to post
 * there, and the person to see it (422 on `user` otherwise).
 */
export async function sendEphemeral(
  ctx: Ctx,
  subject: Subject,
  { channelId, userId, message, from }: {
    channelId: string;
    userId: string;
    message: { body?: string | null; blocks?: unknown };
    /** The app whose bot sends it, if an app's. */
    from?: EphemeralFrom | null;
  },
): Promise<Ephemeral> {
  const { channel } = await loadChannel(ctx, subject, channelId, "channel.post");
  const stored = storedId(userId);
  const user = stored ? await getUser(ctx.kv, stored) : null;
  const isMember = !!user &&
    (await ctx.kv.get(keys.member(channel.id, user.id))).versionstamp !== null;
  const principal = user &&
    { user_id: user.id, team_id: user.team_id, type: user.type, role: user.role };
  if (!user || !isActive(user) || !permits(principal, "channel.read", { channel, isMember })) {
    throw invalid("user", "The user is not in this channel.");
  }
  const { body, blocks } = bodyAndBlocks(message, "text");
  return await showEphemeral(ctx, {
    userId: user.id,
    teamId: channel.team_id,
    ephemeral: { channel_id: channel.id, text: body, blocks, app_id: from?.appId ?? null },
    from,
  });
}

/**
 * Relays an ephemeral message to its person's streams, wherever they are open. An app's, with
 * elements to press, is kept (sealed) for 30 minutes under an id it then carries.
 */
export async function showEphemeral(
  ctx: Ctx,
  { userId, teamId, ephemeral, from }: {
    userId: string;
    teamId: string;
    ephemeral: Ephemeral;
    from?: EphemeralFrom | null;
  },
): Promise<Ephemeral> {
  const held = from && pressableElements(ephemeral.blocks ?? []).length > 0
    ? await kept(ctx, { userId, teamId, ephemeral, from })
    : ephemeral;
  // Read as a message's text is: people and channels by name, Slack's markup made plain.
  const names = await mentionNames(ctx.kv, { teamId, body: ephemeral.text });
  const shown = { ...held, text: renderedText(ephemeral.text, names) };
  await relayNotice(ctx, teamId, {
    user_id: userId,
    channel_id: shown.channel_id,
    type: "message.ephemeral",
    data: shown,
  });
  return shown;
}

async function kept(
  ctx: Ctx,
  { userId, teamId, ephemeral, from }: {
    userId: string;
    teamId: string;
    ephemeral: Ephemeral;
    from: EphemeralFrom;
  },
): Promise<Ephemeral> {
  const id = newId();
  await keepEphemeral(ctx, {
    id,
    team_id: teamId,
    user_id: userId,
    channel_id: ephemeral.channel_id,
    app_id: from.appId,
    bot_id: from.botId,
    text: ephemeral.text,
    blocks: ephemeral.blocks ?? [],
    expires_at: new Date(Date.now() + PRESSABLE_MS).toISOString(),
  });
  return { ...ephemeral, id };
}
