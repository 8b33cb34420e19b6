import { type Context, Hono } from "hono";
import type { Ctx } from "../../domain/context.ts";
import {
  createToken,
  listTokens,
  revokeTokenById,
  rotateTokenById,
} from "../../domain/people/tokens.ts";
import { SETTINGS } from "../../web/paths.ts";
import { TokensPage, type TokensPageProps } from "../../web/tokens.tsx";
import { showBots } from "./bots.tsx";
import type { SettingsEnv } from "./env.ts";
import { formStateOf, noticeOf, page } from "./render.ts";
import { tokenInput } from "./token_form.ts";

const NOTICES = { "token-revoked": "The token is revoked: it no longer works." };

async function showTokens(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<TokensPageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const tokens = await listTokens(ctx, viewer.user.id);
  return page(c, <TokensPage viewer={viewer} tokens={tokens} {...extra} />, status);
}

/** A person's own tokens; rotate and revoke also serve an admin's bots' tokens. */
export function tokenPages(ctx: Ctx) {
  return new Hono<SettingsEnv>()
    .get("/", (c) => showTokens(ctx, c, { notice: noticeOf(c, NOTICES) }))
    .post("/tokens", async (c) => {
      const { viewer, form } = c.var;
      try {
        const made = await createToken(ctx, viewer.user, {
          ...tokenInput(form),
          actor: viewer.subject,
        });
        return await showTokens(ctx, c, {
          revealed: { label: `Your new token “${made.token.name}”`, value: made.value },
        });
      } catch (e) {
        const state = formStateOf(e, form);
        return await showTokens(ctx, c, { form: state }, state.status);
      }
    })
    .post("/tokens/:id/rotate", async (c) => {
      const made = await rotateTokenById(ctx, c.req.param("id"), c.var.viewer.subject);
      const revealed = { label: `New value of “${made.token.name}”`, value: made.value };
      return made.token.user_type === "bot"
        ? await showBots(ctx, c, { revealed })
        : await showTokens(ctx, c, { revealed });
    })
    .post("/tokens/:id/revoke", async (c) => {
      const token = await revokeTokenById(ctx, c.req.param("id"), c.var.viewer.subject);
      const back = token.user_type === "bot" ? `${SETTINGS}/bots` : SETTINGS;
      return c.redirect(`${back}?done=token-revoked`, 303);
    });
}
