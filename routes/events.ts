import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import { listEvents } from "../domain/stream/feed.ts";
import { openEventStream } from "../domain/stream/open.ts";
import type { StreamHub } from "../domain/stream/hub.ts";
import { SseSink } from "./event_stream_sse.ts";
import { MAX_CHANNEL_IDS } from "../domain/webhooks/webhooks.ts";
import { errorFields, log } from "../core/log.ts";
import { EVENT_TYPES, type EventType } from "../core/types.ts";
import { envelopeOf } from "../domain/views.ts";
import { readQuery, uuidText, validate } from "./body.ts";
import { storedId } from "../core/ids.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const uuid = (field: string) => uuidText(`The ${field} must be a uuid.`);

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

/**
 * Settles when the server is done with the response, sent or not. `completed` rejects when the
 * client went first, and Deno 2.5 treats a rejection nobody handles as fatal: it is always
 * handled here.
 */
const finished = (info: Partial<Deno.ServeHandlerInfo> | undefined) =>
  info?.completed?.then(() => {}, () => {});

/** `channel_ids` of a stream: as a subscription's, comma-separated. */
const channelList = z.string().transform((s, ctx) => {
  const given = s.split(",").map((t) => t.trim()).filter(Boolean);
  const ids = given.map(storedId).filter((id) => id !== null);
  if (ids.length === 0 || ids.length > MAX_CHANNEL_IDS || ids.length < given.length) {
    ctx.addIssue({
      code: "custom",
      message: `The channel_ids must be 1 to ${MAX_CHANNEL_IDS} channel ids, comma-separated.`,
    });
    return z.NEVER;
  }
  return [...new Set(ids)];
});

const streamQuery = z.object({
  after: z.string().optional(),
  channel_ids: channelList.optional(),
  types: feedQuery.shape.types,
});

/**
 * /events: the team's events the token's user can see, as a page for catching up (GET /events)
 * or live (GET /events/stream, Server-Sent Events, resumable by Last-Event-ID).
 */
export function eventRoutes(ctx: Ctx, hub: StreamHub) {
  return new Hono<ApiEnv>().get("/stream", requireScope("messages:read"), async (c) => {
    const q = validate(streamQuery, c.req.query());
    const opened = await openEventStream(ctx, hub, c.var.subject, {
      types: q.types ?? null,
      channelIds: q.channel_ids ?? null,
      after: c.req.header("Last-Event-ID") || q.after || null,
      done: finished(c.env as Partial<Deno.ServeHandlerInfo> | undefined),
    });
    const sink = new SseSink(() => opened.gone());
    opened.run(sink).catch((e) => log.error("stream: serving a stream failed", errorFields(e)));
    return c.body(sink.body, 200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      // Proxies that buffer (nginx) would hold events back.
      "X-Accel-Buffering": "no",
    });
  }).get("/", requireScope("messages:read"), async (c) => {
    const q = readQuery(c, feedQuery);
    const page = await listEvents(ctx, c.var.subject, {
      after: q.after ?? null,
      types: q.types ?? null,
      channelId: q.channel_id ?? null,
      limit: q.limit,
    });
    return c.json({
      data: page.events.map(envelopeOf),
      meta: {
        next_cursor: page.nextCursor,
        has_more: page.hasMore,
        until: new Date(page.untilMs).toISOString(),
      },
    });
  });
}
