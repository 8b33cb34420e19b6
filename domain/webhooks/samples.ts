/**
 * Sample events for a test send (`POST /webhooks/{id}/test` with `event_type`, the screen's "Send
 * test"): the envelope and payload a real event of that type has, with made-up ids and text that
 * says it is a sample, so a receiver's handler for that type can be tried before any real one.
 */
import type { EventType, Message } from "../../core/types.ts";
import { newId, nowIso, tsOfMs } from "../../core/ids.ts";
import type { Subscription } from "../../core/webhook_records.ts";
import { messageView } from "../views.ts";

/** What a test may send: a `ping`, or a sample of any event type. */
export type TestType = EventType | "ping";

const person = () => ({ id: newId(), name: "Sample Person", type: "human" as const });

function sampleMessage(channelId: string, teamId: string): Message {
  const now = Date.now();
  const at = new Date(now).toISOString();
  return {
    id: newId(now),
    channel_id: channelId,
    team_id: teamId,
    body: "This is a sample message, sent by a test: no channel holds it.",
    type: "standard",
    author: person(),
    reply_to_id: null,
    thread_root_id: null,
    sent_to_channel: false,
    reactions: [],
    created_at: at,
    edited_at: null,
    deleted_at: null,
    client_uuid: null,
    timeline_pos: null,
    thread_pos: null,
    ts: tsOfMs(now),
    blocks: null,
    poll: null,
  };
}

/** The `data` of a sample event of `type`, for the subscription `sub`. */
export function sampleData(type: TestType, sub: Subscription): unknown {
  const channelId = sub.channel_ids?.[0] ?? newId();
  const message = sampleMessage(channelId, sub.team_id);
  const view = messageView(message);
  switch (type) {
    case "ping":
      return { subscription_id: sub.id };
    case "message.created":
      return view;
    case "message.updated":
      return { ...view, body: `${view.body} (edited)`, edited_at: nowIso() };
    case "message.deleted":
      return { ...view, body: "", edited_at: null };
    case "reaction.added":
      return { channel_id: channelId, message_id: message.id, emoji: "👍", user: person() };
    case "channel.member_added":
      return { channel_id: channelId, user: person() };
    case "poll.vote_added":
    case "poll.vote_removed":
      return { channel_id: channelId, message_id: message.id, option_id: "1", user: person() };
    case "poll.closed":
      return {
        ...view,
        type: "poll",
        body: "A sample poll?",
        poll: {
          options: [{ id: "1", text: "Yes", count: 2 }, { id: "2", text: "No", count: 1 }],
          multiple: false,
          closed_at: nowIso(),
        },
      };
  }
}
