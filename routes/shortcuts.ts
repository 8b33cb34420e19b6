import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { listShortcuts, runGlobalShortcut, runMessageShortcut } from "../domain/apps/shortcuts.ts";
import { interactionView } from "./commands.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const onMessage = z.object({
  app_id: z.string({ error: "The app_id is required." }).min(1).max(255),
  callback_id: z.string({ error: "The callback_id is required." }).min(1).max(255),
});

/** GET /shortcuts: the team's shortcuts. */
export const shortcutListRoutes = (ctx: Ctx) =>
  new Hono<ApiEnv>().get(
    "/",
    requireScope("messages:write"),
    async (c) => c.json({ data: await listShortcuts(ctx, c.var.subject) }),
  );

/** POST /apps/{app}/shortcuts/{callback_id}: a person runs a global shortcut. */
export const globalShortcutRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().post(
    "/:app/shortcuts/:callback_id",
    requireScope("messages:write"),
    async (c) => {
      const ran = await runGlobalShortcut(ctx, calls, {
        subject: c.var.subject,
        appId: c.req.param("app"),
        callbackId: c.req.param("callback_id"),
      });
      return c.json({ data: interactionView(ran) });
    },
  );

/** POST /channels/{channel}/messages/{message}/shortcuts: a person runs a message shortcut. */
export const messageShortcutRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().post(
    "/:channel/messages/:message/shortcuts",
    requireScope("messages:write"),
    async (c) => {
      const body = await readBody(c, onMessage);
      const ran = await runMessageShortcut(ctx, calls, {
        subject: c.var.subject,
        channelId: c.req.param("channel"),
        messageId: c.req.param("message"),
        appId: body.app_id,
        callbackId: body.callback_id,
      });
      return c.json({ data: interactionView(ran) });
    },
  );
