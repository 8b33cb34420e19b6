/**
 * What the service sent an app lately: its listeners' attempts, every team's for the operator
 * (`app:deliveries`), one team's for its admins (the Apps page).
 */
import type { Ctx } from "../context.ts";
import type { AppInstall } from "../../core/app_records.ts";
import type { Delivery } from "../../core/webhook_records.ts";
import { notFound } from "../../core/errors.ts";
import { getApp, listAllInstalls } from "../../kv/apps/apps.ts";
import { recentDeliveries } from "../../kv/outbox/deliveries.ts";
import { authorize } from "../policy.ts";
import type { Actor } from "../principals.ts";

/** The app's most recent deliveries, newest first, each with the team it went from. */
export async function appDeliveries(
  ctx: Ctx,
  { appId, limit, actor }: { appId: string; limit: number; actor: Actor },
): Promise<(Delivery & { team_id: string })[]> {
  authorize(actor, "app.register", {});
  if (!(await getApp(ctx.kv, appId)).value) throw notFound(`No app ${appId}.`);
  const out: (Delivery & { team_id: string })[] = [];
  for (const install of await listAllInstalls(ctx.kv, appId)) {
    const recent = await deliveriesOf(ctx, install, limit);
    out.push(...recent.map((d) => ({ ...d, team_id: install.team_id })));
  }
  return newestFirst(out, limit);
}

/** An install's most recent deliveries, newest first: for the team's admins. */
export async function installDeliveries(
  ctx: Ctx,
  { install, limit, actor }: { install: AppInstall; limit: number; actor: Actor },
): Promise<Delivery[]> {
  authorize(actor, "app.uninstall", { team_id: install.team_id });
  return newestFirst(await deliveriesOf(ctx, install, limit), limit);
}

async function deliveriesOf(ctx: Ctx, install: AppInstall, limit: number) {
  const out: Delivery[] = [];
  for (const id of install.listener_ids ?? []) {
    out.push(...await recentDeliveries(ctx.kv, id, limit));
  }
  return out;
}

/** Delivery ids are time-ordered. */
const newestFirst = <T extends Delivery>(list: T[], limit: number) =>
  list.sort((a, b) => a.id < b.id ? 1 : -1).slice(0, limit);
