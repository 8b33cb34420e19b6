import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { showView } from "../domain/apps/views.ts";
import { closeView, submitView } from "../domain/apps/view_submit.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const submission = z.object({
  values: z.record(
    z.string(),
    z.record(
      z.string(),
      z.object({ value: z.string({ error: "Each value must be a string." }).max(3_000) }),
    ),
    { error: "The values are required: { <block_id>: { <action_id>: { value } } }." },
  ),
});

/** /views/{view}: a modal its person reads, submits and closes. */
export const viewRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>()
    .get("/:view", requireScope("messages:read"), async (c) => {
      return c.json({ data: await showView(ctx, c.var.subject, c.req.param("view")) });
    })
    .post("/:view/submit", requireScope("messages:write"), async (c) => {
      const { values } = await readBody(c, submission);
      const shown = await submitView(ctx, calls, {
        subject: c.var.subject,
        viewId: c.req.param("view"),
        values,
      });
      return c.json({ data: shown });
    })
    .post("/:view/close", requireScope("messages:write"), async (c) => {
      await closeView(ctx, calls, { subject: c.var.subject, viewId: c.req.param("view") });
      return c.body(null, 204);
    });
