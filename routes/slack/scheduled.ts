/** `chat.scheduleMessage`, `chat.deleteScheduledMessage`, `chat.scheduledMessages.list`. */
import { z } from "zod";
import type { ScheduledMessage } from "../../core/scheduled_records.ts";
import {
  listScheduled,
  scheduleMessage,
  unscheduleMessage,
} from "../../domain/messages/scheduled.ts";
import { messageIdByTs } from "../../domain/messages/by_ts.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, blocksArg, contentOf, countArg, flagArg, markdownArg } from "./args.ts";
import { offsetPage } from "./paging.ts";

/** Unix seconds, as a number or a form's text; NaN when it is none. */
const secondsArg = z.union([z.number(), z.string()]).transform((v) => Number(v));

const schedule = z.object({
  channel: z.string(),
  post_at: secondsArg,
  text: z.string().optional(),
  markdown_text: markdownArg,
  blocks: blocksArg,
  attachments: blocksArg,
  thread_ts: z.string().optional(),
  reply_broadcast: flagArg,
  metadata: z.unknown().optional(),
});

const unschedule = z.object({ channel: z.string(), scheduled_message_id: z.string() });

const listing = z.object({
  channel: z.string().optional(),
  oldest: secondsArg.optional(),
  latest: secondsArg.optional(),
  limit: countArg(100, 1000),
  cursor: z.string().optional(),
});

/** What Slack answers of a message not yet posted. */
const pendingMessage = (m: ScheduledMessage, botId: string | null) => ({
  type: "delayed_message",
  text: m.body,
  user: m.author_id,
  ...(botId ? { bot_id: botId } : {}),
  ...(m.blocks ? { blocks: m.blocks } : {}),
  ...(m.attachments ? { attachments: m.attachments } : {}),
});

async function scheduleCall({ ctx, subject, params }: MethodCall) {
  const p = args(schedule, params);
  const threadRootId = p.thread_ts
    ? await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.thread_ts })
    : null;
  const m = await scheduleMessage(ctx, subject, {
    channelId: p.channel,
    postAt: p.post_at,
    message: {
      ...contentOf(p),
      attachments: p.attachments,
      sent_to_channel: p.reply_broadcast,
      metadata: p.metadata,
    },
    threadRootId,
  });
  return {
    channel: m.channel_id,
    scheduled_message_id: m.id,
    post_at: m.post_at,
    message: pendingMessage(m, subject.type === "bot" ? subject.user_id : null),
  };
}

async function unscheduleCall({ ctx, subject, params }: MethodCall) {
  const p = args(unschedule, params);
  await unscheduleMessage(ctx, subject, { channelId: p.channel, id: p.scheduled_message_id });
  return {};
}

async function listCall({ ctx, subject, params }: MethodCall) {
  const p = args(listing, params);
  const all = await listScheduled(ctx, subject, {
    channelId: p.channel,
    oldest: p.oldest,
    latest: p.latest,
  });
  const page = offsetPage(all, p);
  return {
    scheduled_messages: page.items.map((m) => ({
      id: m.id,
      channel_id: m.channel_id,
      post_at: m.post_at,
      date_created: m.created_at,
      text: m.body,
    })),
    response_metadata: { next_cursor: page.next ?? "" },
  };
}

export const scheduledMethods: Record<string, Method> = {
  "chat.scheduleMessage": { scope: "messages:write", run: scheduleCall },
  "chat.deleteScheduledMessage": { scope: "messages:write", run: unscheduleCall },
  "chat.scheduledMessages.list": { scope: "messages:write", run: listCall },
};
