import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { homeNow, openHome } from "../domain/apps/home.ts";
import { pollFor } from "../core/poll.ts";
import { SLACK_ANSWER_MS } from "../core/slack_wire.ts";
import { openMessages } from "../domain/apps/agents.ts";
import { agentThreadView } from "../domain/views.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";
import { readQuery } from "./body.ts";
import { z } from "zod";

/** How often a first open looks for the Home its app is publishing. */
const FIRST_HOME_POLL_MS = 100;

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
    const opened = await openHome(ctx, c.var.subject, app);
    // A first open: the app publishes its Home as it hears of it, within Slack's 3 seconds.
    const view = opened.view ??
      (opened.told
        ? await pollFor(() => homeNow(ctx, c.var.subject, app), {
          everyMs: FIRST_HOME_POLL_MS,
          withinMs: SLACK_ANSWER_MS,
        })
        : null);
    return c.json({ data: view });
  });

const tabs = z.object({
  tab: z.enum(["home", "messages"], { error: "The tab is home or messages." }).optional(),
});
