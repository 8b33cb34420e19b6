/**
 * Slack's message metadata events (decisions.md, "Slack's agents": "Message metadata"), for apps
 * whose manifest lists `metadata_subscriptions`: `message_metadata_posted` when a message carrying
 * metadata of a kind they asked for is posted, `_updated` when it is edited, `_deleted` when it is
 * deleted; the kinds are matched when the event is made (domain/webhooks/audience.ts).
 */
import type { Message, OutboxEvent } from "../../core/types.ts";
import { keys } from "../../kv/keys.ts";
import type { StoredMessageView } from "../views.ts";
import type { Store } from "../../kv/store/store.ts";
import { eventCarryingBefore } from "../../kv/stream/event_feed.ts";
import { listTeamInstalls } from "../../kv/apps/apps.ts";
import { tsOfIso } from "../../core/ids.ts";

const TYPES = new Map([
  ["message.created", "message_metadata_posted"],
  ["message.updated", "message_metadata_updated"],
  ["message.deleted", "message_metadata_deleted"],
]);

/** The app whose bot is `botId` in the team, as Slack names the poster of metadata. */
async function appOf(kv: Store, { teamId, botId }: { teamId: string; botId: string }) {
  const installs = await listTeamInstalls(kv, teamId);
  return installs.find((i) => i.bot_user_id === botId)?.app_id ?? null;
}

/** The metadata the message carried before event `e`, from the last event that carried it. */
async function previousMetadata(kv: Store, e: OutboxEvent, messageId: string) {
  const before = await eventCarryingBefore(kv, { messageId, beforeId: e.id });
  return (before?.data as StoredMessageView | undefined)?.metadata ?? null;
}

/** The metadata event a message event is, for a metadata listener. */
export async function metadataEventOf(kv: Store, e: OutboxEvent) {
  const m = e.data as StoredMessageView;
  const bot = m.author.type === "bot";
  const ts = tsOfIso(e.created_at);
  const common = {
    type: TYPES.get(e.type) ?? "message_metadata_posted",
    app_id: bot ? await appOf(kv, { teamId: e.team_id, botId: m.author.id }) : null,
    ...(bot ? { bot_id: m.author.id } : {}),
    user_id: m.author.id,
    team_id: e.team_id,
    channel_id: e.channel_id,
    event_ts: ts,
  };
  if (e.type === "message.created") {
    return { ...common, metadata: m.metadata ?? null, message_ts: m.ts };
  }
  if (e.type === "message.deleted") {
    // Its events were erased with its text; the message keeps its metadata, unshown.
    const gone = (await kv.get<Message>(keys.message(m.id))).value;
    return { ...common, previous_metadata: gone?.metadata ?? null, deleted_ts: m.ts };
  }
  const previous = await previousMetadata(kv, e, m.id);
  return { ...common, metadata: m.metadata ?? null, previous_metadata: previous, message_ts: m.ts };
}
