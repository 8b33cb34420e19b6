/**
 * Events addressed to one app alone (decisions.md, "App Home" and "Slack's agents"): a person
 * opened its Home or its Messages tab, started or moved an agent's thread, or changed what they
 * look at beside the agent. Each goes to the install's listener that asked for its Slack event,
 * delivered as any other event is (a request URL or Socket Mode), and listed in no feed.
 */
import type { Ctx } from "../context.ts";
import type { AppEventType } from "../../core/types.ts";
import type { BotEvent } from "../../core/app_records.ts";
import type { Subscription, WebhookRoute } from "../../core/webhook_records.ts";
import { retrying } from "../../core/retry.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { addAppEvent } from "../../kv/outbox/outbox.ts";
import type { LiveInstall } from "./live_install.ts";

/** The install's listener that asked for `botEvent`, with its route as read, or null. */
async function listenerFor(ctx: Ctx, live: LiveInstall, botEvent: BotEvent) {
  const ids = live.install.listener_ids ?? [];
  const teamId = live.install.team_id;
  const [subs, routes] = await Promise.all([
    getAll<Subscription>(ctx.kv, ids.map((id) => keys.webhook(id))),
    getAll<WebhookRoute>(ctx.kv, ids.map((id) => keys.teamWebhook(teamId, id))),
  ]);
  const at = subs.findIndex(({ value }) =>
    value?.status === "active" && value.app?.bot_events.includes(botEvent)
  );
  return at < 0 || !routes[at].value ? null : { id: ids[at], route: routes[at] };
}

/**
 * Tells the app `botEvent` happened, as our event `type` with `data`, in `channelId`: one commit,
 * and nothing when the app did not ask for it. Whether it was sent.
 */
export function tellApp(
  ctx: Ctx,
  { live, botEvent, type, channelId, data }: {
    live: LiveInstall;
    botEvent: BotEvent;
    type: AppEventType;
    channelId: string;
    data: Record<string, unknown>;
  },
): Promise<boolean> {
  return retrying(`tell an app ${botEvent}`, async () => {
    const listener = await listenerFor(ctx, live, botEvent);
    if (!listener) return false;
    const { id, route } = listener;
    const op = ctx.kv.atomic().check(route);
    addAppEvent(op, [{ id, version: route.versionstamp!, route: { app: route.value!.app } }], {
      type,
      team_id: live.install.team_id,
      channel_id: channelId,
      data: { app_id: live.app.id, ...data },
    });
    return (await op.commit()).ok || null;
  });
}
