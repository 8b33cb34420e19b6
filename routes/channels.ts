import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import {
  archiveChannel,
  createChannel,
  listChannels,
  pageChannels,
  unarchiveChannel,
} from "../domain/channels/channels.ts";
import { loadChannel } from "../domain/channels/access.ts";
import { changeChannel } from "../domain/channels/channel_edit.ts";
import { cleanChannelName } from "../domain/channels/slug.ts";
import { longerThan, MAX_NAME_CHARS } from "../domain/text.ts";
import { readBody, readQuery } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";
import { channelView } from "../domain/views.ts";

const newChannel = z.object({
  name: z.string({ error: "The name is required and must be a string." })
    .refine(
      (n) => !longerThan(n, MAX_NAME_CHARS),
      "The name may not be longer than 255 characters.",
    )
    .refine((n) => cleanChannelName(n).length > 0, "The name is required."),
  visibility: z.enum(["public", "private"], { error: "The visibility must be public or private." }),
  topic: z.string({ error: "The topic must be a string or null." })
    .refine(
      (t) => !longerThan(t, MAX_NAME_CHARS),
      "The topic may not be longer than 255 characters.",
    )
    .nullable().optional(),
});

/** `PATCH /channels/{channel}`: the domain checks each field by the rule for names. */
const channelChange = z.object({
  name: z.string({ error: "The name must be a string." }).optional(),
  topic: z.string({ error: "The topic must be a string or null." }).nullable().optional(),
});

const LIMIT_RULE = "The limit must be a whole number from 1 to 1000.";

/** `GET /channels?limit=&cursor=`: without a limit, the whole list (after the cursor, if given). */
const listQuery = z.object({
  limit: z.coerce.number({ error: LIMIT_RULE }).int(LIMIT_RULE).min(1, LIMIT_RULE)
    .max(1_000, LIMIT_RULE).optional(),
  cursor: z.string().optional(),
});

/** /channels: list, create, show, change, archive, unarchive. */
export function channelRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>()
    .get("/", requireScope("channels:read"), async (c) => {
      const q = readQuery(c, listQuery);
      const page = q.limit === undefined && q.cursor === undefined
        ? { channels: await listChannels(ctx, c.var.subject), nextCursor: null }
        : await pageChannels(ctx, c.var.subject, {
          limit: q.limit ?? Infinity,
          cursor: q.cursor ?? null,
        });
      return c.json({
        data: page.channels.map(channelView),
        meta: { next_cursor: page.nextCursor },
      });
    })
    .post("/", requireScope("channels:write"), async (c) => {
      const input = await readBody(c, newChannel);
      return c.json({ data: channelView(await createChannel(ctx, c.var.subject, input)) }, 201);
    })
    .get("/:channel", requireScope("channels:read"), async (c) => {
      const { channel } = await loadChannel(ctx, c.var.subject, c.req.param("channel"));
      return c.json({ data: channelView(channel) });
    })
    .patch("/:channel", requireScope("channels:write"), async (c) => {
      const change = await readBody(c, channelChange);
      const channel = await changeChannel(ctx, c.var.subject, c.req.param("channel"), change);
      return c.json({ data: channelView(channel) });
    })
    .post("/:channel/archive", requireScope("channels:write"), async (c) => {
      const channel = await archiveChannel(ctx, c.var.subject, c.req.param("channel"));
      return c.json({ data: channelView(channel) });
    })
    .post("/:channel/unarchive", requireScope("channels:write"), async (c) => {
      const channel = await unarchiveChannel(ctx, c.var.subject, c.req.param("channel"));
      return c.json({ data: channelView(channel) });
    });
}
