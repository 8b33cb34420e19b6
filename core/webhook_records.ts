import type { DeliveredType, EventType, UserType } from "./types.ts";

/**
 * How a subscription's deliveries are signed: `service`, the X-Service-Signature header (ours, the
 * default); `standard`, Standard Webhooks' `webhook-*` headers (standardwebhooks.com); `both`.
 */
export const SIGNATURE_SCHEMES = ["service", "standard", "both"] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** A subscription's scheme; one made before 0.32.0 has none, and keeps getting both, as it did. */
export const schemeOf = (s: Pick<Subscription, "signature_scheme">): SignatureScheme =>
  s.signature_scheme ?? "both";

/** An outgoing-webhook subscription as stored. Secrets are sealed with the keyring (AES-GCM). */
export interface Subscription {
  id: string;
  team_id: string;
  name: string;
  url: string;
  events: EventType[];
  channel_ids: string[] | null;
  status: "active" | "disabled";
  consecutive_failures: number;
  last_success_at: string | null;
  disabled_at: string | null;
  created_at: string;
  /** The user whose token created it: the subscription hears only what this user can see. */
  created_by: string | null;
  /** That user's type; absent on subscriptions made before it was kept. */
  owner_type?: UserType;
  secret: string;
  /** The secret replaced by the last rotation, still signed with until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  /**
   * Set on the subscriptions an app's install makes for its Events API request URL: deliveries
   * go in Slack's `event_callback` envelope, signed with the app's signing secret (sealed in
   * `secret`), and the REST API and screen's subscription lists leave them out.
   */
  app?: AppListener;
  /**
   * Delivery records ever written to the ring of slots (kv/keys.ts `delivery_slots`): the next
   * goes to this modulo 100. Absent before the first.
   */
  records_written?: number;
  /** How its deliveries are signed (`schemeOf`). */
  signature_scheme?: SignatureScheme;
}

/** Where channels are, as Slack's `message.*` events tell them apart. */
export type ChannelKind = "public" | "private" | "direct";

/** What an app's install listens to through one subscription. */
export interface AppListener {
  app_id: string;
  /** The app's bot in the team: whose channels it hears, and who its events are authorized for. */
  bot_id: string;
  /** The Slack events it was made for (`message.channels`, `reaction_added`, `app_mention`...). */
  bot_events: string[];
  /** Message events only in channels of these kinds (from `message.channels` and the like). */
  message_kinds: ChannelKind[];
  /** Only messages naming the bot (`<@id>` or `@name`): the `app_mention` subscription. */
  mention_of: { id: string; name: string } | null;
  /**
   * Only messages carrying metadata of these kinds (Slack's `metadata_subscriptions`: `app_id`
   * is the posting app's, or `*`), heard as `message_metadata_posted`, `_updated`, `_deleted`.
   */
  metadata?: { app_id: string; event_type: string }[];
  /** The app takes its events over Socket Mode: they wait for its connections, not jobs. */
  socket?: boolean;
}

/** One attempt to deliver an event to a subscription's endpoint. */
export interface Delivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: DeliveredType;
  /** 1-based position in the automatic schedule; null for a redelivery by hand. */
  attempt: number | null;
  succeeded: boolean;
  response_status: number | null;
  error: string | null;
  /**
   * The start of the receiver's answer, at most 1 KiB of it; absent on attempts recorded before
   * it was kept.
   */
  response_body?: string | null;
  /** How long the attempt took; absent on attempts recorded before it was kept. */
  duration_ms?: number;
  /**
   * When the next try of a failed attempt is due; null when none will follow (it succeeded, was
   * the last, was by hand, or the subscription was disabled); absent on older records.
   */
  next_attempt_at?: string | null;
  created_at: string;
}

/** A redelivery asked for by hand, pending until its one attempt is recorded. */
export interface Redelivery {
  id: string;
  subscription_id: string;
  event_id: string;
  created_at: string;
  /** As on a delivery job: until when one process holds it. */
  lease_until?: number | null;
  /**
   * The subscription's versionstamp as the redelivery's requester saw it: its attempt acts on
   * that version or a later one, never on an older cached copy. Absent on older redeliveries.
   */
  subscription_version?: string;
}

/** The user a subscription belongs to: it hears only the channels this user can see. */
export interface RouteOwner {
  id: string;
  type: UserType;
}

/** What the team index holds per subscription: just enough to route an event. */
export interface WebhookRoute {
  events: EventType[];
  channel_ids: string[] | null;
  status: "active" | "disabled";
  /** Absent on routes written before owners were kept: loadRoutes fills it in. Null: nobody. */
  owner?: RouteOwner | null;
  /** An app's listener: which channel kinds its message events come from, whom they mention. */
  app?: Pick<AppListener, "message_kinds" | "mention_of" | "metadata"> & {
    /** A Socket Mode app's listener: its events are queued for its connections. */
    socket?: { app_id: string; bot_id: string };
  };
}

/**
 * The first attempts of one event that a commit leased to the process that made it, in one record
 * instead of a job per subscription (written from 0.31.0; 0.30.0 reads it). Its process attempts
 * them from memory and takes each out of `pending` as its attempt is recorded, deleting the record
 * with the last; one that would start too late for the lease, or that it won't start (it stops),
 * becomes a job of its own (kv/outbox/handed_share.ts). Once `lease_until` passes with some still pending
 * (the process died), any engine turns those into ordinary free jobs (kv/outbox/handed_jobs.ts).
 */
export interface HandedJobs {
  event_id: string;
  /** The event's created_at: each job's, too. */
  created_at: string;
  /** Until when (ms) the process that made it holds these first attempts. */
  lease_until: number;
  /** The subscriptions whose first attempt is not recorded yet, with the version each job carries. */
  pending: { subscription_id: string; subscription_version: string }[];
}

/** A pending delivery of one event to one subscription; removed when it is settled. */
export interface DeliveryJob {
  subscription_id: string;
  event_id: string;
  /** The attempt the next try will be (1-based). */
  attempt: number;
  /** Why the last attempt failed, in Slack's words, for an app's `X-Slack-Retry-Reason`. */
  retry_reason?: string;
  next_attempt_at: string;
  created_at: string;
  /**
   * Until when (ms) one process holds the job: no other attempts it before then. Null or absent:
   * free for whoever finds it due.
   */
  lease_until?: number | null;
  /**
   * The subscription's versionstamp as the write that made the job saw it (its route's): the
   * attempts act on that version or a later one, so a change made before the event (a new URL,
   * a rotated secret) is never missed for a cached copy. Absent on older jobs.
   */
  subscription_version?: string;
}
