import { type Context, Hono } from "hono";
import { listChannels } from "../../domain/channels.ts";
import { visibleChannels } from "../../domain/channel_access.ts";
import type { Ctx } from "../../domain/context.ts";
import { createIncoming, listIncoming, revokeIncomingById } from "../../domain/incoming.ts";
import { listUsers } from "../../domain/workspace.ts";
import { IncomingPage, type IncomingPageProps } from "../../web/incoming.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";

const NOTICES = { revoked: "The incoming webhook is revoked: its URL answers 404 from now on." };

async function showIncoming(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<IncomingPageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const subject = viewer.subject;
  const [hooks, mine, users] = await Promise.all([
    listIncoming(ctx, viewer.user.team_id),
    listChannels(ctx, subject),
    listUsers(ctx, viewer.user.team_id, viewer.subject),
  ]);
  const named = await visibleChannels(ctx, subject, [...new Set(hooks.map((h) => h.channel_id))]);
  return page(
    c,
    <IncomingPage
      viewer={viewer}
      hooks={hooks}
      channelNames={new Map(named.map((ch) => [ch.id, ch.name]))}
      channels={mine.filter((ch) => !ch.is_direct && !ch.is_archived)}
      bots={users.filter((u) => u.type === "bot")}
      {...extra}
    />,
    status,
  );
}

const text = (v: string | string[] | undefined) => typeof v === "string" ? v : "";

/** The team's incoming webhooks: admins and owners. */
export function incomingPages(ctx: Ctx) {
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", (c) => showIncoming(ctx, c, { notice: noticeOf(c, NOTICES) }))
    .post("/", async (c) => {
      const { viewer, form } = c.var;
      try {
        const { hook, url } = await createIncoming(ctx, {
          channelId: text(form.channel),
          botId: text(form.bot),
          name: text(form.name),
        }, viewer.subject);
        return await showIncoming(ctx, c, {
          revealed: { label: `URL of “${hook.name}”`, value: url },
        });
      } catch (e) {
        const state = formStateOf(e, form);
        return await showIncoming(ctx, c, { form: state }, state.status);
      }
    })
    .post("/:id/revoke", async (c) => {
      await revokeIncomingById(ctx, c.req.param("id"), c.var.viewer.subject);
      return c.redirect(`${SETTINGS}/incoming?done=revoked`, 303);
    });
}
