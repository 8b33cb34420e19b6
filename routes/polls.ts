import { type Context, Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { closePoll, listVoters, setVote } from "../domain/messages/polls.ts";
import { messageView } from "../domain/views.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

/**
 * A poll's votes and its end: /channels/{channel}/messages/{message}/votes/{option} (PUT and
 * DELETE, 204, with the reactions' scope: voting is reacting with a choice; GET lists voters)
 * and .../close.
 */
export function pollRoutes(ctx: Ctx) {
  const votes = "/:channel/messages/:message/votes/:option";
  const vote = (present: boolean) => async (c: Context<ApiEnv>) => {
    await setVote(ctx, c.var.subject, {
      channelId: c.req.param("channel")!,
      messageId: c.req.param("message")!,
      optionId: c.req.param("option")!,
      present,
    });
    return c.body(null, 204);
  };
  return new Hono<ApiEnv>()
    .put(votes, requireScope("reactions:write"), vote(true))
    .delete(votes, requireScope("reactions:write"), vote(false))
    .get(votes, requireScope("messages:read"), async (c) => {
      const { channel, message, option } = c.req.param();
      const { voters, nextCursor } = await listVoters(ctx, c.var.subject, {
        channelId: channel,
        messageId: message,
        optionId: option,
        cursor: c.req.query("cursor"),
      });
      return c.json({ data: voters, meta: { next_cursor: nextCursor } });
    })
    .post("/:channel/messages/:message/close", requireScope("messages:write"), async (c) => {
      const { channel, message } = c.req.param();
      const closed = await closePoll(ctx, c.var.subject, {
        channelId: channel,
        messageId: message,
      });
      return c.json({ data: messageView(closed) });
    });
}
