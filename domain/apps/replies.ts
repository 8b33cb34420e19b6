/**
 * An app's reply to a person (a command's answer, a post to its `response_url`): Slack's `{ text,
 * blocks, response_type }`. `ephemeral` (the default) goes to that person alone; `in_channel`
 * posts a message in the channel, written by the app's bot, where the person may post.
 */
import type { Ctx } from "../context.ts";
import { type MemberRef, type Message, SCOPES, type Subject } from "../../core/types.ts";
import type { App } from "../../core/app_records.ts";
import { invalid } from "../../core/errors.ts";
import { bodyAndBlocks, postMessageWith } from "../messages/messages.ts";
import { deleteMessage, editMessage } from "../messages/changes.ts";
import { type Ephemeral, showEphemeral } from "../messages/ephemeral.ts";

export interface AppReply {
  text: string | null;
  blocks: unknown;
  attachments: unknown;
  response_type: "ephemeral" | "in_channel";
  /** For a reply to an action: the message it came from is replaced, or deleted. */
  replace_original: boolean;
  delete_original: boolean;
}

/** A reply as an app wrote it: JSON, or plain text (Slack takes both); 422 when it is neither. */
export function readReply(text: string): AppReply {
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // Plain text: the reply's text.
  }
  if (typeof value === "string") return replyOf({ text: value });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid("reply", "a reply that is neither a JSON object nor text");
  }
  return replyOf(value as Record<string, unknown>);
}

/** A reply's fields, as given (only a string text counts). */
export function replyOf(v: Record<string, unknown>): AppReply {
  return {
    text: typeof v.text === "string" ? v.text : null,
    blocks: v.blocks,
    attachments: v.attachments,
    response_type: v.response_type === "in_channel" ? "in_channel" : "ephemeral",
    replace_original: v.replace_original === true || v.replace_original === "true",
    delete_original: v.delete_original === true || v.delete_original === "true",
  };
}

/** The app's bot, acting on a message it wrote (the policy still decides, as for any bot). */
const botSubject = (bot: MemberRef, teamId: string): Subject => ({
  user_id: bot.id,
  team_id: teamId,
  name: bot.name,
  type: "bot",
  role: null,
  token_id: "",
  scopes: [...SCOPES],
});

/**
 * Delivers a reply: in the channel as a message of the app's bot (checked as the person's post:
 * a channel it may post in), or to the person alone. A reply to an action (`original`, the
 * message pressed, written by the bot) may instead replace that message or delete it, as the bot.
 * Blocks are checked as any writer's are.
 */
export async function deliverReply(
  ctx: Ctx,
  { reply, invoker, channelId, app, bot, original }: {
    reply: AppReply;
    invoker: Subject;
    channelId: string;
    app: App;
    bot: MemberRef;
    original?: string | null;
  },
): Promise<{ ephemeral: Ephemeral | null; message: Message | null }> {
  const given = { body: reply.text, blocks: reply.blocks, attachments: reply.attachments };
  if (original && (reply.delete_original || reply.replace_original)) {
    const asBot = botSubject(bot, invoker.team_id);
    const ref = { channelId, messageId: original };
    if (reply.delete_original) {
      await deleteMessage(ctx, asBot, channelId, original);
      return { ephemeral: null, message: null };
    }
    return {
      ephemeral: null,
      message: await editMessage(ctx, asBot, ref, { ok: true, value: given }),
    };
  }
  if (reply.response_type === "in_channel") {
    const { message } = await postMessageWith(ctx, invoker, {
      channelId,
      input: { ok: true, value: given },
      bodyField: "text",
      author: bot,
    });
    return { ephemeral: null, message };
  }
  const { body, blocks } = bodyAndBlocks(given, "text");
  const ephemeral = await showEphemeral(ctx, {
    userId: invoker.user_id,
    teamId: invoker.team_id,
    ephemeral: { channel_id: channelId, text: body, blocks, app_id: app.id },
    from: { appId: app.id, botId: bot.id },
  });
  return { ephemeral, message: null };
}
