import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../core/context.ts";
import { listEvents } from "../domain/event_feed.ts";
import { isUuid } from "../core/ids.ts";
import { EVENT_TYPES, type EventType } from "../core/types.ts";
import { envelopeOf } from "../domain/views.ts";
import { validate } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const uuid = (field: string) =>
  z.string().refine(isUuid, `The ${field} must be a uuid.`).transform((s) => s.toLowerCase());

const feedQuery = z.object({
  after: uuid("after").optional(),
  channel_id: uuid("channel_id").optional(),
  types: z.string().transform((s, ctx) => {
    const types = s.split(",").map((t) => t.trim()).filter(Boolean);
    const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (types.length === 0 || unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `Each type must be one of ${EVENT_TYPES.join(", ")}.`,
      });
      return z.NEVER;
    }
    return types as EventType[];
  }).optional(),
  limit: z.coerce.number({ error: "The limit must be a whole number from 1 to 100." })
    .int("The limit must be a whole number from 1 to 100.")
    .min(1, "The limit must be a whole number from 1 to 100.")
    .max(100, "The limit must be a whole number from 1 to 100.")
    .default(50),
});

/** GET /events: the team's events the token's user can see, oldest first, for catching up. */
export function eventRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>().get("/", requireScope("messages:read"), async (c) => {
    const q = validate(feedQuery, c.req.query());
    const page = await listEvents(ctx, c.var.subject, {
      after: q.after ?? null,
      types: q.types ?? null,
      channelId: q.channel_id ?? null,
      limit: q.limit,
    });
    return c.json({
      data: page.events.map(envelopeOf),
      meta: { next_cursor: page.nextCursor, has_more: page.hasMore },
    });
  });
}
