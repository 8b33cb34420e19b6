/**
 * What installing an app into a team does, and uninstalling takes back. An install acts as the
 * admin who approved it, through the same domain functions the screen and the API use, so every
 * rule (and every audit entry) of making a bot, a token and an incoming webhook holds for it.
 */
import type { Ctx } from "../context.ts";
import { isActive } from "../../core/active.ts";
import type { AuditAction, Channel, Scope, Subject, Team, User } from "../../core/types.ts";
import type { App, AppInstall, AuthorizationCode } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso, storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { getApp, getInstall, listAllInstalls, listTeamInstalls } from "../../kv/apps/apps.ts";
import { dropBacklog } from "../../kv/apps/socket_queue.ts";
import { addAudit } from "../../kv/audit.ts";
import { getChannelFor } from "../../kv/channels.ts";
import { getIncomingById, putIncoming } from "../../kv/incoming.ts";
import { keys } from "../../kv/keys.ts";
import { getUserEntry } from "../../kv/people.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { putToken, userTokens } from "../../kv/tokens.ts";
import { getTeam, getUser } from "../../kv/workspace.ts";
import { authorize } from "../policy.ts";
import { type Actor, auditActor, subjectOfPerson } from "../principals.ts";
import { deactivateUser } from "../people/people.ts";
import { mintToken, type NewToken } from "../people/tokens.ts";
import { isTokenLive } from "../people/token_format.ts";
import { commitMemberAdded } from "../channels/members.ts";
import { hookAudit, hookUrl, newHook } from "../webhooks/incoming.ts";
import { checkName } from "../text.ts";
import { commandsOf, planCommands, planListeners } from "./listeners.ts";

export interface Installed {
  install: AppInstall;
  team: Team;
  token: NewToken;
  incoming: { channel_id: string; url: string; id: string } | null;
}

/** What an install is given: an admin's approval (the code it made) or the operator's word. */
export interface Approval {
  app: App;
  teamId: string;
  scopes: Scope[];
  channelId: string | null;
  /** The admin who approved; the install acts as them. Null: the operator at the CLI. */
  approvedBy: string | null;
  /**
   * Spends the code the approval made in the install's commit, with what it issued: reads it as
   * it is now and adds its check and write to `plan`, or throws when it can't be spent.
   */
  spend?: (plan: Plan, issued: NonNullable<AuthorizationCode["issued"]>) => Promise<void>;
}

/** The approving admin, as the install's actor: still an admin of the team, and active. */
async function installer(ctx: Ctx, approval: Approval): Promise<Subject | null> {
  if (approval.approvedBy === null) return null;
  const user = await getUser(ctx.kv, approval.approvedBy);
  if (!user || !isActive(user)) throw notFound("The admin who approved is gone.");
  const actor = subjectOfPerson(user);
  authorize(actor, "app.install", { team_id: approval.teamId });
  return actor;
}

/** An install's commit as it is being built, and what the commit hands back. */
interface Draft {
  ctx: Ctx;
  plan: Plan;
  actor: Actor;
  team: Team;
}

const audited = (d: Draft, action: AuditAction, target: { id: string; name: string }) =>
  addAudit(d.plan, {
    team_id: d.team.id,
    action,
    ...auditActor(d.actor),
    target_id: target.id,
    target_name: target.name,
  });

/**
 * The app's bot in the team: the one an earlier install made (active again, its live tokens
 * revoked, so that only the token this install issues is live), or a new one.
 */
async function planBot(d: Draft, app: App, earlier: AppInstall | null): Promise<User> {
  const entry = earlier ? await getUserEntry(d.ctx.kv, earlier.bot_user_id) : null;
  if (!entry?.value) {
    const bot: User = {
      id: newId(),
      team_id: d.team.id,
      name: checkName("name", app.bot_name ?? app.name),
      type: "bot",
      role: null,
      created_at: nowIso(),
    };
    d.plan.check({ key: keys.user(bot.id), versionstamp: null })
      .set(keys.user(bot.id), bot).set(keys.teamUser(d.team.id, bot.id), null);
    return bot;
  }
  const bot: User = { ...entry.value, deactivated_at: null };
  d.plan.check(entry);
  if (!isActive(entry.value)) {
    d.plan.set(keys.user(bot.id), bot);
    audited(d, "user.reactivated", bot);
  }
  const { tokens, version } = await userTokens(d.ctx.kv, bot.id);
  d.plan.check(version);
  const now = nowIso();
  for (const t of tokens.filter((t) => isTokenLive(t, Date.now()))) {
    putToken(d.plan, { ...t, revoked_at: now });
    audited(d, "token.revoked", { id: t.id, name: `${t.user_name}'s token “${t.name}”` });
  }
  return bot;
}

/** Revokes the incoming webhook an earlier install made; revoking changes nothing else on it. */
async function planHookRevoked(d: Draft, hookId: string | null) {
  const entry = hookId ? await getIncomingById(d.ctx.kv, hookId) : null;
  if (!entry || entry.value.revoked_at) return;
  putIncoming(d.plan, { ...entry.value, revoked_at: nowIso() });
  audited(d, "incoming_webhook.revoked", entry.value);
}

/**
 * The channel the app's incoming webhook posts into, checked as the screen checks a new hook's
 * (an admin who sees it, not archived), and whether the bot is in it already.
 */
async function hookChannel(d: Draft, channelId: string, bot: User) {
  const stored = storedId(channelId);
  const { channel, member, other } = stored
    ? await getChannelFor(d.ctx.kv, stored, bot.id, d.actor?.user_id)
    : { channel: null, member: null, other: null };
  if (!channel?.value || channel.value.team_id !== d.team.id) {
    throw notFound("No such channel.");
  }
  authorize(d.actor, "incoming.target", {
    channel: channel.value,
    isMember: other!.versionstamp !== null,
  });
  if (channel.value.is_archived) throw invalid("channel", "The channel is archived.");
  const access = {
    entry: channel as Deno.KvEntry<Channel>,
    channel: channel.value,
    isMember: false,
  };
  return { access, joined: member!.versionstamp !== null };
}

/**
 * Installs an app into a team, as an approval says, in one commit: the app's bot (made, or the
 * earlier install's, active again), a bot token with exactly the approved scopes (the earlier ones
 * revoked), an incoming webhook into the chosen channel where the app asked for one (the bot
 * joining it), the install's record, and the code spent. It lands whole or not at all; a commit
 * that lost to a concurrent change (another install, an uninstall, the code presented twice) is
 * read again and made anew, and null is never returned.
 */
export function installApp(ctx: Ctx, approval: Approval): Promise<Installed> {
  return retrying("install app", () => installOnce(ctx, approval));
}

async function installOnce(ctx: Ctx, approval: Approval): Promise<Installed | null> {
  const { app } = approval;
  const actor = await installer(ctx, approval);
  const team = await getTeam(ctx.kv, approval.teamId);
  if (!team) throw notFound("No such team.");
  const d: Draft = { ctx, plan: ctx.kv.atomic(), actor, team };
  const entry = await getInstall(ctx.kv, team.id, app.id);
  d.plan.check(entry);
  const earlier = entry.value;
  const bot = await planBot(d, app, earlier);
  await planHookRevoked(d, earlier?.incoming_webhook_id ?? null);
  const token = mintToken(bot, approval.scopes, app.name, null);
  putToken(d.plan, token.token);
  audited(d, "token.created", { id: token.token.id, name: `${bot.name}'s token “${app.name}”` });
  const target = approval.channelId ? await hookChannel(d, approval.channelId, bot) : null;
  const made = target ? newHook({ channel: target.access.channel, bot, name: app.name }) : null;
  if (made) {
    putIncoming(d.plan, made.hook);
    addAudit(d.plan, hookAudit(made.hook, { action: "incoming_webhook.created", actor }));
  }
  const listeners = await planListeners(ctx, d.plan, {
    app,
    bot,
    earlier: earlier?.listener_ids ?? [],
  });
  const commands = commandsOf(app, approval.scopes);
  await planCommands(ctx, d.plan, {
    app,
    teamId: team.id,
    names: commands,
    earlier: earlier?.commands ?? [],
  });
  const install: AppInstall = {
    app_id: app.id,
    team_id: team.id,
    bot_user_id: bot.id,
    token_id: token.token.id,
    incoming_webhook_id: made?.hook.id ?? null,
    scopes: approval.scopes,
    installed_at: nowIso(),
    installed_by: approval.approvedBy ?? "",
    uninstalled_at: null,
    listener_ids: listeners,
    commands,
  };
  d.plan.set(keys.install(team.id, app.id), install);
  audited(d, "app.installed", app);
  await approval.spend?.(d.plan, {
    token_id: token.token.id,
    incoming_webhook_id: made?.hook.id ?? null,
  });
  const landed = target && !target.joined
    ? await commitMemberAdded(ctx, target.access, bot, d.plan)
    : (await d.plan.commit()).ok;
  if (!landed) return null;
  const incoming = made
    ? { id: made.hook.id, channel_id: made.hook.channel_id, url: hookUrl(ctx, made.secret) }
    : null;
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
  if (bot && isActive(bot)) await deactivateUser(ctx, opts.actor, bot.id);
  const app = (await getApp(ctx.kv, opts.appId)).value;
  const done: AppInstall = {
    ...entry.value,
    uninstalled_at: nowIso(),
    listener_ids: [],
    commands: [],
  };
  // Its commands and its listeners go with it, in the same commit as its record.
  const plan = ctx.kv.atomic().check(entry).set(entry.key, done);
  if (app) {
    const gone = { ...app, event_subscriptions: null };
    await planListeners(ctx, plan, {
      app: gone,
      bot: bot!,
      earlier: entry.value.listener_ids ?? [],
    });
    await planCommands(ctx, plan, {
      app,
      teamId: opts.teamId,
      names: [],
      earlier: entry.value.commands ?? [],
    });
  }
  addAudit(plan, {
    team_id: opts.teamId,
    action: "app.uninstalled",
    ...auditActor(opts.actor),
    target_id: opts.appId,
    target_name: app?.name ?? "a deleted app",
  });
  const ok = (await plan.commit()).ok;
  // Someone else wrote the record meanwhile (a reinstall, another uninstall): theirs stands.
  if (!ok) return (await getInstall(ctx.kv, opts.teamId, opts.appId)).value!;
  // What waited for its Socket Mode connections goes with it; with no install left anywhere,
  // so do its connections, on every instance.
  const left = (await listAllInstalls(ctx.kv, opts.appId)).filter((i) => !i.uninstalled_at);
  await dropBacklog(ctx.kv, {
    appId: opts.appId,
    listenerIds: entry.value.listener_ids ?? [],
    closeLinks: left.length === 0,
  });
  return done;
}

/** A team's installs, for its admins. */
export async function listInstalls(ctx: Ctx, teamId: string, actor: Actor): Promise<AppInstall[]> {
  authorize(actor, "app.uninstall", { team_id: teamId });
  return await listTeamInstalls(ctx.kv, teamId);
}
