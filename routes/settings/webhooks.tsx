import { type Context, Hono } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { subjectOfPerson } from "../../domain/settings_access.ts";
import {
  deleteWebhook,
  enableWebhook,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  showWebhook,
} from "../../domain/webhooks.ts";
import { SETTINGS } from "../../web/paths.ts";
import { WebhookPage, type WebhookPageProps, WebhooksPage } from "../../web/webhooks.tsx";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { noticeOf, page } from "./render.ts";

const NOTICES = {
  deleted: "The subscription is deleted: nothing more will be sent to it.",
  enabled: "The subscription is active again; its failure streak starts from zero.",
  redelivering: "One more attempt of that event is on its way.",
};

async function showOne(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  id: string,
  extra: Partial<WebhookPageProps> = {},
) {
  const { viewer } = c.var;
  const { subscription, deliveries } = await showWebhook(ctx, subjectOfPerson(viewer.user), id);
  return page(
    c,
    <WebhookPage viewer={viewer} sub={subscription} deliveries={deliveries} {...extra} />,
  );
}

/** The team's outgoing subscriptions: admins and owners. */
export function webhookRoutes(ctx: Ctx) {
  const back = (c: Context<SettingsEnv>, done: keyof typeof NOTICES) =>
    c.redirect(`${SETTINGS}/webhooks/${c.req.param("id")}?done=${done}`, 303);
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", async (c) => {
      const subs = await listWebhooks(ctx, subjectOfPerson(c.var.viewer.user));
      return page(
        c,
        <WebhooksPage viewer={c.var.viewer} subs={subs} notice={noticeOf(c, NOTICES)} />,
      );
    })
    .get("/:id", (c) => showOne(ctx, c, c.req.param("id"), { notice: noticeOf(c, NOTICES) }))
    .post("/:id/enable", async (c) => {
      await enableWebhook(ctx, c.req.param("id"), c.var.viewer.user);
      return back(c, "enabled");
    })
    .post("/:id/rotate-secret", async (c) => {
      const { subscription, secret } = await rotateWebhookSecret(
        ctx,
        c.req.param("id"),
        c.var.viewer.user,
      );
      return await showOne(ctx, c, subscription.id, {
        revealed: { label: "New signing secret", value: secret },
        notice: "For the next 24 hours deliveries are signed with the old secret as well.",
      });
    })
    .post("/:id/deliveries/:delivery/redeliver", async (c) => {
      const subject = subjectOfPerson(c.var.viewer.user);
      await redeliver(ctx, subject, c.req.param("id"), c.req.param("delivery"));
      return back(c, "redelivering");
    })
    .post("/:id/delete", async (c) => {
      await deleteWebhook(ctx, subjectOfPerson(c.var.viewer.user), c.req.param("id"));
      return c.redirect(`${SETTINGS}/webhooks?done=deleted`, 303);
    });
}
