import { type Context, Hono } from "hono";
import { privateReach } from "../../domain/channels.ts";
import type { Ctx } from "../../domain/context.ts";
import type { Subject } from "../../core/types.ts";
import { notFound } from "../../core/errors.ts";
import { createToken, listTokens, tokenHolder } from "../../domain/tokens.ts";
import { createUser, listUsers } from "../../domain/workspace.ts";
import { BotsPage, type BotsPageProps } from "../../web/bots.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";
import { tokenInput } from "./token_form.ts";

const NO_SUCH_BOT = "No such bot.";

const NOTICES = {
  "token-revoked": "The token is revoked: it no longer works.",
  "bot-created": "The bot is created. Give it a token, and add it to channels through the API.",
};

const teamBots = async (ctx: Ctx, viewer: Subject) =>
  (await listUsers(ctx, viewer.team_id, viewer)).filter((u) => u.type === "bot");

/** The bots page, with their tokens. */
export async function showBots(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<BotsPageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const bots = await Promise.all(
    (await teamBots(ctx, viewer.subject)).map(async (bot) => ({
      bot,
      tokens: await listTokens(ctx, bot.id),
      reach: await privateReach(ctx, viewer.subject, bot),
    })),
  );
  return page(c, <BotsPage viewer={viewer} bots={bots} {...extra} />, status);
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
    .post("/:id/tokens", async (c) => {
      const { viewer, form } = c.var;
      const botId = c.req.param("id");
      const bot = await tokenHolder(ctx, botId, viewer.subject, NO_SUCH_BOT);
      if (bot.type !== "bot") throw notFound(NO_SUCH_BOT);
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
