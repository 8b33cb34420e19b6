import { type Context, Hono } from "hono";
import { visibleChannels } from "../../domain/channels/access.ts";
import type { Ctx } from "../../domain/context.ts";
import { userById } from "../../domain/people/workspace.ts";
import { permits } from "../../domain/policy.ts";
import {
  deleteWebhook,
  listWebhooks,
  showWebhook,
  updateWebhook,
} from "../../domain/webhooks/webhooks.ts";
import { attempt } from "../../core/settled.ts";
import { validate } from "../body.ts";
import { webhookChanges } from "../webhooks.ts";
import { redeliver } from "../../domain/webhooks/sends.ts";
import { enableWebhook, rotateWebhookSecret } from "../../domain/webhooks/admin.ts";
import { SETTINGS } from "../../web/paths.ts";
import { WebhookPage, type WebhookPageProps, WebhooksPage } from "../../web/webhooks.tsx";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";

const NOTICES = {
  updated: "Saved: from the next event on it delivers there, and hears these events.",
  deleted: "The subscription is deleted: nothing more will be sent to it.",
  enabled: "The subscription is active again; its failure streak starts from zero.",
  redelivering: "One more attempt of that event is on its way.",
};

async function showOne(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  id: string,
  { status = 200, ...extra }: Partial<WebhookPageProps> & { status?: 200 | 403 | 404 | 422 } = {},
) {
  const { viewer } = c.var;
  const subject = viewer.subject;
  const { subscription: sub, deliveries } = await showWebhook(ctx, subject, id);
  const [channels, owner] = await Promise.all([
    visibleChannels(ctx, subject, sub.channel_ids ?? []),
    sub.created_by ? userById(ctx, sub.created_by) : null,
  ]);
  return page(
    c,
    <WebhookPage
      viewer={viewer}
      sub={sub}
      owner={owner?.name ?? null}
      canRetarget={permits(subject, "subscription.retarget", sub)}
      channelNames={new Map(channels.map((ch) => [ch.id, ch.name]))}
      deliveries={deliveries}
      {...extra}
    />,
    status,
  );
}

/** The team's outgoing subscriptions: admins and owners. */
export function webhookPages(ctx: Ctx) {
  const back = (c: Context<SettingsEnv>, done: keyof typeof NOTICES) =>
    c.redirect(`${SETTINGS}/webhooks/${c.req.param("id")}?done=${done}`, 303);
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", async (c) => {
      const subs = await listWebhooks(ctx, c.var.viewer.subject);
      return page(
        c,
        <WebhooksPage viewer={c.var.viewer} subs={subs} notice={noticeOf(c, NOTICES)} />,
      );
    })
    .get("/:id", (c) => showOne(ctx, c, c.req.param("id"), { notice: noticeOf(c, NOTICES) }))
    .post("/:id/enable", async (c) => {
      await enableWebhook(ctx, c.req.param("id"), c.var.viewer.subject);
      return back(c, "enabled");
    })
    .post("/:id/edit", async (c) => {
      const { viewer, form } = c.var;
      const id = c.req.param("id");
      const asked = { url: form.url ?? "", events: [form.events ?? []].flat() };
      try {
        const changes = attempt(() => validate(webhookChanges, asked));
        await updateWebhook(ctx, viewer.subject, id, {
          input: changes,
          asked: Object.keys(asked),
        });
        return back(c, "updated");
      } catch (e) {
        const state = formStateOf(e, form);
        return await showOne(ctx, c, id, { edit: state, status: state.status });
      }
    })
    .post("/:id/rotate-secret", async (c) => {
      const { subscription, secret } = await rotateWebhookSecret(
        ctx,
        c.req.param("id"),
        c.var.viewer.subject,
      );
      return await showOne(ctx, c, subscription.id, {
        revealed: {
          label: "New signing secret",
          value: secret,
          note:
            "For the next 24 hours every delivery carries two signatures, one with this secret and one with the old: switch your receiver to this one within that time.",
        },
      });
    })
    .post("/:id/deliveries/:delivery/redeliver", async (c) => {
      const subject = c.var.viewer.subject;
      await redeliver(ctx, subject, c.req.param("id"), c.req.param("delivery"));
      return back(c, "redelivering");
    })
    .post("/:id/delete", async (c) => {
      await deleteWebhook(ctx, c.var.viewer.subject, c.req.param("id"));
      return c.redirect(`${SETTINGS}/webhooks?done=deleted`, 303);
    });
}
