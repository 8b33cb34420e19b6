import { type Context, Hono } from "hono";
import { channelsOf, listChannels } from "../../domain/channels/channels.ts";
import { byName } from "../../domain/channels/channel_list.ts";
import { visibleChannels } from "../../domain/channels/access.ts";
import type { Ctx } from "../../domain/context.ts";
import type { Subject, User } from "../../core/types.ts";
import {
  createIncoming,
  listIncoming,
  revokeIncomingById,
  rotateVerifySecret,
} from "../../domain/webhooks/incoming.ts";
import { listUsers } from "../../domain/people/workspace.ts";
import { VERIFY_SCHEMES } from "../../core/incoming_records.ts";
import { IncomingPage, type IncomingPageProps, type Target } from "../../web/incoming.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";

const NOTICES = { revoked: "The incoming webhook is revoked: its URL answers 404 from now on." };

/**
 * What a new hook can post into and as whom: each open channel the viewer may choose (one it is
 * in, or a public one) with the team's bots that are in it, by channel name.
 */
async function targetsOf(ctx: Ctx, viewer: Subject, bots: User[]): Promise<Target[]> {
  const mine = new Set((await listChannels(ctx, viewer)).map((ch) => ch.id));
  const byChannel = new Map<string, Target>();
  for (const bot of bots) {
    for (const channel of await channelsOf(ctx, viewer, bot)) {
      if (channel.is_direct || channel.is_archived) continue;
      if (channel.visibility === "private" && !mine.has(channel.id)) continue;
      const target = byChannel.get(channel.id) ?? { channel, bots: [] };
      target.bots.push(bot);
      byChannel.set(channel.id, target);
    }
  }
  return [...byChannel.values()].sort((a, b) => byName(a.channel, b.channel));
}

async function showIncoming(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<IncomingPageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const subject = viewer.subject;
  const [hooks, users] = await Promise.all([
    listIncoming(ctx, viewer.user.team_id),
    listUsers(ctx, viewer.user.team_id, viewer.subject),
  ]);
  const bots = users.filter((u) => u.type === "bot" && !u.system);
  const [named, targets] = await Promise.all([
    visibleChannels(ctx, subject, [...new Set(hooks.map((h) => h.channel_id))]),
    targetsOf(ctx, subject, bots),
  ]);
  return page(
    c,
    <IncomingPage
      viewer={viewer}
      hooks={hooks}
      channelNames={new Map(named.map((ch) => [ch.id, ch.name]))}
      targets={targets}
      hasBots={bots.length > 0}
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
        const [channelId = "", botId = ""] = text(form.target).split(":");
        const verify = VERIFY_SCHEMES.find((v) => v === text(form.verify)) ?? "none";
        const { hook, url, verify_secret } = await createIncoming(ctx, {
          channelId,
          botId,
          name: text(form.name),
          verify,
        }, viewer.subject);
        const also = verify_secret &&
          { label: `Signing secret of “${hook.name}”`, value: verify_secret };
        return await showIncoming(ctx, c, {
          revealed: {
            label: `URL of “${hook.name}”`,
            value: url,
            ...(also ? { also, note: "The second is the secret its sender signs with." } : {}),
          },
        });
      } catch (e) {
        const state = formStateOf(e, form);
        return await showIncoming(ctx, c, { form: state }, state.status);
      }
    })
    .post("/:id/rotate-verify-secret", async (c) => {
      const { hook, secret } = await rotateVerifySecret(
        ctx,
        c.req.param("id"),
        c.var.viewer.subject,
      );
      return await showIncoming(ctx, c, {
        revealed: {
          label: `New signing secret of “${hook.name}”`,
          value: secret,
          note: "The old secret is taken for 24 hours more: give the sender this one by then.",
        },
      });
    })
    .post("/:id/revoke", async (c) => {
      await revokeIncomingById(ctx, c.req.param("id"), c.var.viewer.subject);
      return c.redirect(`${SETTINGS}/incoming?done=revoked`, 303);
    });
}
