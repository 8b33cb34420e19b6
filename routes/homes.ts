import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { openHome } from "../domain/apps/home.ts";
import { openMessages } from "../domain/apps/agents.ts";
import { agentThreadView } from "../domain/views.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";
import { readQuery } from "./body.ts";
import { z } from "zod";

/**
 * /apps/{app}/home: a person opens an app's Home; with `?tab=messages`, an agent's Messages tab
 * (their conversation with it).
 */
export const homeRoutes = (ctx: Ctx) =>
  new Hono<ApiEnv>().get("/:app/home", requireScope("messages:read"), async (c) => {
    const app = c.req.param("app");
    const tab = readQuery(c, tabs).tab;
    if (tab === "messages") {
      return c.json({ data: agentThreadView(await openMessages(ctx, c.var.subject, app)) });
    }
    return c.json({ data: await openHome(ctx, c.var.subject, app) });
  });

const tabs = z.object({
  tab: z.enum(["home", "messages"], { error: "The tab is home or messages." }).optional(),
});
