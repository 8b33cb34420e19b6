import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { pressAction } from "../domain/apps/actions.ts";
import { interactionView } from "./commands.ts";
import { readBody, readQuery } from "./body.ts";
import { choice, suggestingQuery } from "./choices.ts";
import { messageOptions } from "../domain/apps/options.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const idField = (field: string) =>
  z.string({ error: `The ${field} must be a string.` }).min(1, `The ${field} is required.`).max(
    255,
  );

/** A press of an element: which one, and what it chose (a button chooses nothing). */
export const press = z.object({
  action_id: idField("action_id"),
  block_id: idField("block_id").optional(),
  ...choice,
});

/**
 * POST /channels/{channel}/messages/{message}/actions: a person presses an element; GET
 * .../options: what the app offers for one of its external menus.
 */
export const actionRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().get(
    "/:channel/messages/:message/options",
    requireScope("messages:write"),
    async (c) => {
      const offered = await messageOptions(ctx, calls, {
        subject: c.var.subject,
        channelId: c.req.param("channel"),
        messageId: c.req.param("message"),
        suggesting: readQuery(c, suggestingQuery),
      });
      return c.json({ data: offered });
    },
  ).post(
    "/:channel/messages/:message/actions",
    requireScope("messages:write"),
    async (c) => {
      const pressed = await pressAction(ctx, calls, {
        subject: c.var.subject,
        channelId: c.req.param("channel"),
        messageId: c.req.param("message"),
        press: await readBody(c, press),
      });
      return c.json({ data: interactionView(pressed) });
    },
  );
