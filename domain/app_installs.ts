/**
 * What installing an app into a team does, and uninstalling takes back. An install acts as the
 * admin who approved it, through the same domain functions the screen and the API use, so every
 * rule (and every audit entry) of making a bot, a token and an incoming webhook holds for it.
 */
import type { Ctx } from "./context.ts";
import type { App, AppInstall, AuthorizationCode, Subject, Team, User } from "../core/types.ts";
import { ApiError, notFound, unlessAlreadyDone } from "../core/errors.ts";
import { nowIso } from "../core/ids.ts";
import { getApp, getInstall, listTeamInstalls, putInstall } from "../kv/apps.ts";
import { getTeam, getUser } from "../kv/workspace.ts";
import { authorize } from "./policy.ts";
import { type Actor, auditActor, subjectOfPerson } from "./principals.ts";
import { createUser } from "./workspace.ts";
import { deactivateUser, reactivateUser } from "./people.ts";
import { createToken, listTokens, type NewToken, revokeTokenById } from "./tokens.ts";
import { isTokenLive } from "./token_format.ts";
import { addMember } from "./members.ts";
import { createIncoming, revokeIncomingById } from "./incoming.ts";

export interface Installed {
  install: AppInstall;
  team: Team;
  token: NewToken;
  incoming: { channel_id: string; url: string; id: string } | null;
}

/** The approving admin, as the install's actor: still an admin of the team, and active. */
async function installer(ctx: Ctx, code: AuthorizationCode) {
  const user = await getUser(ctx.kv, code.user_id);
  if (!user || user.deactivated_at) throw notFound("The admin who approved is gone.");
  const actor = subjectOfPerson(user);
  authorize(actor, "app.install", { team_id: code.team_id });
  return { user, actor };
}

/** The app's bot in the team: the one an earlier install made (active again), or a new one. */
async function botFor(
  ctx: Ctx,
  opts: { app: App; team: Team; earlier: AppInstall | null; actor: Subject },
) {
  const earlier = opts.earlier ? await getUser(ctx.kv, opts.earlier.bot_user_id) : null;
  if (!earlier) {
    return await createUser(
      ctx,
      { teamId: opts.team.id, name: opts.app.name, type: "bot" },
      opts.actor,
    );
  }
  return earlier.deactivated_at ? await reactivateUser(ctx, opts.actor, earlier.id) : earlier;
}

/** Revokes the bot's live tokens: a reinstall leaves only the token it issues. */
async function revokeTokensOf(ctx: Ctx, bot: User, actor: Subject) {
  const live = (await listTokens(ctx, bot.id)).filter((t) => isTokenLive(t, Date.now()));
  for (const t of live) await revokeTokenById(ctx, t.id, actor).catch(unlessAlreadyDone);
}

/** Puts the bot in the channel and gives the app an incoming webhook posting there as it. */
async function hookFor(
  ctx: Ctx,
  opts: { app: App; bot: User; channelId: string; actor: Subject },
) {
  const botId = () => Promise.resolve(opts.bot.id);
  await addMember(ctx, opts.actor, opts.channelId, botId).catch(unlessAlreadyDone);
  const { hook, url } = await createIncoming(ctx, {
    channelId: opts.channelId,
    botId: opts.bot.id,
    name: opts.app.name,
  }, opts.actor);
  return { id: hook.id, channel_id: hook.channel_id, url };
}

/**
 * Installs `app` into the code's team, as the admin who approved: the app's bot (made, or the
 * earlier install's, active again), a bot token with exactly the approved scopes (the earlier
 * ones revoked), and an incoming webhook into the chosen channel where the app asked for one.
 */
export async function installApp(
  ctx: Ctx,
  app: App,
  code: AuthorizationCode,
): Promise<Installed> {
  const { user, actor } = await installer(ctx, code);
  const team = await getTeam(ctx.kv, code.team_id);
  if (!team) throw notFound("No such team.");
  const entry = await getInstall(ctx.kv, team.id, app.id);
  const earlier = entry.value;
  const bot = await botFor(ctx, { app, team, earlier, actor });
  await revokeTokensOf(ctx, bot, actor);
  if (earlier?.incoming_webhook_id) {
    await revokeIncomingById(ctx, earlier.incoming_webhook_id, actor).catch(unlessAlreadyDone);
  }
  const token = await createToken(ctx, bot, { scopes: code.scopes, name: app.name, actor });
  const incoming = code.channel_id
    ? await hookFor(ctx, { app, bot, channelId: code.channel_id, actor })
    : null;
  const install: AppInstall = {
    app_id: app.id,
    team_id: team.id,
    bot_user_id: bot.id,
    token_id: token.token.id,
    incoming_webhook_id: incoming?.id ?? null,
    scopes: code.scopes,
    installed_at: nowIso(),
    installed_by: user.id,
    uninstalled_at: null,
  };
  const recorded = await putInstall(ctx.kv, entry, install, {
    team_id: team.id,
    action: "app.installed",
    ...auditActor(actor),
    target_id: app.id,
    target_name: app.name,
  });
  if (!recorded) {
    // Another install of this app into this team finished first: its record stands, and what
    // this one made is taken back, so nothing live escapes the record an uninstall reads.
    await revokeTokenById(ctx, token.token.id, actor).catch(unlessAlreadyDone);
    if (incoming) await revokeIncomingById(ctx, incoming.id, actor).catch(unlessAlreadyDone);
    if (!earlier) await deactivateUser(ctx, actor, bot.id);
    throw new ApiError(409, "Another install of this app into this team ran at the same time.");
  }
  return { install, team, token, incoming };
}

/**
 * Takes an app out of a team: its tokens revoked, its bot deactivated (so its subscriptions are
 * disabled and its incoming webhooks revoked), at once on every instance. `actor` null: the
 * operator, or the app itself through POST /oauth/revoke.
 */
export async function uninstallApp(
  ctx: Ctx,
  opts: { teamId: string; appId: string; actor: Actor },
): Promise<AppInstall> {
  authorize(opts.actor, "app.uninstall", { team_id: opts.teamId });
  const entry = await getInstall(ctx.kv, opts.teamId, opts.appId);
  if (!entry.value) throw notFound("No such app in this team.");
  if (entry.value.uninstalled_at) return entry.value;
  const bot = await getUser(ctx.kv, entry.value.bot_user_id);
  if (bot && !bot.deactivated_at) await deactivateUser(ctx, opts.actor, bot.id);
  const done: AppInstall = { ...entry.value, uninstalled_at: nowIso() };
  const ok = await putInstall(ctx.kv, entry, done, {
    team_id: opts.teamId,
    action: "app.uninstalled",
    ...auditActor(opts.actor),
    target_id: opts.appId,
    target_name: (await getApp(ctx.kv, opts.appId)).value?.name ?? "a deleted app",
  });
  // Someone else wrote the record meanwhile (a reinstall, another uninstall): theirs stands.
  return ok ? done : (await getInstall(ctx.kv, opts.teamId, opts.appId)).value!;
}

/** A team's installs, for its admins. */
export async function listInstalls(ctx: Ctx, teamId: string, actor: Actor): Promise<AppInstall[]> {
  authorize(actor, "app.uninstall", { team_id: teamId });
  return await listTeamInstalls(ctx.kv, teamId);
}
