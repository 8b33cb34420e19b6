import { type Context, Hono } from "hono";
import { channelsOf, listTeamChannels } from "../../domain/channels/channels.ts";
import { isClosed } from "../../core/channel_kind.ts";
import { addMember, removeMember } from "../../domain/channels/members.ts";
import type { Ctx } from "../../domain/context.ts";
import type { Subject } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { createToken, listTokens, tokenHolder } from "../../domain/people/tokens.ts";
import { createUser, listUsers } from "../../domain/people/workspace.ts";
import { BotsPage, type BotsPageProps } from "../../web/bots.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";
import { tokenInput } from "./token_form.ts";

const NO_SUCH_BOT = "No such bot.";

const NOTICES = {
  "token-revoked": "The token is revoked: it no longer works.",
  "bot-created": "The bot is created. Give it a token, and add it to the channels it works in.",
  "bot-added": "The bot is in the channel now: a member_joined message says so there.",
  "bot-removed": "The bot has left the channel.",
};

const teamBots = async (ctx: Ctx, viewer: Subject) =>
  (await listUsers(ctx, viewer.team_id, viewer)).filter((u) => u.type === "bot" && !u.system);

/** A bot of the viewer's team, or the page's 404. */
async function botOf(ctx: Ctx, id: string, viewer: Subject) {
  const bot = await tokenHolder(ctx, id, viewer, NO_SUCH_BOT);
  if (bot.type !== "bot") throw notFound(NO_SUCH_BOT);
  return bot;
}

/** The bots page, with their tokens and channels. */
export async function showBots(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<BotsPageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const [bots, teamChannels] = await Promise.all([
    teamBots(ctx, viewer.subject),
    listTeamChannels(ctx, viewer.user.team_id, viewer.subject),
  ]);
  const open = teamChannels.filter((ch) => !ch.is_direct && !ch.is_archived);
  const shown = await Promise.all(bots.map(async (bot) => {
    const [tokens, channels] = await Promise.all([
      listTokens(ctx, bot.id),
      channelsOf(ctx, viewer.subject, bot),
    ]);
    const inIds = new Set(channels.map((ch) => ch.id));
    return {
      bot,
      tokens,
      channels: channels.filter((ch) => !ch.is_direct),
      joinable: open.filter((ch) => !inIds.has(ch.id)),
      reach: channels.filter(isClosed),
    };
  }));
  return page(c, <BotsPage viewer={viewer} bots={shown} {...extra} />, status);
}

/** The team's bots and their tokens: admins and owners. */
export function botPages(ctx: Ctx) {
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", (c) => showBots(ctx, c, { notice: noticeOf(c, NOTICES) }))
    .post("/", async (c) => {
      const { viewer, form } = c.var;
      try {
        await createUser(ctx, {
          teamId: viewer.user.team_id,
          name: typeof form.name === "string" ? form.name : "",
          type: "bot",
        }, viewer.subject);
        return c.redirect(`${SETTINGS}/bots?done=bot-created`, 303);
      } catch (e) {
        const state = formStateOf(e, form);
        return await showBots(ctx, c, { form: state }, state.status);
      }
    })
    .post("/:id/channels", async (c) => {
      const { viewer, form } = c.var;
      const bot = await botOf(ctx, c.req.param("id"), viewer.subject);
      const channelId = typeof form.channel === "string" ? form.channel : "";
      try {
        await addMember(ctx, viewer.subject, channelId, () => Promise.resolve(bot.id));
        return c.redirect(`${SETTINGS}/bots?done=bot-added`, 303);
      } catch (e) {
        const state = formStateOf(e, form);
        return await showBots(
          ctx,
          c,
          { channelForm: { botId: bot.id, form: state } },
          state.status,
        );
      }
    })
    .post("/:id/channels/:channel/remove", async (c) => {
      const { viewer } = c.var;
      const bot = await botOf(ctx, c.req.param("id"), viewer.subject);
      await removeMember(ctx, viewer.subject, c.req.param("channel"), bot.id);
      return c.redirect(`${SETTINGS}/bots?done=bot-removed`, 303);
    })
    .post("/:id/tokens", async (c) => {
      const { viewer, form } = c.var;
      const bot = await botOf(ctx, c.req.param("id"), viewer.subject);
      const botId = bot.id;
      try {
        const made = await createToken(ctx, bot, { ...tokenInput(form), actor: viewer.subject });
        return await showBots(ctx, c, {
          revealed: { label: `New token “${made.token.name}” for ${bot.name}`, value: made.value },
        });
      } catch (e) {
        const state = formStateOf(e, form);
        return await showBots(ctx, c, { tokenForm: { botId, form: state } }, state.status);
      }
    });
}
