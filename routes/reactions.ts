import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { setReaction } from "../domain/messages/reactions.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

/**
 * The `{emoji}` segment as sent, still percent-encoded: the router's decoding falls back to the
 * raw text on bad encoding, which would hide the real reason for the 422.
 */
const rawLastSegment = (url: string) => new URL(url).pathname.split("/").at(-1) ?? "";

/** /channels/{channel}/messages/{message}/reactions/{emoji}: add and remove, both 204. */
export function reactionRoutes(ctx: Ctx) {
  const route = "/:channel/messages/:message/reactions/:emoji";
  return new Hono<ApiEnv>()
    .put(route, requireScope("reactions:write"), async (c) => {
      const { channel, message } = c.req.param();
      await setReaction(ctx, c.var.subject, {
        channelId: channel,
        messageId: message,
        segment: rawLastSegment(c.req.url),
        present: true,
      });
      return c.body(null, 204);
    })
    .delete(route, requireScope("reactions:write"), async (c) => {
      const { channel, message } = c.req.param();
      await setReaction(ctx, c.var.subject, {
        channelId: channel,
        messageId: message,
        segment: rawLastSegment(c.req.url),
        present: false,
      });
      return c.body(null, 204);
    });
}
