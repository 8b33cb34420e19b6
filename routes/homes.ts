import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { openHome } from "../domain/apps/home.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

/** /apps/{app}/home: a person opens an app's Home. */
export const homeRoutes = (ctx: Ctx) =>
  new Hono<ApiEnv>().get("/:app/home", requireScope("messages:read"), async (c) => {
    return c.json({ data: await openHome(ctx, c.var.subject, c.req.param("app")) });
  });
