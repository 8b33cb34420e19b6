/**
 * Actions (decisions.md, "Actions"): a person who can see a message presses one of its elements
 * (a button, a menu's option, a date...) as they are now (domain/apps/pressable.ts); the message
 * must be an installed app's, with interactivity on. The service POSTs Slack's `block_actions`
 * payload to the app's interactivity URL, and the press answers as a command run does.
 */
import { liveInstall } from "./live_install.ts";
import type { Ctx } from "../context.ts";
import type { Channel, Message, Subject, User } from "../../core/types.ts";
import type { App, AppInstall } from "../../core/app_records.ts";
import { invalid } from "../../core/errors.ts";
import { installOfBot } from "./bot_install.ts";
import { memberRef } from "../../kv/workspace.ts";
import { loadChannelWith } from "../channels/access.ts";
import { messageIn, messageKeyFor } from "../messages/access.ts";
import { authorize } from "../policy.ts";
import { slackMessage } from "../slack/shapes.ts";
import { type Press, pressOf } from "./pressable.ts";
import { type AppCalls, interactionsUrl, payloadActor } from "./app_call.ts";
import { interactive, payloadChannel, routeTo } from "./request_frame.ts";
import { interact, type Interaction, unsigned } from "./interaction.ts";
import { issueAnswerWays } from "./responses.ts";
import { deliverReply } from "./replies.ts";

/** The installed app whose bot wrote the message, with interactivity on; 422 otherwise. */
async function interactiveApp(ctx: Ctx, message: Message) {
  const refused = () =>
    invalid("message", "This message's elements belong to no installed app that answers them.");
  const by = await installOfBot(ctx, { teamId: message.team_id, botId: message.author.id });
  const live = by ? await liveInstall(ctx, { teamId: by.team_id, appId: by.app_id }) : null;
  if (!live) throw refused();
  const { app, install, bot } = live;
  const url = interactionsUrl(app);
  if (url === undefined) throw refused();
  return { app, install, bot, url };
}

/**
 * POST .../messages/{message}/actions: a person (a bot: 403) who sees the message and may write
 * in its channel presses one of its elements.
 */
export async function pressAction(
  ctx: Ctx,
  calls: AppCalls,
  { subject, channelId, messageId, press }: {
    subject: Subject;
    channelId: string;
    messageId: string;
    press: Press;
  },
): Promise<Interaction> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, channelId, {
    extra: { message: messageKeyFor(messageId) },
  });
  const message = messageIn(read.channel, read.extra.message).value;
  authorize(subject, "element.press", read);
  authorize(subject, "channel.post", read);
  const action = await pressOf(ctx, {
    subject,
    blocks: message.blocks ?? [],
    press,
    where: "message",
  });
  const { app, install, bot, url } = await interactiveApp(ctx, message);
  const route = await routeTo(ctx, app, url);
  if (route === "unsigned") return unsigned();
  const payload = await blockActions(ctx, {
    subject,
    channel: read.channel,
    message,
    app,
    install,
    action,
  });
  return await interact(ctx, calls, {
    request: interactive(route, payload),
    deliver: (reply) =>
      deliverReply(ctx, {
        reply,
        invoker: subject,
        channelId: message.channel_id,
        app,
        bot: memberRef(bot as User),
        original: message.id,
      }),
  });
}

/** Slack's `block_actions` payload, with a new `response_url` and `trigger_id`. */
async function blockActions(
  ctx: Ctx,
  { subject, channel, message, app, install, action }: {
    subject: Subject;
    channel: Channel;
    message: Message;
    app: App;
    install: AppInstall;
    action: Awaited<ReturnType<typeof pressOf>>;
  },
) {
  const [actor, ways] = await Promise.all([
    payloadActor(ctx, subject),
    issueAnswerWays(ctx, {
      app,
      teamId: subject.team_id,
      channelId: channel.id,
      userId: subject.user_id,
      botId: install.bot_user_id,
      messageId: message.id,
    }),
  ]);
  const shown = slackMessage(message);
  return {
    type: "block_actions",
    ...actor,
    container: {
      type: "message",
      message_ts: shown.ts,
      channel_id: channel.id,
      is_ephemeral: false,
    },
    channel: payloadChannel(channel),
    message: shown,
    state: { values: {} },
    response_url: ways.response_url,
    trigger_id: ways.trigger_id,
    actions: [action],
  };
}
