/**
 * The one rule for whether an app may still act in a team, for everything sent to it or done in
 * its name (a command, a press, a view, a response URL, a trigger): the app exists, its install
 * was not taken back, and its bot is active. Uninstalling deactivates the bot; so does an admin.
 */
import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import type { App, AppInstall } from "../../core/app_records.ts";
import type { User } from "../../core/types.ts";
import { keys } from "../../kv/keys.ts";
import { getUser } from "../../kv/workspace.ts";

export interface LiveInstall {
  app: App;
  install: AppInstall;
  bot: User;
}

/** The app's install in the team with its app and bot, when live; null otherwise. */
export async function liveInstall(
  ctx: Ctx,
  { teamId, appId }: { teamId: string; appId: string },
): Promise<LiveInstall | null> {
  const [app, install] = await ctx.kv.getMany<[App, AppInstall]>([
    keys.app(appId),
    keys.install(teamId, appId),
  ]);
  if (!app.value || !install.value || install.value.uninstalled_at) return null;
  const bot = await getUser(ctx.kv, install.value.bot_user_id);
  if (!bot || !isActive(bot)) return null;
  return { app: app.value, install: install.value, bot };
}
