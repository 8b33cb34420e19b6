import type { Ctx } from "../context.ts";
import type { AppInstall } from "../../core/app_records.ts";
import { listTeamInstalls } from "../../kv/apps/apps.ts";

/** The install whose bot `botId` is, in its team, unless uninstalled: the app a bot acts for. */
export async function installOfBot(
  ctx: Ctx,
  { teamId, botId }: { teamId: string; botId: string },
): Promise<AppInstall | null> {
  const installs = await listTeamInstalls(ctx.kv, teamId);
  return installs.find((i) => i.bot_user_id === botId && !i.uninstalled_at) ?? null;
}
