/** `team.info`, `bots.info`, `emoji.list`: the caller's team, its bots and its custom emoji. */
import { z } from "zod";
import { isActive } from "../../core/active.ts";
import { customEmojiOf, findTeam, teamPerson } from "../../domain/people/workspace.ts";
import { slugify } from "../../domain/channels/slug.ts";
import { installOfBot } from "../../domain/apps/bot_install.ts";
import type { Method, MethodCall } from "./method.ts";
import { args } from "./args.ts";
import { SlackError } from "./errors.ts";

const teamArgs = z.object({ team: z.string().optional() });
const botArgs = z.object({ bot: z.string() });

const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The caller's team; another team's id is `team_not_found`, as one the caller can't see. */
async function teamInfo({ ctx, subject, params }: MethodCall) {
  const p = args(teamArgs, params);
  if (p.team && p.team !== subject.team_id) throw new SlackError("team_not_found");
  const team = await findTeam(ctx, subject.team_id);
  return {
    team: {
      id: team.id,
      name: team.name,
      domain: slugify(team.name),
      email_domain: "",
      icon: { image_default: true },
    },
  };
}

/** A bot of the caller's team, with the app whose bot it is; a person is `bot_not_found`. */
async function botsInfo({ ctx, subject, params }: MethodCall) {
  const p = args(botArgs, params);
  const bot = await teamPerson(ctx, subject, p.bot).catch(() => null);
  if (!bot || bot.type !== "bot") throw new SlackError("bot_not_found");
  const install = await installOfBot(ctx, { teamId: subject.team_id, botId: bot.id });
  const appId = install?.app_id ?? null;
  return {
    bot: {
      id: bot.id,
      deleted: !isActive(bot),
      name: bot.name,
      updated: unix(bot.created_at),
      app_id: appId,
      user_id: bot.id,
      icons: {},
    },
  };
}

/**
 * emoji.list: the team's custom emoji, each name to `""`: they are names here, with no image to
 * link to (Slack gives a URL, or `alias:` another name).
 */
async function emojiList({ ctx, subject }: MethodCall) {
  const names = await customEmojiOf(ctx, subject);
  return {
    emoji: Object.fromEntries(names.map((name) => [name, ""])),
    cache_ts: String(Math.floor(Date.now() / 1000)),
  };
}

export const teamMethods: Record<string, Method> = {
  "team.info": { scope: null, run: teamInfo },
  "bots.info": { scope: "members:read", run: botsInfo },
  "emoji.list": { scope: null, run: emojiList },
};
