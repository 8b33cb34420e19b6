import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { showView } from "../domain/apps/views.ts";
import { closeView, submitView } from "../domain/apps/view_submit.ts";
import { readBody, readQuery } from "./body.ts";
import { choice, suggestingQuery } from "./choices.ts";
import { viewOptions } from "../domain/apps/options.ts";
import { press } from "./actions.ts";
import { pressInView } from "../domain/apps/view_actions.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const values = z.record(
  z.string(),
  z.record(z.string(), z.object(choice)),
  {
    error: "The values are { <block_id>: { <action_id>: { value } or Slack's selected_* } }.",
  },
);
const submission = z.object({ values });
/** A press in a view: the element, what it chose, and the view's inputs as the person left them. */
const viewPress = press.extend({ values: values.optional() });

/** /views/{view}: a modal its person reads, presses in, submits and closes. */
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
    .post("/:view/actions", requireScope("messages:write"), async (c) => {
      const { values, ...pressed } = await readBody(c, viewPress);
      const took = await pressInView(ctx, calls, {
        subject: c.var.subject,
        viewId: c.req.param("view"),
        press: pressed,
        values,
      });
      return c.json({ data: took });
    })
    .get("/:view/options", requireScope("messages:write"), async (c) => {
      const offered = await viewOptions(ctx, calls, {
        subject: c.var.subject,
        viewId: c.req.param("view"),
        suggesting: readQuery(c, suggestingQuery),
      });
      return c.json({ data: offered });
    })
    .post("/:view/close", requireScope("messages:write"), async (c) => {
      await closeView(ctx, calls, { subject: c.var.subject, viewId: c.req.param("view") });
      return c.body(null, 204);
    });
