/**
 * Shortcuts (decisions.md, "Shortcuts"): an app declares them (`features.shortcuts`), an install
 * granted `commands` brings them into its team, and a person runs a global one anywhere in the
 * team, or a message one on a message they see. The app gets Slack's `shortcut` or
 * `message_action` payload, with a `trigger_id` to open a modal (and, on a message, a
 * `response_url`), and 3 s to acknowledge: the run answers as a press does.
 */
import type { Ctx } from "../context.ts";
import type { Channel, Message, Subject, User } from "../../core/types.ts";
import type { App, Shortcut } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { tsOfMs } from "../../core/ids.ts";
import { listTeamInstalls } from "../../kv/apps/apps.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { getUser, memberRef } from "../../kv/workspace.ts";
import { loadChannelWith } from "../channels/access.ts";
import { directChannelOf } from "../channels/direct.ts";
import { messageIn, messageKeyFor } from "../messages/access.ts";
import { authorize } from "../policy.ts";
import { slackMessage } from "../slack/shapes.ts";
import { type AppCalls, interactionsUrl, payloadActor } from "./app_call.ts";
import { interactive, payloadChannel, routeTo } from "./request_frame.ts";
import { interact, type Interaction, unsigned } from "./interaction.ts";
import { type LiveInstall, liveInstall } from "./live_install.ts";
import { deliverReply } from "./replies.ts";
import { issueAnswerWays } from "./responses.ts";

/** A shortcut as a team lists it: the app's, with its name. */
export interface ShortcutView extends Shortcut {
  app_id: string;
  app_name: string;
}

/** The shortcuts of the subject's team: those of its live installs granted `commands`. */
export async function listShortcuts(ctx: Ctx, subject: Subject): Promise<ShortcutView[]> {
  authorize(subject, "team.read", { team_id: subject.team_id });
  const installs = (await listTeamInstalls(ctx.kv, subject.team_id))
    .filter((i) => !i.uninstalled_at && i.scopes.includes("commands"));
  const apps = await getAll<App>(ctx.kv, installs.map((i) => keys.app(i.app_id)));
  return apps.flatMap(({ value: app }) =>
    (app?.shortcuts ?? []).map((s) => ({ ...s, app_id: app!.id, app_name: app!.name }))
  ).sort((a, b) => a.app_name.localeCompare(b.app_name) || a.name.localeCompare(b.name));
}

const unknown = () => notFound("No such shortcut in this team.");

/** The live install behind an app's shortcut of `type` in the team, answering interactions. */
async function shortcutHolder(
  ctx: Ctx,
  { teamId, appId, callbackId, type }: {
    teamId: string;
    appId: string;
    callbackId: string;
    type: Shortcut["type"];
  },
) {
  const live = await liveInstall(ctx, { teamId, appId });
  const declared = live?.app.shortcuts?.find((s) =>
    s.callback_id === callbackId && s.type === type
  );
  if (!live || !declared || !live.install.scopes.includes("commands")) throw unknown();
  const url = interactionsUrl(live.app);
  if (url === undefined) {
    throw invalid("callback_id", "The app answers no interactions: its shortcuts can't run.");
  }
  return { ...live, declared, route: await routeTo(ctx, live.app, url) };
}

/**
 * POST /apps/{app}/shortcuts/{callback_id}: a person runs a global shortcut. Its trigger is the
 * person's direct message with the app's bot, where a modal it opens belongs.
 */
export async function runGlobalShortcut(
  ctx: Ctx,
  calls: AppCalls,
  { subject, appId, callbackId }: { subject: Subject; appId: string; callbackId: string },
): Promise<Interaction> {
  authorize(subject, "shortcut.run", { team_id: subject.team_id });
  const held = await shortcutHolder(ctx, {
    teamId: subject.team_id,
    appId,
    callbackId,
    type: "global",
  });
  if (held.route === "unsigned") return unsigned();
  const person = await getUser(ctx.kv, subject.user_id);
  if (!person) throw unknown();
  const dm = await directChannelOf(ctx, [held.bot as User, person]);
  const { trigger_id } = await waysFor(ctx, { subject, held, channelId: dm.id, messageId: null });
  const payload = {
    type: "shortcut",
    action_ts: tsOfMs(Date.now()),
    ...await payloadActor(ctx, subject),
    callback_id: callbackId,
    trigger_id,
  };
  const ran = await interact(ctx, calls, {
    request: interactive(held.route, payload),
    // A global shortcut has no reply: what the app does next, it does through the Web API.
    deliver: () => Promise.resolve({ ephemeral: null, message: null }),
  });
  return { ...ran, status: ran.status === "answered" ? "acknowledged" : ran.status };
}

/**
 * POST /channels/{channel}/messages/{message}/shortcuts: a person who sees a message runs a
 * message shortcut on it; the app may reply through the `response_url`, in the channel.
 */
export async function runMessageShortcut(
  ctx: Ctx,
  calls: AppCalls,
  { subject, channelId, messageId, appId, callbackId }: {
    subject: Subject;
    channelId: string;
    messageId: string;
    appId: string;
    callbackId: string;
  },
): Promise<Interaction> {
  const read = await loadChannelWith<{ message: Message }>(ctx, subject, channelId, {
    extra: { message: messageKeyFor(messageId) },
  });
  const message = messageIn(read.channel, read.extra.message).value;
  authorize(subject, "shortcut.run", { team_id: read.channel.team_id });
  const held = await shortcutHolder(ctx, {
    teamId: subject.team_id,
    appId,
    callbackId,
    type: "message",
  });
  if (held.route === "unsigned") return unsigned();
  const ways = await waysFor(ctx, { subject, held, channelId, messageId: null });
  const payload = messageAction({ channel: read.channel, message, callbackId, ways });
  return await interact(ctx, calls, {
    request: interactive(held.route, { ...payload, ...await payloadActor(ctx, subject) }),
    deliver: (reply) =>
      deliverReply(ctx, {
        reply,
        invoker: subject,
        channelId,
        app: held.app,
        bot: memberRef(held.bot),
      }),
  });
}

/** Slack's `message_action` payload, but for who runs it. */
function messageAction(
  { channel, message, callbackId, ways }: {
    channel: Channel;
    message: Message;
    callbackId: string;
    ways: { response_url: string; trigger_id: string };
  },
) {
  const shown = slackMessage(message);
  return {
    type: "message_action",
    action_ts: tsOfMs(Date.now()),
    callback_id: callbackId,
    trigger_id: ways.trigger_id,
    response_url: ways.response_url,
    message_ts: shown.ts,
    message: shown,
    channel: payloadChannel(channel),
  };
}

/** A trigger (and a response URL) for the person, in `channelId`. */
const waysFor = (
  ctx: Ctx,
  { subject, held, channelId, messageId }: {
    subject: Subject;
    held: LiveInstall;
    channelId: string;
    messageId: string | null;
  },
) =>
  issueAnswerWays(ctx, {
    app: held.app,
    teamId: subject.team_id,
    channelId,
    userId: subject.user_id,
    botId: held.install.bot_user_id,
    messageId,
  });
