/**
 * What an install of an app that listens brings into its team (decisions.md, "Apps that
 * listen"): subscriptions of the app's bot for its Events API request URL (the events it
 * declared, from the channels its bot is in; its mentions apart), and, with the `commands`
 * scope, its slash commands under names unique in the team. Made in the install's commit, kept
 * in step when the app changes, taken back when it is uninstalled.
 */
import type { Ctx } from "../context.ts";
import type { EventType, User } from "../../core/types.ts";
import type { App, AppInstall, BotEvent } from "../../core/app_records.ts";
import type { AppListener, ChannelKind, Subscription } from "../../core/webhook_records.ts";
import { ApiError } from "../../core/errors.ts";
import { newId, nowIso } from "../../core/ids.ts";
import { errorFields, log } from "../../core/log.ts";
import { retrying } from "../../core/retry.ts";
import { own } from "../../core/tables.ts";
import { getInstall, listAllInstalls } from "../../kv/apps/apps.ts";
import { putCommand, removeCommand, teamCommands, touchCommands } from "../../kv/apps/commands.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { dropRoute, putRoute } from "../../kv/routes.ts";
import { keys } from "../../kv/keys.ts";
import { getAll } from "../../kv/store/commit.ts";
import { getUser } from "../../kv/workspace.ts";

const MESSAGE_KINDS: Partial<Record<BotEvent, ChannelKind>> = {
  "message.channels": "public",
  "message.groups": "private",
  "message.im": "direct",
};

/**
 * Our events that make up a Slack bot event. `app_home_opened` is none of them: it is addressed
 * to the listener itself when a person opens the app's Home (domain/apps/home.ts).
 */
const EVENTS_OF: Record<BotEvent, EventType[]> = {
  "message.channels": ["message.created", "message.updated", "message.deleted"],
  "message.groups": ["message.created", "message.updated", "message.deleted"],
  "message.im": ["message.created", "message.updated", "message.deleted"],
  "app_mention": ["message.created"],
  "reaction_added": ["reaction.added"],
  "member_joined_channel": ["channel.member_added"],
  "app_home_opened": [],
  "assistant_thread_started": [],
  "assistant_thread_context_changed": [],
  "app_context_changed": [],
};

/**
 * The listeners an app's install needs: one for its events, one for its bot's mentions (Slack
 * sends a mention as an `app_mention` besides the message itself), each only where declared.
 */
function listenersOf(app: App, bot: User): AppListener[] {
  const declared = app.event_subscriptions?.bot_events ?? [];
  const general = declared.filter((e) => e !== "app_mention");
  const out: AppListener[] = [];
  const base = {
    app_id: app.id,
    bot_id: bot.id,
    ...(app.socket_mode_enabled ? { socket: true } : {}),
  };
  if (general.length > 0) {
    out.push({
      ...base,
      bot_events: general,
      message_kinds: general.flatMap((e) => own(MESSAGE_KINDS, e) ?? []),
      mention_of: null,
    });
  }
  // Slack sends metadata events to the apps that list its kinds, with no bot event named.
  if (app.metadata_subscriptions?.length) {
    out.push({
      ...base,
      bot_events: [],
      message_kinds: ["public", "private", "direct"],
      mention_of: null,
      metadata: app.metadata_subscriptions,
    });
  }
  if (declared.includes("app_mention")) {
    out.push({
      ...base,
      bot_events: ["app_mention"],
      message_kinds: ["public", "private", "direct"],
      mention_of: { id: bot.id, name: bot.name },
    });
  }
  return out;
}

/** A listener as the subscription the delivery engine delivers through. */
function subscriptionOf(app: App, bot: User, listener: AppListener, id = newId()): Subscription {
  return {
    id,
    team_id: bot.team_id,
    name: `${app.name}: ${listener.metadata ? "message metadata" : listener.bot_events.join(", ")}`,
    // A Socket Mode app's events are queued for its connections: no URL is called.
    url: app.event_subscriptions!.request_url ?? "",
    events: listener.metadata
      ? ["message.created", "message.updated", "message.deleted"]
      : [...new Set(listener.bot_events.flatMap((e) => EVENTS_OF[e as BotEvent]))],
    channel_ids: null,
    status: "active",
    consecutive_failures: 0,
    last_success_at: null,
    disabled_at: null,
    created_at: nowIso(),
    created_by: bot.id,
    owner_type: "bot",
    secret: app.signing_secret!,
    previous_secret: null,
    previous_secret_expires_at: null,
    app: listener,
  };
}

/**
 * Adds to `plan` the install's listeners as the app declares them now, replacing `earlier` (the
 * ids an earlier install or version made). Returns their ids.
 */
export async function planListeners(
  ctx: Ctx,
  plan: Plan,
  { app, bot, earlier }: { app: App; bot: User; earlier: string[] },
): Promise<string[]> {
  const old = (await getAll<Subscription>(ctx.kv, earlier.map((id) => keys.webhook(id))))
    .flatMap((e) => e.value ? [e.value] : []);
  for (const s of old) {
    plan.delete(keys.webhook(s.id));
    dropRoute(plan, s);
  }
  if (!app.event_subscriptions || !app.signing_secret) return [];
  return listenersOf(app, bot).map((listener) => {
    const sub = subscriptionOf(app, bot, listener);
    plan.check({ key: keys.webhook(sub.id), versionstamp: null }).set(keys.webhook(sub.id), sub);
    putRoute(plan, sub);
    return sub.id;
  });
}

/** The commands an install brings: the app's, when it was granted `commands`. */
export const commandsOf = (app: App, scopes: string[]) =>
  scopes.includes("commands") ? (app.slash_commands ?? []).map((c) => c.command) : [];

/**
 * Adds to `plan` the team's names for the app's commands, dropping the names of `earlier` it no
 * longer has; a name another app of the team holds refuses the install (422), naming both. The
 * commit checks the team's commands as read (one version for all of them).
 */
export async function planCommands(
  ctx: Ctx,
  plan: Plan,
  { app, teamId, names, earlier }: { app: App; teamId: string; names: string[]; earlier: string[] },
) {
  const { version, commands } = await teamCommands(ctx.kv, teamId);
  const taken = commands.find((c) => names.includes(c.command) && c.app_id !== app.id);
  if (taken) {
    const other = (await ctx.kv.get<App>(keys.app(taken.app_id))).value?.name ?? "another app";
    throw new ApiError(
      422,
      `The command ${taken.command} is taken in this team by ${other}; ${app.name} can't have it ` +
        `too. Uninstall ${other} from the team first (deno task admin app:uninstall --team ` +
        `${teamId} --app ${taken.app_id}), or give ${app.name} another command in its manifest ` +
        `(deno task admin app:update --id ${app.id} --manifest <file>).`,
      { command: [`${taken.command} is taken by ${other}`] },
    );
  }
  plan.check(version);
  touchCommands(plan, teamId);
  for (const name of earlier.filter((n) => !names.includes(n))) removeCommand(plan, teamId, name);
  for (const name of names) putCommand(plan, teamId, { command: name, app_id: app.id });
}

/**
 * Brings every live install of `app` in step with it (after `app:update` or a new signing
 * secret): its listeners and its commands, one commit per install. An install whose commit fails
 * (a command taken in its team since) is logged and left as it was.
 */
export async function syncInstalls(ctx: Ctx, app: App): Promise<void> {
  for (const install of await listAllInstalls(ctx.kv, app.id)) {
    if (install.uninstalled_at) continue;
    await retrying("bring an install in step with its app", async () => {
      const entry = await getInstall(ctx.kv, install.team_id, app.id);
      const bot = await getUser(ctx.kv, install.bot_user_id);
      if (!entry.value || entry.value.uninstalled_at || !bot) return true;
      const plan = ctx.kv.atomic().check(entry);
      const listeners = await planListeners(ctx, plan, {
        app,
        bot,
        earlier: entry.value.listener_ids ?? [],
      });
      const names = commandsOf(app, entry.value.scopes);
      await planCommands(ctx, plan, {
        app,
        teamId: install.team_id,
        names,
        earlier: entry.value.commands ?? [],
      });
      const next: AppInstall = { ...entry.value, listener_ids: listeners, commands: names };
      plan.set(entry.key, next);
      return (await plan.commit()).ok || null;
    }).catch((e) =>
      log.warn("apps: an install could not follow its app's change", {
        app_id: app.id,
        team_id: install.team_id,
        ...errorFields(e),
      })
    );
  }
}
