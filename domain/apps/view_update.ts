/** views.update: an app changes one of its open views in place (domain/apps/views.ts). */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { retrying } from "../../core/retry.ts";
import { stackOf, viewIdByExternal, writeStack } from "../../kv/apps/views.ts";
import { installOfBot } from "./bot_install.ts";
import { announce, noView, readViewSpec, slackView, stored } from "./views.ts";

/**
 * views.update: a view of the calling app's, named by its id or by the `external_id` the app
 * gave it, changed in place (refused if `hash` is stale).
 */
export function updateView(
  ctx: Ctx,
  subject: Subject,
  { viewId, externalId, hash, view }: {
    viewId?: string;
    externalId?: string;
    hash?: string;
    view: unknown;
  },
) {
  const wanted = readViewSpec(view);
  return retrying("update view", async () => {
    const id = viewId ?? await byExternalId(ctx, subject, externalId ?? "");
    if (!id) throw noView();
    const entry = await stackOf(ctx.kv, id);
    const stack = entry?.value;
    const at = stack?.views.findIndex((v) => v.id === id) ?? -1;
    if (
      !entry || !stack || stack.closed_at || at < 0 || stack.bot_user_id !== subject.user_id ||
      stack.views[at].type === "home"
    ) {
      throw noView();
    }
    if (hash && hash !== stack.views[at].hash) {
      throw invalid("hash", "The view changed since that hash: read it again.");
    }
    const next = stored(wanted, stack.views[at].previous_view_id, id);
    const changed = { ...stack, views: stack.views.map((v, i) => i === at ? next : v) };
    if (!await writeStack(ctx.kv, { entry, stack: changed })) return null;
    await announce(ctx, changed, next);
    return slackView(changed, next);
  });
}

/** The view the calling bot's app named by `externalId` in its team, or null. */
async function byExternalId(ctx: Ctx, subject: Subject, externalId: string) {
  const install = await installOfBot(ctx, { teamId: subject.team_id, botId: subject.user_id });
  if (!install || !externalId) return null;
  return await viewIdByExternal(ctx.kv, {
    appId: install.app_id,
    teamId: subject.team_id,
    externalId,
  });
}
