import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { pressAction } from "../domain/apps/actions.ts";
import { interactionView } from "./commands.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const idField = (field: string) =>
  z.string({ error: `The ${field} must be a string.` }).min(1, `The ${field} is required.`).max(
    255,
  );

const press = z.object({
  action_id: idField("action_id"),
  block_id: idField("block_id").optional(),
  value: z.string({ error: "The value must be a string." }).max(2_000).optional(),
  selected_option: z.object(
    { value: z.string({ error: "The option's value must be a string." }) },
    {
      error: "The selected_option must be an object with a value.",
    },
  ).optional(),
});

/** POST /channels/{channel}/messages/{message}/actions: a person presses an element. */
export const actionRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().post(
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
