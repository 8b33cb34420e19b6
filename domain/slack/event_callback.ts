/**
 * Events to apps in Slack's Events API shape (decisions.md, "Events to apps"): the `event_callback`
 * envelope with the Slack event each of ours is (`message` with its subtypes, `app_mention`,
 * `reaction_added`, `member_joined_channel`, `app_home_opened`). The same body goes to a request URL (signed by
 * delivery/slack_events.ts) and, as an `events_api` envelope's payload, to a Socket Mode app.
 */
import { CacheKind } from "../../core/memory.ts";
import type { Channel, Message, OutboxEvent } from "../../core/types.ts";
import type { AppListener } from "../../core/webhook_records.ts";
import { keys } from "../../kv/keys.ts";
import { eventCarryingBefore } from "../../kv/stream/event_feed.ts";
import type { Store } from "../../kv/store/store.ts";
import { kindOf } from "../../core/channel_kind.ts";
import { slackEmojiName } from "../messages/emoji_names.ts";
import { slackMessage, slackMessageOf } from "./shapes.ts";
import { metadataEventOf } from "./metadata_events.ts";
import type { StoredMessageView } from "../views.ts";
import { messageTs, tsOfIso } from "../../core/ids.ts";

/** Channels' kinds never change: remembered once per process. */
const KINDS = new CacheKind<Channel["visibility"] | "direct">("channel kinds", 50_000);

const CHANNEL_TYPES = { public: "channel", private: "group", direct: "im" } as const;

async function channelType(kv: Store, channelId: string): Promise<string> {
  const known = kv.cache(KINDS);
  let kind = known.get(channelId);
  if (!kind) {
    const channel = (await kv.get<Channel>(keys.channel(channelId))).value;
    kind = channel ? kindOf(channel) : "public";
    known.set(channelId, kind);
  }
  return CHANNEL_TYPES[kind as keyof typeof CHANNEL_TYPES] ?? "channel";
}

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
/** An event's own `ts`, as Slack gives `event_ts`: when it happened. */
const eventTs = (e: OutboxEvent) => tsOfIso(e.created_at);

/**
 * A message event's message, as Slack's `message` event gives it: a thread reply's names its
 * thread (`thread_ts`, the root's `ts`) and the root's author (`parent_user_id`), which apps
 * answer in the thread by.
 */
async function messageOf(
  kv: Store,
  { view, e, channelType }: { view: StoredMessageView; e: OutboxEvent; channelType: string },
): Promise<Record<string, unknown>> {
  const root = view.thread_root_id
    ? (await kv.get<Message>(keys.message(view.thread_root_id))).value
    : null;
  const m = slackMessageOf(view, { teamId: e.team_id, threadTs: root && messageTs(root) });
  return {
    ...m,
    ...(root ? { parent_user_id: root.author.id } : {}),
    channel: view.channel_id,
    channel_type: channelType,
    event_ts: m.ts,
  };
}

/** The Slack event one of ours is, for `listener`. */
async function slackEventOf(kv: Store, e: OutboxEvent, listener: EventListener) {
  if (listener.metadata) return await metadataEventOf(kv, e);
  const type = await channelType(kv, e.channel_id);
  const ts = eventTs(e);
  switch (e.type) {
    case "message.created": {
      const message = await messageOf(kv, {
        view: e.data as StoredMessageView,
        e,
        channelType: type,
      });
      if (!listener.mention_of) return message;
      const { subtype: _, channel_type: __, ...rest } = message;
      return { ...rest, type: "app_mention" };
    }
    case "message.updated":
      return {
        type: "message",
        subtype: "message_changed",
        hidden: true,
        channel: e.channel_id,
        channel_type: type,
        ts,
        event_ts: ts,
        message: await messageOf(kv, { view: e.data as StoredMessageView, e, channelType: type }),
        previous_message: await previousMessage(kv, e),
      };
    case "message.deleted":
      return {
        type: "message",
        subtype: "message_deleted",
        hidden: true,
        channel: e.channel_id,
        channel_type: type,
        ts,
        event_ts: ts,
        deleted_ts: (e.data as StoredMessageView).ts,
        previous_message: await previousMessage(kv, e),
      };
    case "reaction.added":
      return await reactionOf(kv, e, ts);
    case "app.home_opened":
    case "assistant.thread_started":
    case "assistant.thread_context_changed":
    case "app.context_changed":
      return appEventOf(e, ts);
    default: {
      const data = e.data as { user: { id: string } };
      return {
        type: "member_joined_channel",
        user: data.user.id,
        channel: e.channel_id,
        channel_type: type === "channel" ? "C" : "G",
        team: e.team_id,
        event_ts: ts,
      };
    }
  }
}

/** An event addressed to the app alone (domain/apps/app_events.ts), as Slack's. */
function appEventOf(e: OutboxEvent, ts: string) {
  if (e.type === "app.home_opened") {
    const data = e.data as { user_id: string; tab: string; view: unknown };
    return {
      type: "app_home_opened",
      user: data.user_id,
      channel: e.channel_id,
      tab: data.tab,
      ...(data.view ? { view: data.view } : {}),
      event_ts: ts,
    };
  }
  if (e.type !== "app.context_changed") return assistantThreadEvent(e, ts);
  const data = e.data as { user_id: string; context_channel_id: string | null };
  return {
    type: "app_context_changed",
    user: data.user_id,
    channel: e.channel_id,
    context: data.context_channel_id
      ? {
        entities: [
          { type: "slack#/types/channel_id", value: data.context_channel_id, team_id: e.team_id },
        ],
      }
      : {},
    event_ts: ts,
  };
}

/** `assistant_thread_started` or `_context_changed`: the thread, and what its person looks at. */
function assistantThreadEvent(e: OutboxEvent, ts: string) {
  const data = e.data as { user_id: string; thread_ts: string; context_channel_id: string | null };
  return {
    type: e.type === "assistant.thread_started"
      ? "assistant_thread_started"
      : "assistant_thread_context_changed",
    assistant_thread: {
      user_id: data.user_id,
      context: data.context_channel_id
        ? { channel_id: data.context_channel_id, team_id: e.team_id, enterprise_id: null }
        : {},
      channel_id: e.channel_id,
      thread_ts: data.thread_ts,
    },
    event_ts: ts,
  };
}

/**
 * The message as it was before an edit or a delete, as Slack's `previous_message` gives it: from
 * the last event that carried it (a deleted message's text is erased there too). Apps read it
 * unguarded, so one whose events expired still has one, without text.
 */
async function previousMessage(kv: Store, e: OutboxEvent) {
  const now = e.data as StoredMessageView;
  const before = await eventCarryingBefore(kv, { messageId: now.id, beforeId: e.id });
  const was = (before?.data as StoredMessageView | undefined) ?? { ...now, body: "", blocks: null };
  return slackMessageOf(was, { teamId: e.team_id, threadTs: null });
}

/** `reaction_added`: the message it is on named by its `ts`, as Slack names items. */
async function reactionOf(kv: Store, e: OutboxEvent, ts: string) {
  const data = e.data as { message_id: string; emoji: string; user: { id: string } };
  const message = (await kv.get<Message>(keys.message(data.message_id))).value;
  return {
    type: "reaction_added",
    user: data.user.id,
    reaction: slackEmojiName(data.emoji),
    item: {
      type: "message",
      channel: e.channel_id,
      ts: message ? slackMessage(message).ts : "",
    },
    item_user: message?.author.id ?? "",
    event_ts: ts,
  };
}

/** Who an event goes to: an app's listener, as much of it as its envelope names. */
export type EventListener = Pick<AppListener, "app_id" | "bot_id" | "mention_of"> & {
  /** A metadata listener's: its kinds, or just that it is one. */
  metadata?: unknown;
};

/** The body an app's listener gets for an event: Slack's `event_callback` envelope. */
export async function slackEnvelope(
  kv: Store,
  { event, listener }: { event: OutboxEvent; listener: EventListener },
): Promise<string> {
  return JSON.stringify(await eventCallbackOf(kv, { event, listener }));
}

/** Slack's `event_callback` envelope, as a value. */
export async function eventCallbackOf(
  kv: Store,
  { event, listener }: { event: OutboxEvent; listener: EventListener },
): Promise<Record<string, unknown>> {
  return {
    token: "",
    team_id: event.team_id,
    api_app_id: listener.app_id,
    event: await slackEventOf(kv, event, listener),
    type: "event_callback",
    // Slack gives a mention an event of its own besides the message: two ids, each kept on retry.
    event_id: listener.mention_of
      ? `${event.id}-mention`
      : listener.metadata
      ? `${event.id}-metadata`
      : event.id,
    event_time: seconds(event.created_at),
    authorizations: [{
      enterprise_id: null,
      team_id: event.team_id,
      user_id: listener.bot_id,
      is_bot: true,
      is_enterprise_install: false,
    }],
    is_ext_shared_channel: false,
  };
}
