/**
 * Slash commands (decisions.md, "Slash commands"): a person runs one of the team's commands in a
 * channel it can see and post in; the service POSTs Slack's form fields to the app's URL, signed
 * as Slack signs, and waits up to 3 s. The app's answer, or its silence, is the run's answer:
 * `answered` (a reply, ephemeral or in the channel as the app's bot), `acknowledged`, `pending`
 * (no answer in time; its later replies still arrive) or `failed`, never a 5xx for the app's fault.
 */
import { liveInstall } from "./live_install.ts";
import { appChannelName } from "../../core/channel_kind.ts";
import type { Ctx } from "../context.ts";
import type { Channel, Subject } from "../../core/types.ts";
import type { App, AppInstall } from "../../core/app_records.ts";
import { invalid } from "../../core/errors.ts";
import { getApp } from "../../kv/apps/apps.ts";
import { getCommand, listTeamCommands } from "../../kv/apps/commands.ts";
import { getTeam, memberRef } from "../../kv/workspace.ts";
import { loadChannel } from "../channels/access.ts";
import { authorize } from "../policy.ts";
import { slugify } from "../channels/slug.ts";
import type { AppCalls } from "./app_call.ts";
import { routeTo, slashCommand } from "./request_frame.ts";
import { interact, type Interaction, unsigned } from "./interaction.ts";
import { issueAnswerWays } from "./responses.ts";
import { deliverReply } from "./replies.ts";

/** A command as a team lists it. */
export interface CommandView {
  command: string;
  description: string;
  usage_hint: string;
  app_id: string;
}

/** The commands of the subject's team, by name: those its installs with `commands` brought. */
export async function listCommands(ctx: Ctx, subject: Subject): Promise<CommandView[]> {
  authorize(subject, "team.read", { team_id: subject.team_id });
  const out: CommandView[] = [];
  for (const held of await listTeamCommands(ctx.kv, subject.team_id)) {
    const app = (await getApp(ctx.kv, held.app_id)).value;
    const declared = app?.slash_commands?.find((c) => c.command === held.command);
    if (!declared) continue;
    out.push({
      command: held.command,
      description: declared.description,
      usage_hint: declared.usage_hint,
      app_id: held.app_id,
    });
  }
  return out.sort((a, b) => a.command.localeCompare(b.command));
}

/** What a run of a command came to. */
export interface CommandRun extends Interaction {
  command: string;
}

/** The app, its live install and its bot behind one of the team's commands; 422 on `command`. */
async function commandHolder(ctx: Ctx, teamId: string, command: string) {
  const unknown = () => invalid("command", `There is no command ${command} in this team.`);
  const held = (await getCommand(ctx.kv, teamId, command.trim().toLowerCase())).value;
  if (!held) throw unknown();
  const live = await liveInstall(ctx, { teamId, appId: held.app_id });
  const declared = live?.app.slash_commands?.find((c) => c.command === held.command);
  if (!live || !declared) throw unknown();
  return { ...live, declared };
}

/**
 * Runs a command in a channel: a person (bots can't: 403, once the channel is seen) who may post
 * there; an archived channel is 422 on `channel`; an unknown command 422 on `command`.
 */
export async function runCommand(
  ctx: Ctx,
  calls: AppCalls,
  { subject, channelId, command, text }: {
    subject: Subject;
    channelId: string;
    command: string;
    text: string;
  },
): Promise<CommandRun> {
  const { channel, isMember } = await loadChannel(ctx, subject, channelId);
  authorize(subject, "command.run", { channel, isMember });
  if (channel.is_archived) throw invalid("channel", "The channel is archived.");
  authorize(subject, "channel.post", { channel, isMember });
  const { app, install, bot, declared } = await commandHolder(ctx, subject.team_id, command);
  const route = await routeTo(ctx, app, declared.url);
  if (route === "unsigned") return { command: declared.command, ...unsigned() };
  const form = await commandForm(ctx, {
    subject,
    channel,
    app,
    install,
    command: declared.command,
    text,
  });
  const ran = await interact(ctx, calls, {
    request: slashCommand(route, form),
    deliver: (reply) =>
      deliverReply(ctx, {
        reply,
        invoker: subject,
        channelId: channel.id,
        app,
        bot: memberRef(bot),
      }),
  });
  return { command: declared.command, ...ran };
}

/** Slack's slash command form fields, with a new `response_url` and `trigger_id`. */
async function commandForm(
  ctx: Ctx,
  { subject, channel, app, install, command, text }: {
    subject: Subject;
    channel: Channel;
    app: App;
    install: AppInstall;
    command: string;
    text: string;
  },
): Promise<Record<string, string>> {
  const [team, ways] = await Promise.all([
    getTeam(ctx.kv, subject.team_id),
    issueAnswerWays(ctx, {
      app,
      teamId: subject.team_id,
      channelId: channel.id,
      userId: subject.user_id,
      botId: install.bot_user_id,
      messageId: null,
    }),
  ]);
  return {
    token: "",
    team_id: subject.team_id,
    team_domain: slugify(team?.name ?? "team"),
    channel_id: channel.id,
    channel_name: appChannelName(channel),
    user_id: subject.user_id,
    user_name: subject.name,
    command,
    text,
    api_app_id: app.id,
    is_enterprise_install: "false",
    ...ways,
  };
}
