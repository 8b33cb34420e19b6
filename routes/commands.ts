import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import type { AppCalls } from "../domain/apps/app_call.ts";
import { listCommands, runCommand } from "../domain/apps/commands.ts";
import type { Interaction } from "../domain/apps/interaction.ts";
import { messageView } from "../domain/views.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const runBody = z.object({
  command: z.string({ error: "The command is required, such as /deploy." }),
  text: z.string({ error: "The text must be a string." }).max(4_000).optional(),
});

/** A command run or a press, its message (if the app posted one) as the API shows messages. */
export const interactionView = <T extends Interaction>(run: T) => ({
  ...run,
  message: run.message && messageView(run.message),
});

/** GET /commands: the team's slash commands. */
export const commandListRoutes = (ctx: Ctx) =>
  new Hono<ApiEnv>().get(
    "/",
    requireScope("messages:write"),
    async (c) => c.json({ data: await listCommands(ctx, c.var.subject) }),
  );

/** POST /channels/{channel}/commands: a person runs a command; the app's answer is the run's. */
export const commandRunRoutes = (ctx: Ctx, calls: AppCalls) =>
  new Hono<ApiEnv>().post("/:channel/commands", requireScope("messages:write"), async (c) => {
    const body = await readBody(c, runBody);
    const run = await runCommand(ctx, calls, {
      subject: c.var.subject,
      channelId: c.req.param("channel"),
      command: body.command,
      text: body.text ?? "",
    });
    return c.json({ data: interactionView(run) });
  });
