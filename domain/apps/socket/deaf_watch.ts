/**
 * Someone is told (decisions.md, "Apps without a public URL"): a Socket Mode app with events
 * waiting and no connection anywhere for SOCKET_MODE_DEAF_AFTER gets whoever installed it (the
 * team's owners for an install made by the operator) a direct message from the Integrations bot,
 * once per episode, and another when it connects again. Every instance looks; the episode's
 * record, changed only by checked commits, makes one of them tell, once. The same look keeps the
 * backlog of an app away within SOCKET_MODE_BACKLOG, as the instances holding connections do.
 */
import type { Ctx } from "../../context.ts";
import { isActivePerson } from "../../../core/active.ts";
import type { App, AppInstall, SocketDeaf, SocketStatus } from "../../../core/app_records.ts";
import type { User } from "../../../core/types.ts";
import { keys } from "../../../kv/keys.ts";
import { getApp, listAllInstalls } from "../../../kv/apps/apps.ts";
import { getTeam, getUser, listTeamUsers } from "../../../kv/workspace.ts";
import { tellPeople } from "../../people/integrations_bot.ts";
import { isAdmin } from "../../policy.ts";
import { socketApps, socketStatus } from "./status.ts";
import { trimPending } from "../../../kv/apps/socket_queue.ts";

type Told = "away" | "back";

/** Looks over every Socket Mode app once: starts, tells of, or ends their episodes away. */
export async function watchDeafApps(ctx: Ctx, now = Date.now()): Promise<void> {
  for (const appId of await socketApps(ctx)) {
    const entry = await ctx.kv.get<SocketDeaf>(keys.socketDeaf(appId));
    const app = (await getApp(ctx.kv, appId)).value;
    let status = await socketStatus(ctx, appId);
    const keep = ctx.settings.socketMode.backlog;
    // Bounded while away too: connected, its instance trims as well; whoever commits first wins.
    if (status.backlog > keep) {
      await trimPending(ctx.kv, { appId, backlog: status.backlog, keep });
      status = await socketStatus(ctx, appId);
    }
    const next = nextOf(entry.value, {
      app,
      status,
      now,
      after: ctx.settings.socketMode.deafAfterMs,
    });
    if (next === "same") continue;
    const plan = ctx.kv.atomic().check(entry);
    const committed = next.record
      ? await plan.set(entry.key, next.record).commit()
      : await plan.delete(entry.key).commit();
    if (!committed.ok || !next.tell || !app) continue;
    const since = entry.value?.since ?? now;
    await tellOf(ctx, { app, told: next.tell, away: { status, since, now } });
  }
}

/** What becomes of an app's episode, as it stands now. */
function nextOf(
  record: SocketDeaf | null,
  { app, status, now, after }: {
    app: App | null;
    status: SocketStatus;
    now: number;
    after: number;
  },
): "same" | { record: SocketDeaf | null; tell: Told | null } {
  const away = app?.socket_mode_enabled === true && status.connections.length === 0;
  if (!record) {
    return away && status.backlog > 0
      ? { record: { since: now, told_at: null }, tell: null }
      : "same";
  }
  if (!away) {
    return { record: null, tell: record.told_at && status.connections.length ? "back" : null };
  }
  if (record.told_at) return "same";
  if (status.backlog === 0) return { record: null, tell: null };
  if (now - record.since < after) return "same";
  return { record: { ...record, told_at: now }, tell: "away" };
}

/** An episode away, as it is told: the app's standing, since when it is away, and now. */
interface Away {
  status: SocketStatus;
  since: number;
  now: number;
}

async function tellOf(
  ctx: Ctx,
  { app, told, away }: { app: App; told: Told; away: Away },
): Promise<void> {
  const body = told === "back" ? backWords(app) : awayWords(ctx, app, away);
  for (const install of await listAllInstalls(ctx.kv, app.id)) {
    if (install.uninstalled_at) continue;
    const team = await getTeam(ctx.kv, install.team_id);
    if (team) await tellPeople(ctx, { team, people: await installersOf(ctx, install), body });
  }
}

/** Who installed it, else (an install by the operator) the team's owners, or admins with none. */
async function installersOf(ctx: Ctx, install: AppInstall): Promise<User[]> {
  const by = install.installed_by ? await getUser(ctx.kv, install.installed_by) : null;
  if (by && isActivePerson(by)) return [by];
  const people = (await listTeamUsers(ctx.kv, install.team_id))
    .filter(isActivePerson);
  const owners = people.filter((u) => u.role === "owner");
  return owners.length > 0 ? owners : people.filter(isAdmin);
}

function awayWords(ctx: Ctx, app: App, { status, since, now }: Away): string {
  const minutes = Math.round((now - since) / 60_000);
  const { backlog } = ctx.settings.socketMode;
  return `Your app "${app.name}" has had no Socket Mode connection for ${minutes} min and ` +
    `${status.backlog} events are waiting for it. They are kept until it connects (up to ` +
    `${backlog}, and 30 days). Start the app, or check its app-level token (deno task admin ` +
    `app:tokens --app ${app.id}); deno task admin app:deliveries --app ${app.id} shows its ` +
    `connections and backlog.`;
}

const backWords = (app: App) =>
  `Your app "${app.name}" is connected again: the events that waited are on their way to it.`;

/**
 * How often the service's processes look (`watchDeafApps`): a quarter of the wait, so an episode
 * is told at most a quarter late; at most every 30 s.
 */
export const deafLookEveryMs = (ctx: Ctx) =>
  Math.min(30_000, Math.max(500, ctx.settings.socketMode.deafAfterMs / 4));
