import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import { EVENT_TYPES } from "../core/types.ts";
import { SIGNATURE_SCHEMES } from "../core/webhook_records.ts";
import { deliveryView, subscriptionView } from "../domain/views.ts";
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  MAX_CHANNEL_IDS,
  showWebhook,
  updateWebhook,
} from "../domain/webhooks/webhooks.ts";
import { recoverWebhook, redeliver, testWebhook } from "../domain/webhooks/sends.ts";
import { attempt, settle } from "../core/settled.ts";
import { parseJsonObject, readBody, readJsonObject, readText, uuidText, validate } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const eventsMessage = `Each event must be one of ${EVENT_TYPES.join(", ")}.`;

/** Entries a subscription's `events` may list, repeats included (they are folded). */
const MAX_EVENT_ENTRIES = 100;

/**
 * An array of `item`, at least one and at most `max` long. The length is checked before any item
 * is: a body can hold tens of thousands, and each would cost work before the limit refused it.
 */
const boundedArray = <T extends z.ZodType>(
  item: T,
  max: number,
  messages: { notArray: string; empty: string; tooMany: string },
) =>
  z.unknown().refine((v) => !Array.isArray(v) || v.length <= max, messages.tooMany).pipe(
    z.array(item, { error: messages.notArray }).min(1, messages.empty),
  );

/** What POST /webhooks takes (and the screen's form for a new subscription). */
export const newWebhook = z.object({
  name: z.string({ error: "The name is required and must be a string." })
    .trim()
    .min(1, "The name is required.")
    .max(255, "The name may not be longer than 255 characters."),
  url: z.string({ error: "The url is required and must be a string." })
    .max(2048, "The url may not be longer than 2048 characters."),
  events: boundedArray(z.enum(EVENT_TYPES, { error: eventsMessage }), MAX_EVENT_ENTRIES, {
    notArray: "The events are required: an array of event names.",
    empty: "Choose at least one event.",
    tooMany: `List each event at most once (at most ${MAX_EVENT_ENTRIES} entries).`,
  }),
  channel_ids: boundedArray(
    uuidText("Each channel id must be a uuid."),
    MAX_CHANNEL_IDS,
    {
      notArray: "The channel_ids must be an array of channel ids, or null.",
      empty: "List at least one channel, or omit channel_ids for the whole workspace.",
      tooMany:
        `A subscription may name at most ${MAX_CHANNEL_IDS} channels; omit channel_ids for the whole workspace.`,
    },
  ).nullable().optional(),
  signature_scheme: z.enum(SIGNATURE_SCHEMES, {
    error: `The signature_scheme must be one of ${SIGNATURE_SCHEMES.join(", ")}.`,
  }).optional(),
});

/** What a test sends: a ping (the default), or a sample of an event type. */
const TEST_TYPES = ["ping", ...EVENT_TYPES] as const;
const testBody = z.object({
  event_type: z.enum(TEST_TYPES, {
    error: `The event_type must be one of ${TEST_TYPES.join(", ")}.`,
  })
    .optional(),
});

const recoverBody = z.object({
  since: z.string({ error: "The since time is required: an ISO 8601 date-time." })
    .refine((s) => !Number.isNaN(Date.parse(s)), "The since time must be an ISO 8601 date-time.")
    .transform((s) => new Date(s)),
});

/** What PATCH takes (and the screen's edit form): any of the create fields, with their rules. */
export const webhookChanges = newWebhook.partial();
/** The screen's form choosing how a subscription is signed. */
export const schemeChange = newWebhook.pick({ signature_scheme: true }).required();

/** What a recover did, and what it left to the retries still under way. */
function recoverMessage(events: number, retrying: number): string {
  const sent = events === 0
    ? "No event has failed for good since then: nothing to send again."
    : `${events === 1 ? "The failed event" : `The ${events} failed events`} will be sent again.`;
  if (retrying === 0) return sent;
  const still = retrying === 1 ? "1 delivery is" : `${retrying} deliveries are`;
  return `${sent} ${still} still being retried on schedule (GET /webhooks/{id} shows them); ` +
    "what fails for good can be recovered then.";
}

/** /webhooks: outgoing-webhook subscriptions of the token's team, and redelivery. */
export function webhookRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>()
    .get("/", requireScope("webhooks:read"), async (c) => {
      const subscriptions = await listWebhooks(ctx, c.var.subject);
      return c.json({ data: subscriptions.map(subscriptionView) });
    })
    .post("/", requireScope("webhooks:write"), async (c) => {
      const input = await readBody(c, newWebhook);
      const { subscription, secret } = await createWebhook(ctx, c.var.subject, input);
      return c.json({ data: subscriptionView(subscription), secret }, 201);
    })
    .get("/:webhookSubscription", requireScope("webhooks:read"), async (c) => {
      const { subscription, deliveries } = await showWebhook(
        ctx,
        c.var.subject,
        c.req.param("webhookSubscription"),
      );
      return c.json({
        data: { ...subscriptionView(subscription), deliveries: deliveries.map(deliveryView) },
      });
    })
    .patch("/:webhookSubscription", requireScope("webhooks:write"), async (c) => {
      const body = await settle(readJsonObject(c));
      const changes = body.ok ? attempt(() => validate(webhookChanges, body.value)) : body;
      const updated = await updateWebhook(ctx, c.var.subject, c.req.param("webhookSubscription"), {
        input: changes,
        asked: body.ok ? Object.keys(body.value) : [],
      });
      return c.json({ data: subscriptionView(updated) });
    })
    .post("/:webhookSubscription/recover", requireScope("webhooks:write"), async (c) => {
      const since = await settle(readBody(c, recoverBody).then((b) => b.since));
      const { events, retrying } = await recoverWebhook(
        ctx,
        c.var.subject,
        c.req.param("webhookSubscription"),
        since,
      );
      return c.json({ message: recoverMessage(events, retrying), events }, 202);
    })
    .post("/:webhookSubscription/test", requireScope("webhooks:write"), async (c) => {
      const text = await readText(c);
      const { event_type } = text.trim() ? validate(testBody, parseJsonObject(text)) : {};
      const type = event_type ?? "ping";
      const { event_id } = await testWebhook(ctx, c.var.subject, {
        id: c.req.param("webhookSubscription"),
        type,
      });
      const what = type === "ping" ? "A ping" : `A sample ${type} event`;
      return c.json({ message: `${what} is on its way.`, event_id }, 202);
    })
    .delete("/:webhookSubscription", requireScope("webhooks:write"), async (c) => {
      await deleteWebhook(ctx, c.var.subject, c.req.param("webhookSubscription"));
      return c.body(null, 204);
    })
    .post(
      "/:webhookSubscription/deliveries/:delivery/redeliver",
      requireScope("webhooks:write"),
      async (c) => {
        const { event_id } = await redeliver(
          ctx,
          c.var.subject,
          c.req.param("webhookSubscription"),
          c.req.param("delivery"),
        );
        return c.json({ message: "The event will be sent again.", event_id }, 202);
      },
    );
}
