import { type Context, Hono } from "hono";
import { visibleChannels } from "../../domain/channels/access.ts";
import type { Ctx } from "../../domain/context.ts";
import { userById } from "../../domain/people/workspace.ts";
import { permits } from "../../domain/policy.ts";
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  showWebhook,
  updateWebhook,
} from "../../domain/webhooks/webhooks.ts";
import { listChannels } from "../../domain/channels/channels.ts";
import { type CatalogEntry, isCatalogType } from "../../domain/webhooks/catalog.ts";
import { EventTypesPage } from "../../web/event_types.tsx";
import type { Subject } from "../../core/types.ts";
import type { FormState } from "../../web/forms.tsx";
import { attempt } from "../../core/settled.ts";
import { storedId } from "../../core/ids.ts";
import { validate } from "../body.ts";
import { newWebhook, schemeChange, webhookChanges } from "../webhooks.ts";
import { redeliver, testWebhook } from "../../domain/webhooks/sends.ts";
import {
  enableWebhook,
  rotateWebhookSecret,
  setSignatureScheme,
} from "../../domain/webhooks/admin.ts";
import { SETTINGS } from "../../web/paths.ts";
import { WebhookPage, type WebhookPageProps, WebhooksPage } from "../../web/webhooks.tsx";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";

const NOTICES = {
  created: "The subscription is made: events flow to it from now on.",
  updated: "Saved: from the next event on it delivers there, and hears these events.",
  deleted: "The subscription is deleted: nothing more will be sent to it.",
  enabled: "The subscription is active again; its failure streak starts from zero.",
  redelivering: "One more attempt of that event is on its way.",
  signed: "Saved: its next deliveries are signed that way.",
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

/** The list, with the form for a new subscription (its channels: those the viewer sees). */
async function listPage(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  { status = 200, ...extra }: {
    notice?: string;
    form?: FormState;
    status?: 200 | 403 | 404 | 422;
  },
) {
  const subject = c.var.viewer.subject;
  const [subs, channels] = await Promise.all([
    listWebhooks(ctx, subject),
    listChannels(ctx, subject),
  ]);
  const open = channels.filter((ch) => !ch.is_direct && !ch.is_archived);
  return page(
    c,
    <WebhooksPage viewer={c.var.viewer} subs={subs} channels={open} {...extra} />,
    status,
  );
}

/**
 * What a test send came to, in words, once its attempt is recorded: the person who pressed
 * "Send test" reads the answer on the page it leads to, without looking again.
 */
async function testOutcome(
  ctx: Ctx,
  subject: Subject,
  { id, eventId }: { id: string; eventId: string },
): Promise<string> {
  const deadline = Date.now() + ctx.settings.webhooks.timeoutMs + 3_000;
  while (Date.now() < deadline) {
    const { deliveries } = await showWebhook(ctx, subject, id);
    const d = deliveries.find((x) => x.event_id === eventId);
    if (d) {
      const answer = d.response_status !== null ? `HTTP ${d.response_status}` : d.error;
      return d.succeeded
        ? `Test sent: the receiver answered ${answer} in ${d.duration_ms ?? "?"} ms.`
        : `Test sent, and refused: ${answer}. Its delivery is below.`;
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return "Test queued: its delivery shows below once the attempt is done.";
}

/** The new-subscription form: the subscription's page with its secret, or the form's errors. */
async function createFromForm(ctx: Ctx, c: Context<SettingsEnv>) {
  const { viewer, form } = c.var;
  const channelIds = [form.channel_ids ?? []].flat().filter(Boolean);
  const asked = {
    name: form.name ?? "",
    url: form.url ?? "",
    events: [form.events ?? []].flat(),
    channel_ids: channelIds.length > 0 ? channelIds : null,
    signature_scheme: form.signature_scheme,
  };
  try {
    const input = validate(newWebhook, asked);
    const made = await createWebhook(ctx, viewer.subject, input);
    return await showOne(ctx, c, made.subscription.id, {
      notice: NOTICES.created,
      revealed: {
        label: "Signing secret",
        value: made.secret,
        note:
          "Shown this once: your receiver verifies every delivery with it (docs/verifying-webhooks.md).",
      },
    });
  } catch (e) {
    const state = formStateOf(e, form);
    return await listPage(ctx, c, { form: state, status: state.status });
  }
}

/**
 * "Send test", on a subscription's page or on the catalog's (which names the subscription): the
 * subscription's page, saying what the receiver answered.
 */
async function testFromForm(ctx: Ctx, c: Context<SettingsEnv>, id: string) {
  const { viewer, form } = c.var;
  const asked = String(form.event_type ?? "ping");
  const type = isCatalogType(asked) ? asked : "ping";
  const { event_id } = await testWebhook(ctx, viewer.subject, { id, type });
  // Post/Redirect/Get: a reload shows the outcome again, it doesn't send another.
  return c.redirect(`${SETTINGS}/webhooks/${id}?tested=${event_id}`, 303);
}

/** What a test's delivery came to, for the page a test redirected to; else the page's notice. */
async function noticeOfTest(ctx: Ctx, c: Context<SettingsEnv>, id: string) {
  const tested = storedId(c.req.query("tested"));
  if (!tested) return noticeOf(c, NOTICES);
  return await testOutcome(ctx, c.var.viewer.subject, { id, eventId: tested });
}

/**
 * The event catalog, and a form that sends any type's example to a subscription: admins and
 * owners. Beside the subscriptions, not under them: a fixed name where their pages take an id
 * (`webhooks/event-types` beside `webhooks/:id`) is a route Hono's regular-expression router
 * can't take, and one such route sends every request of the app through its slower trie.
 */
export function eventTypePages(ctx: Ctx, catalog: CatalogEntry[]) {
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", async (c) => {
      const subs = await listWebhooks(ctx, c.var.viewer.subject);
      return page(c, <EventTypesPage viewer={c.var.viewer} catalog={catalog} subs={subs} />);
    })
    .post("/", (c) => testFromForm(ctx, c, String(c.var.form.subscription ?? "")));
}

/** The team's outgoing subscriptions: admins and owners. */
export function webhookPages(ctx: Ctx) {
  const back = (c: Context<SettingsEnv>, done: keyof typeof NOTICES) =>
    c.redirect(`${SETTINGS}/webhooks/${c.req.param("id")}?done=${done}`, 303);
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", (c) => listPage(ctx, c, { notice: noticeOf(c, NOTICES) }))
    .post("/", (c) => createFromForm(ctx, c))
    .post("/:id/test", (c) => testFromForm(ctx, c, c.req.param("id")))
    .get("/:id", async (c) => {
      const id = c.req.param("id");
      return await showOne(ctx, c, id, { notice: await noticeOfTest(ctx, c, id) });
    })
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
    .post("/:id/signature-scheme", async (c) => {
      const { viewer, form } = c.var;
      const id = c.req.param("id");
      try {
        const { signature_scheme: scheme } = validate(schemeChange, form);
        await setSignatureScheme(ctx, id, { scheme, actor: viewer.subject });
        return back(c, "signed");
      } catch (e) {
        const state = formStateOf(e, form);
        return await showOne(ctx, c, id, { scheme: state, status: state.status });
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
