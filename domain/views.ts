/**
 * What clients see: the API's shapes of the stored records, in one place. The API answers with
 * them, webhooks and the event feed carry them (a message in an event is the API's Message), and
 * the CLI prints them. Fields are added here, never changed or removed (v1 is frozen).
 */
import type { IncomingWebhook } from "../core/incoming_records.ts";
import type { Channel, Message, OutboxEvent, Token, User } from "../core/types.ts";
import { type Delivery, schemeOf, type Subscription } from "../core/webhook_records.ts";
import { messageTs } from "../core/ids.ts";
import type { AgentThread } from "../kv/apps/agent_threads.ts";
import { renderedText } from "./messages/slack_text.ts";
import type { MessageView } from "./webhooks/event_schemas.ts";

/** The API's Channel: the stored record minus what only the server needs. */
export const channelView = (ch: Channel) => ({
  id: ch.id,
  name: ch.name,
  slug: ch.slug,
  visibility: ch.visibility,
  topic: ch.topic,
  is_general: ch.is_general,
  is_archived: ch.is_archived,
  is_direct: ch.is_direct,
  created_at: ch.created_at,
});

export type { MessageView };

/** The API's Message: its fields, and its body rendered as `text`. */
export const messageView = (m: Message): MessageView => ({
  ...messageFields(m),
  text: renderedText(m.body, m.mention_names),
});

/** A message as its events store it (see storedMessageView), without its rendered `text`. */
export type StoredMessageView = Omit<MessageView, "text"> & {
  mention_names?: Record<string, string>;
};

/** What the API shows of a message but its `text`. */
function messageFields(m: Message): Omit<MessageView, "text"> {
  return {
    id: m.id,
    channel_id: m.channel_id,
    body: m.body,
    type: m.type,
    author: m.author,
    reply_to_id: m.reply_to_id,
    thread_root_id: m.thread_root_id,
    sent_to_channel: m.sent_to_channel,
    reactions: m.reactions,
    created_at: m.created_at,
    edited_at: m.edited_at,
    ts: messageTs(m),
    // A deleted message keeps no blocks: they carried its text.
    blocks: m.deleted_at ? null : m.blocks ?? null,
    ...(m.attachments && !m.deleted_at ? { attachments: m.attachments } : {}),
    poll: m.deleted_at ? null : m.poll ?? null,
    ...(m.metadata && !m.deleted_at ? { metadata: m.metadata } : {}),
    ...(m.stream && !m.deleted_at ? { streaming: true as const } : {}),
  };
}

/** An agent's conversation or thread as its person reads it (GET /apps/{app}/threads/...). */
export const agentThreadView = (t: AgentThread) => ({
  app_id: t.app_id,
  channel_id: t.channel_id,
  thread_ts: t.thread_ts,
  context_channel_id: t.context_channel_id,
  status: t.status,
  loading_messages: t.loading_messages,
  suggested_prompts: t.suggested_prompts,
  updated_at: t.updated_at,
});

/** The API's Subscription: no secret. */
export const subscriptionView = (s: Subscription) => ({
  id: s.id,
  name: s.name,
  url: s.url,
  events: s.events,
  channel_ids: s.channel_ids,
  status: s.status,
  consecutive_failures: s.consecutive_failures,
  last_success_at: s.last_success_at,
  disabled_at: s.disabled_at,
  created_at: s.created_at,
  signature_scheme: schemeOf(s),
});

/** The API's Delivery. */
export const deliveryView = (d: Delivery) => ({
  id: d.id,
  event_type: d.event_type,
  event_id: d.event_id,
  succeeded: d.succeeded,
  response_status: d.response_status,
  error: d.error,
  response_body: d.response_body ?? null,
  attempt: d.attempt,
  next_attempt_at: d.next_attempt_at ?? null,
  created_at: d.created_at,
});

/** A token as listed: what it grants and when it was used, never its hash. */
export const tokenView = (t: Token) => ({
  id: t.id,
  name: t.name,
  kind: t.kind,
  scopes: t.scopes,
  created_at: t.created_at,
  expires_at: t.expires_at,
  revoked_at: t.revoked_at,
  last_used_at: t.last_used_at,
});

/** A person or bot with its profile, as its PATCH answers. */
export const personView = (u: User) => ({
  id: u.id,
  name: u.name,
  type: u.type,
  role: u.role,
  email: u.email ?? null,
  deactivated_at: u.deactivated_at ?? null,
});

/** An incoming webhook as listed: never its secret or hash. */
export const incomingView = (h: IncomingWebhook) => ({
  id: h.id,
  name: h.name,
  channel_id: h.channel_id,
  bot_id: h.bot_id,
  created_at: h.created_at,
  revoked_at: h.revoked_at,
  verify: h.verify?.scheme ?? "none",
});

/** The envelope webhooks deliver, and the event feed lists: `{ id, type, created_at, data }`. */
export const envelopeOf = (event: OutboxEvent) => ({
  id: event.id,
  type: event.type,
  created_at: event.created_at,
  data: withText(event.data),
});

/**
 * A message as its events store it: without `text`, which would double the body past a value's
 * 64 KiB, and with the names `text` is rendered from; envelopeOf renders it again.
 */
export function storedMessageView(m: Message): StoredMessageView {
  const fields = messageFields(m);
  return m.mention_names ? { ...fields, mention_names: m.mention_names } : fields;
}

/**
 * An event's data, a stored message's with its `text` rendered (see storedMessageView), and the
 * fields an older release's event lacks as the API shows them.
 */
function withText(data: unknown): unknown {
  if (typeof data !== "object" || data === null || !("author" in data)) return data;
  const { mention_names, ...view } = data as Partial<StoredMessageView>;
  if (typeof view.body !== "string") return data;
  // Events older releases recorded lack the fields added since: given as the API gives them.
  return {
    ...view,
    ts: messageTs({ id: String(view.id), ts: view.ts }),
    blocks: view.blocks ?? null,
    poll: view.poll ?? null,
    text: renderedText(view.body, mention_names),
  };
}
