import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { pressEphemeral } from "../domain/apps/ephemeral_actions.ts";
import { press } from "./actions.ts";
import { interactionView } from "./commands.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

/** POST /ephemeral/{id}/actions: the person of an app's ephemeral message presses an element. */
export const ephemeralRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().post("/:id/actions", requireScope("messages:write"), async (c) => {
    const pressed = await pressEphemeral(ctx, calls, {
      subject: c.var.subject,
      ephemeralId: c.req.param("id"),
      press: await readBody(c, press),
    });
    return c.json({ data: interactionView(pressed) });
  });
