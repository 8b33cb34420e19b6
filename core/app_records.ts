/** Apps as they are stored: what an app declares, its installs into teams, its OAuth codes. */
import type { Block, Scope } from "./types.ts";

/** The events an app's manifest may subscribe its bot to (Slack's Events API names). */
export const BOT_EVENTS = [
  "message.channels",
  "message.groups",
  "message.im",
  "app_mention",
  "reaction_added",
  "member_joined_channel",
  "app_home_opened",
  "assistant_thread_started",
  "assistant_thread_context_changed",
  "app_context_changed",
] as const;
export type BotEvent = typeof BOT_EVENTS[number];

/** Whether a manifest's event is one the service sends. */
export const isBotEvent = (e: string): e is BotEvent =>
  (BOT_EVENTS as readonly string[]).includes(e);

/**
 * A shortcut an app declares (Slack's `features.shortcuts`): a person runs a global one anywhere
 * in the team, a message one on a message they see; the app gets Slack's `shortcut` or
 * `message_action` with a `trigger_id`.
 */
export interface Shortcut {
  name: string;
  type: "global" | "message";
  callback_id: string;
  description: string;
}

/**
 * Where a person's interactions go: presses, views, shortcuts to `request_url`; an external
 * menu's `block_suggestion` to `message_menu_options_url` when given (Slack's "Select Menus").
 */
export interface Interactivity {
  is_enabled: boolean;
  request_url: string | null;
  message_menu_options_url?: string | null;
}

/** What an app's Home offers: a Home tab the app publishes views into, a messages tab. */
export interface AppHome {
  home_tab_enabled: boolean;
  messages_tab_enabled: boolean;
}

/** A prompt an agent offers a person to start with: shown as `title`, sent as `message`. */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/**
 * An agent's place beside the chat (Slack's `features.assistant_view`, or the newer
 * `features.agent_view`): how it is described, and the prompts it offers before a thread starts.
 */
export interface AgentView {
  description: string;
  suggested_prompts: SuggestedPrompt[];
}

/** A kind of message metadata an app hears of (Slack's `metadata_subscriptions`). */
export interface MetadataSubscription {
  /** The app whose messages' metadata is heard; `*` for any app's. */
  app_id: string;
  event_type: string;
}

/** A slash command an app declares: what a person types, and where the service sends it. */
export interface SlashCommand {
  command: string;
  /** Null when the app takes its commands over Socket Mode. */
  url: string | null;
  description: string;
  usage_hint: string;
}

/** A third-party integration, registered by the operator, that installs itself with OAuth 2.0. */
export interface App {
  id: string;
  name: string;
  /** Public; what the app sends as `client_id`. */
  client_id: string;
  /** SHA-256 of the client secret, hex. The secret itself is never stored. */
  secret_hash: string;
  /** Where an authorization may send the browser back to, compared exactly. */
  redirect_uris: string[];
  /** The most an install may grant. */
  scopes: Scope[];
  /** Whether an install asks the admin for a channel and gives the app an incoming webhook. */
  incoming_webhook: boolean;
  created_at: string;
  /** Its bot's display name; the app's name when absent (apps registered before manifests). */
  bot_name?: string;
  slash_commands?: SlashCommand[];
  interactivity?: Interactivity | null;
  /** Null when the app listens over Socket Mode without a request URL. */
  event_subscriptions?: { request_url: string | null; bot_events: BotEvent[] } | null;
  /**
   * Socket Mode (decisions.md, "Apps without a public URL"): its events, commands and
   * interactions go over its WebSocket connections, never to its request URLs.
   */
  socket_mode_enabled?: boolean;
  /** Brought into a team, as its slash commands are, by an install granted `commands`. */
  shortcuts?: Shortcut[];
  /** App Home (Slack's `features.app_home`): a Home tab people open, and a messages tab. */
  app_home?: AppHome | null;
  /** An agent with threads in its direct channel (decisions.md, "Slack's agents"). */
  assistant_view?: AgentView | null;
  /** An agent in the agent messaging experience: opened from its Messages tab. */
  agent_view?: AgentView | null;
  /** The message metadata the app hears of, as `message_metadata_*` events. */
  metadata_subscriptions?: MetadataSubscription[];
  /**
   * Signs what the service sends the app (Slack's v0 signature), sealed with APP_KEY; absent on
   * apps registered before manifests until `app:rotate-signing-secret`.
   */
  signing_secret?: string;
}

/** An app in a team: its bot, what the last install issued, and whether it is uninstalled. */
export interface AppInstall {
  app_id: string;
  team_id: string;
  bot_user_id: string;
  token_id: string;
  incoming_webhook_id: string | null;
  scopes: Scope[];
  installed_at: string;
  installed_by: string;
  /** The subscriptions made for the app's Events API request URL (domain/apps/listeners.ts). */
  listener_ids?: string[];
  /** The slash command names the install holds in its team. */
  commands?: string[];
  uninstalled_at: string | null;
}

/**
 * A one-time authorization code, by SHA-256 of its value: what the admin approved, for the
 * token endpoint to turn into an install. Kept a day past its expiry, so a replay is recognised.
 */
export interface AuthorizationCode {
  app_id: string;
  team_id: string;
  /** The admin who approved; the install acts as them. */
  user_id: string;
  redirect_uri: string;
  scopes: Scope[];
  /** PKCE S256: base64url of the SHA-256 of the verifier. */
  code_challenge: string;
  channel_id: string | null;
  expires_at: string;
  used_at: string | null;
  /** What its one redemption issued: taken back if the code is presented again. */
  issued: { token_id: string; incoming_webhook_id: string | null } | null;
  /** When it was presented again after its use: what it issued is taken back. */
  replayed_at: string | null;
}

/**
 * A modal, or an app's Home for one person, as an app describes it (Slack's view object), checked
 * when it is opened, published or changed. A Home has no title, submit or close.
 */
export interface ViewSpec {
  type: "modal" | "home";
  title: { type: "plain_text"; text: string } | null;
  blocks: Block[];
  submit: { type: "plain_text"; text: string } | null;
  close: { type: "plain_text"; text: string } | null;
  callback_id: string;
  private_metadata: string;
  notify_on_close: boolean;
  external_id: string;
}

/** A view as stored: its spec, its id and hash (which change with each update), where it stands. */
export interface StoredView extends ViewSpec {
  id: string;
  hash: string;
  previous_view_id: string | null;
}

/**
 * The modals a person has open from one app: the first opened by a trigger, at most 3 pushed
 * onto it; the person submits or closes the top one. Gone a day after it was opened. Or an app's
 * Home for one person: one view, republished in place, under an id made from the app's and the
 * person's (domain/apps/home.ts).
 */
export interface ViewStack {
  /** The first view's id: the stack's. */
  id: string;
  app_id: string;
  team_id: string;
  user_id: string;
  channel_id: string;
  bot_user_id: string;
  views: StoredView[];
  closed_at: string | null;
  expires_at: string;
}

/** An app-level `xapp-` token (Socket Mode), by the SHA-256 of its value. */
export interface AppToken {
  id: string;
  app_id: string;
  name: string;
  created_at: string;
}

/** A Socket Mode connection URL's ticket: single-use, within a minute. */
export interface SocketTicket {
  app_id: string;
  /** The app-level token that asked for it: its connection closes when that is revoked. */
  token_hash: string;
  expires_at: number;
}

/** Who an event for a Socket Mode app is for: what its envelope needs of the listener. */
export interface SocketListener {
  app_id: string;
  bot_id: string;
  mention_of: { id: string; name: string } | null;
  /** The app's message metadata listener (`metadata_subscriptions`). */
  metadata?: true;
}

/**
 * An event waiting for a Socket Mode app until a connection acks its envelope: its attempts so
 * far, and until when the one under way holds it (ms), so no other connection takes it meanwhile.
 */
export interface SocketPending {
  listener: SocketListener;
  attempt: number;
  claim_until: number;
  created_at: string;
}

/** An instance's open connections of one app, renewed while they last. */
export interface SocketPresence {
  connections: number;
  host: string;
  seen_at: number;
}

/**
 * A command or an interaction for an app whose connections are all on other instances: the first
 * of them to read it takes it (deleting it) and sends it on.
 */
export interface SocketCall {
  type: "slash_commands" | "interactive";
  payload: unknown;
  /** When the instance waiting on it stops waiting (ms). */
  deadline: number;
}

/** What became of a relayed call: the ack's payload, or why there is none. */
export type SocketAnswer = { payload: unknown } | {
  failed: "not connected" | "closed" | "timed out";
};

/**
 * An episode of a Socket Mode app away (decisions.md: "Someone is told"): first seen with events
 * waiting and no connection at `since` (ms); `told_at` once its people were told. It ends, and
 * the record goes, when a connection opens (they are told of that too) or nothing waits untold.
 */
export interface SocketDeaf {
  since: number;
  told_at: number | null;
}

/** How a Socket Mode app stands: its connections per instance, its backlog, what it lost. */
export interface SocketStatus {
  /** Each instance holding some of the app's connections, as it last said (every 20 s). */
  connections: { instance: string; connections: number; seen_at: string }[];
  /** Events not acked yet, whether waiting or sent and unanswered. */
  backlog: number;
  /** Seconds since the oldest of them was committed; null with none. */
  oldest_pending_age_seconds: number | null;
  acked: number;
  dropped: number;
}
