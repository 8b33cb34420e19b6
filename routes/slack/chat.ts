/** `chat.*`: posting, updating and deleting as the REST API's message operations do. */
import { z } from "zod";
import { postMessage } from "../../domain/messages/messages.ts";
import { deleteMessage, editMessage } from "../../domain/messages/changes.ts";
import { messageIdByTs } from "../../domain/messages/by_ts.ts";
import { sendEphemeral } from "../../domain/messages/ephemeral.ts";
import { installOfBot } from "../../domain/apps/bot_install.ts";
import { answered } from "../../domain/apps/agent_display.ts";
import { slackMessage } from "../../domain/slack/shapes.ts";
import type { Method, MethodCall } from "./method.ts";
import { args, blocksArg, contentOf, flagArg, markdownArg } from "./args.ts";
import { tsOfMs } from "../../core/ids.ts";

const post = z.object({
  channel: z.string(),
  text: z.string().optional(),
  markdown_text: markdownArg,
  blocks: blocksArg,
  attachments: blocksArg,
  thread_ts: z.string().optional(),
  reply_broadcast: flagArg,
  metadata: z.unknown().optional(),
});

const update = z.object({
  channel: z.string(),
  ts: z.string(),
  text: z.string().optional(),
  markdown_text: markdownArg,
  blocks: blocksArg,
  attachments: blocksArg,
  metadata: z.unknown().optional(),
});

const ephemeral = z.object({
  channel: z.string(),
  user: z.string(),
  text: z.string().optional(),
  markdown_text: markdownArg,
  blocks: blocksArg,
});

const byTs = z.object({ channel: z.string(), ts: z.string() });
const permalink = z.object({ channel: z.string(), message_ts: z.string() });

async function postMessageCall({ ctx, subject, params }: MethodCall) {
  const p = args(post, params);
  const threadRootId = p.thread_ts
    ? await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.thread_ts })
    : null;
  const { message } = await postMessage(ctx, subject, p.channel, {
    ok: true,
    value: {
      ...contentOf(p),
      attachments: p.attachments,
      thread_root_id: threadRootId,
      sent_to_channel: p.reply_broadcast,
      metadata: p.metadata,
    },
  });
  // An agent's reply in its thread ends the status it showed there.
  await answered(ctx, message);
  return {
    channel: message.channel_id,
    ts: message.ts,
    message: slackMessage(message, { metadata: true }),
  };
}

async function updateCall({ ctx, subject, params }: MethodCall) {
  const p = args(update, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.ts });
  const edited = await editMessage(ctx, subject, { channelId: p.channel, messageId }, {
    ok: true,
    value: {
      ...contentOf(p),
      attachments: p.attachments,
      metadata: p.metadata,
    },
  });
  return {
    channel: edited.channel_id,
    ts: p.ts,
    text: edited.body,
    message: slackMessage(edited, { metadata: true }),
  };
}

async function deleteCall({ ctx, subject, params }: MethodCall) {
  const p = args(byTs, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.ts });
  await deleteMessage(ctx, subject, p.channel, messageId);
  return { channel: p.channel, ts: p.ts };
}

async function permalinkCall({ ctx, subject, params }: MethodCall) {
  const p = args(permalink, params);
  const messageId = await messageIdByTs(ctx, subject, { channelId: p.channel, ts: p.message_ts });
  return {
    channel: p.channel,
    permalink: `${ctx.settings.baseUrl}/api/v1/channels/${p.channel}/messages/${messageId}`,
  };
}

async function ephemeralCall({ ctx, subject, params }: MethodCall) {
  const p = args(ephemeral, params);
  const install = subject.type === "bot"
    ? await installOfBot(ctx, { teamId: subject.team_id, botId: subject.user_id })
    : null;
  await sendEphemeral(ctx, subject, {
    channelId: p.channel,
    userId: p.user,
    message: contentOf(p),
    from: install && { appId: install.app_id, botId: subject.user_id },
  });
  return { message_ts: tsOfMs(Date.now()) };
}

export const chatMethods: Record<string, Method> = {
  "chat.postMessage": { scope: "messages:write", run: postMessageCall },
  "chat.postEphemeral": { scope: "messages:write", run: ephemeralCall },
  "chat.update": { scope: "messages:write", run: updateCall },
  "chat.delete": { scope: "messages:write", run: deleteCall },
  "chat.getPermalink": { scope: "messages:read", run: permalinkCall },
};
