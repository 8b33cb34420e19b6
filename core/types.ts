/** Plain records as they are stored. What clients see is shaped from these in domain/views.ts. */

import type { MessageStream } from "./stream_records.ts";

export const ROLES = ["member", "admin", "owner"] as const;
export type Role = typeof ROLES[number];
export type UserType = "human" | "bot";

export interface Team {
  id: string;
  name: string;
  general_channel_id: string;
  created_at: string;
}

export interface User {
  id: string;
  team_id: string;
  name: string;
  type: UserType;
  /** null for bots. */
  role: Role | null;
  created_at: string;
  /** When it was deactivated (it can't act or be given tokens); absent or null while active. */
  deactivated_at?: string | null;
  /**
   * When its sessions and sign-in links last ended (its latest deactivation): those made at or
   * before it stay dead after a reactivation. Absent for users never deactivated.
   */
  signed_out_at?: string | null;
  /** The team's "Integrations" bot (domain/webhooks/trouble.ts): in no channel, never a token. */
  system?: boolean;
  /** Lower-cased, unique in its team (users.lookupByEmail); absent or null when none was given. */
  email?: string | null;
}

/** One of Slack's message attachments as stored: checked when written (domain/messages/attachments.ts). */
export type Attachment = Record<string, unknown>;

/** A Block Kit block as stored: checked when written (domain/messages/blocks.ts). */
export type Block = { type: string; block_id?: string } & Record<string, unknown>;

/** The API's Member shape, also embedded in messages and event payloads. */
export interface MemberRef {
  id: string;
  name: string;
  type: UserType;
}

export const SCOPES = [
  "channels:read",
  "channels:write",
  "messages:read",
  "messages:write",
  "reactions:write",
  "members:read",
  "members:write",
  "webhooks:read",
  "webhooks:write",
  "commands",
  "users:read.email",
] as const;
export type Scope = typeof SCOPES[number];

/** Who a request acts as: the token's user, with what auth needs copied onto the token. */
export interface Subject {
  user_id: string;
  team_id: string;
  name: string;
  type: UserType;
  role: Role | null;
  token_id: string;
  /** The SHA-256 of the token's value (its key in the store); absent for a person on the screen. */
  token_hash?: string;
  scopes: Scope[];
}

export interface Token {
  id: string;
  name: string;
  kind: "bot" | "personal";
  /** SHA-256 of the token value, hex. The value itself is never stored. */
  hash: string;
  user_id: string;
  team_id: string;
  /** Copied from the user so auth costs one read; a role change rewrites it (domain/people/people.ts). */
  user_name: string;
  user_type: UserType;
  role: Role | null;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface Channel {
  id: string;
  team_id: string;
  name: string;
  slug: string;
  visibility: "public" | "private";
  topic: string | null;
  /** What the channel is for (Slack's purpose); absent on channels made before it existed. */
  purpose?: string | null;
  is_general: boolean;
  is_archived: boolean;
  is_direct: boolean;
  created_by: string | null;
  created_at: string;
}

export type MessageType =
  | "standard"
  | "member_joined"
  | "member_left"
  | "poll"
  | "assistant_thread";

export interface ReactionSummary {
  emoji: string;
  count: number;
}

/** One answer of a poll, and how many voted for it. */
export interface PollOption {
  /** "1" to "10", in the order given. */
  id: string;
  text: string;
  count: number;
}

/** The question is the message's body; the counts live here, as reactions' do on Message. */
export interface Poll {
  options: PollOption[];
  /** Whether a person may vote for several options; without, a vote moves their earlier one. */
  multiple: boolean;
  closed_at: string | null;
}

export interface Message {
  id: string;
  channel_id: string;
  team_id: string;
  body: string;
  type: MessageType;
  author: MemberRef;
  reply_to_id: string | null;
  thread_root_id: string | null;
  sent_to_channel: boolean;
  reactions: ReactionSummary[];
  created_at: string;
  edited_at: string | null;
  deleted_at: string | null;
  client_uuid: string | null;
  /**
   * Slack-style `"<seconds>.<6 digits>"`, unique in the channel and increasing (kv/store/appender.ts);
   * absent on messages stored before 0.29 (their view derives one from the id).
   */
  ts?: string;
  /** A thread reply's root's `ts`, for Slack's `thread_ts` (stored from 0.29). */
  thread_ts?: string | null;
  /** Block Kit blocks, checked by domain/messages/blocks.ts; absent or null without. */
  blocks?: Block[] | null;
  /** Slack's attachments, checked by domain/messages/attachments.ts; absent or null without. */
  attachments?: Attachment[] | null;
  /** A poll's options and counts (type `poll`); absent or null otherwise and on a tombstone. */
  poll?: Poll | null;
  /**
   * The names of the people and public channels its body mentions (`<@id>`, `<#id>`), by id, as
   * they were when it was written or last edited: what its rendered `text` shows. Absent on
   * messages with none, and on those written before 0.32.0.
   */
  mention_names?: Record<string, string>;
  /** While an agent streams it: what it said so far (domain/messages/streams.ts). */
  stream?: MessageStream;
  /** An app's metadata (`{ event_type, event_payload }`); absent when none. */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Where the copies of this message live, so a change rewrites every one of them. */
  timeline_pos: number | null;
  thread_pos: number | null;
}

export const EVENT_TYPES = [
  "message.created",
  "message.updated",
  "message.deleted",
  "reaction.added",
  "channel.member_added",
  "poll.vote_added",
  "poll.vote_removed",
  "poll.closed",
] as const;
export type EventType = typeof EVENT_TYPES[number];

/**
 * What a delivery can carry: the events, the `ping` a test sends (nobody subscribes to it), and
 * what goes to one app's listener only (a person opened its Home), never listed in a feed.
 */
export type DeliveredType = EventType | "ping" | AppEventType;

/** What goes to one app's listener only, never in a feed: its Home opened, an agent's thread. */
export const APP_EVENT_TYPES = [
  "app.home_opened",
  "assistant.thread_started",
  "assistant.thread_context_changed",
  "app.context_changed",
] as const;
export type AppEventType = typeof APP_EVENT_TYPES[number];

/** One outbox entry: written in the same commit as the change it describes. */
export interface OutboxEvent {
  id: string;
  type: DeliveredType;
  team_id: string;
  channel_id: string;
  created_at: string;
  data: unknown;
  /**
   * Subscriptions that matched when the change committed, as releases before 0.32.0 wrote it (and
   * none read it). No longer written: at 38 bytes a subscription it took a row past SQLite's
   * in-page limit from about 8 on; the jobs and handed-jobs records name who heard an event.
   */
  subscription_ids?: string[];
  /**
   * False for an event addressed to one app alone: delivered, but in no feed, stream or index of
   * its channel. Absent: listed.
   */
  listed?: false;
}

export type AuditAction =
  | "token.created"
  | "token.revoked"
  | "token.rotated"
  | "webhook.created"
  | "webhook.deleted"
  | "webhook.disabled"
  | "webhook.enabled"
  | "webhook.secret_rotated"
  | "webhook.updated"
  | "incoming_webhook.created"
  | "incoming_webhook.revoked"
  | "incoming_webhook.signature_refused"
  | "incoming_webhook.verify_secret_rotated"
  | "user.deactivated"
  | "user.reactivated"
  | "user.role_changed"
  | "user.email_changed"
  | "app.installed"
  | "app.uninstalled";

export interface AuditEntry {
  id: string;
  team_id: string;
  action: AuditAction;
  actor_id: string | null;
  actor_type: "user" | "system";
  /** Who acted, named when it happened; absent on entries written before names were kept. */
  actor_name?: string;
  target_id: string;
  /** What was acted on, named when it happened; absent on older entries. */
  target_name?: string;
  created_at: string;
}

/** An entry as the log shows it: who acted and what it acted on, named beside their ids. */
export type NamedAuditEntry = Omit<AuditEntry, "actor_name" | "target_name"> & {
  actor_name: string;
  /** Null on entries written before targets were named. */
  target_name: string | null;
};

/** A one-time link into the settings screen, stored by the SHA-256 of its secret. */
export interface LoginLink {
  user_id: string;
  /** Absent on links made before it was kept: then `expires_at` less the link's 15 minutes. */
  created_at?: string;
  expires_at: string;
  /** When it was used to sign in; a used link is kept a while, to say so when opened again. */
  used_at?: string | null;
}

/** A signed-in human's session of the settings screen, stored by the SHA-256 of its cookie. */
export interface Session {
  id: string;
  /** As at sign-in; each page reads the person as they are now (domain/people/sessions.ts). */
  user: User;
  /** Every form of this session carries it; a POST without it is refused. */
  csrf: string;
  created_at: string;
  expires_at: string;
}
