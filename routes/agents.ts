/**
 * /apps/{app}/threads and /apps/{app}/context: a person starts a thread with an agent, reads it,
 * and tells the agent what they look at beside it (domain/apps/agents.ts).
 */
import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import { changeContext, showThread, startThread } from "../domain/apps/agents.ts";
import { agentThreadView } from "../domain/views.ts";
import { readBody, uuidText } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const CHANNEL = "The channel_id must be the id of a channel you can see, or null.";
const newThread = z.object({
  context: z.object({ channel_id: uuidText(CHANNEL).nullable().optional() }).optional(),
});
const context = z.object({ channel_id: uuidText(CHANNEL).nullable() });

export const agentRoutes = (ctx: Ctx) =>
  new Hono<ApiEnv>()
    .post("/:app/threads", requireScope("messages:write"), async (c) => {
      const body = await readBody(c, newThread);
      const thread = await startThread(ctx, c.var.subject, {
        appId: c.req.param("app"),
        contextChannelId: body.context?.channel_id ?? null,
      });
      return c.json({ data: agentThreadView(thread) }, 201);
    })
    .get("/:app/threads/:thread_ts", requireScope("messages:read"), async (c) => {
      const thread = await showThread(ctx, c.var.subject, {
        appId: c.req.param("app"),
        threadTs: c.req.param("thread_ts"),
      });
      return c.json({ data: agentThreadView(thread) });
    })
    .put("/:app/threads/:thread_ts/context", requireScope("messages:write"), async (c) => {
      const { channel_id } = await readBody(c, context);
      const thread = await changeContext(ctx, c.var.subject, {
        appId: c.req.param("app"),
        threadTs: c.req.param("thread_ts"),
        contextChannelId: channel_id,
      });
      return c.json({ data: agentThreadView(thread) });
    })
    .put("/:app/context", requireScope("messages:write"), async (c) => {
      const { channel_id } = await readBody(c, context);
      const conversation = await changeContext(ctx, c.var.subject, {
        appId: c.req.param("app"),
        threadTs: null,
        contextChannelId: channel_id,
      });
      return c.json({ data: agentThreadView(conversation) });
    });
