/**
 * What an export (kv/export/store_export.ts) does with the keys of each prefix, decided here for every
 * prefix kv/keys.ts builds (tests/keys_test.ts fails on one left out), so that a new kind of key is
 * moved only when someone says so:
 * - `moved`: copied as stored (secrets stay sealed), each with when its records expire;
 * - `rebuilt`: remade by the target as it writes each event again (kv/outbox/outbox.ts writeEvent);
 * - `local`: of the running processes or the store itself (rate windows, open streams, leases,
 *   the key check, the service's URL, an import's state): meaningless in another store, or
 *   remade by its processes.
 * `events` is moved too, last and oldest first, so each lands after its channel.
 */
import { idTime } from "../core/ids.ts";
import { EVENT_TTL_MS } from "./keys.ts";
import { FAILED_KEEP_MS } from "./outbox/failed_events.ts";
import { LINK_KEPT_MS } from "./sessions.ts";
import { CODE_KEPT_MS } from "./apps/apps.ts";
import { OPEN_STREAM_KEPT_MS } from "./apps/open_streams.ts";

const words = (text: string) => text.trim().split(/\s+/);

/**
 * When a moved record expires, as epoch ms, from its key and value: what its writer gives
 * `expireIn`, so that the target keeps it exactly as long (an export must not make a record of a
 * time forever). `kept`: kept until deleted.
 */
// deno-lint-ignore no-explicit-any
type Expiry = "kept" | ((key: Deno.KvKey, value: any) => number);

const at = (field: string, after = 0): Expiry => (_, v) => Date.parse(v[field]) + after;
const kept = (text: string) => words(text).map((p) => [p, "kept" as Expiry] as const);

/** Every moved prefix, and when its records expire. */
const MOVED = new Map<string, Expiry>([
  ...kept(`
    teams users team_users system_bots tokens token_ids user_tokens user_tokens_version
    layout migrations channels channel_slugs members user_channels
    user_channels_version channels_version
    user_closed_channels members_version messages timeline timeline_len thread thread_len
    client_uuids channel_ts message_ts reactions poll_votes poll_ballots emoji tokens_version jobs
    handed_jobs job_counts delivery_counts redeliveries
    user_emails scheduled scheduled_due user_scheduled
    webhooks team_webhooks routes_version deliveries delivery_slots incoming incoming_ids
    team_incoming apps app_clients app_installs audit team_commands team_commands_version
    app_tokens app_token_ids socket_counts pins agent_threads
  `),
  ["events", (key) => idTime(key[1] as string) + EVENT_TTL_MS],
  ["failed_events", at("failed_at", FAILED_KEEP_MS)],
  ["sessions", at("expires_at")],
  ["login_links", at("expires_at", LINK_KEPT_MS)],
  ["oauth_codes", at("expires_at", CODE_KEPT_MS)],
  // A person's open modals, and the ways an app answers them (response_url, trigger_id): part of
  // the workspace for their 30 minutes (a Home's, 400 days from its last publish), so a move
  // carries them.
  ["responses", at("expires_at")],
  ["triggers", at("expires_at")],
  ["view_stacks", at("expires_at")],
  // What waits for a Socket Mode app: kept its event's 30 days.
  ["socket_events", at("created_at", EVENT_TTL_MS)],
  // A reply being streamed: kept a day from its start, as its index is.
  ["open_streams", (key) => (key[1] as number) + OPEN_STREAM_KEPT_MS],
]);

const PREFIX_KINDS = {
  moved: [...MOVED.keys()],
  rebuilt: words(`
    team_events open_events channel_events team_events_version stream_pending team_stream
    message_events views view_externals
  `),
  local: words(`
    append_turn streams streams_version user_streams user_streams_version undelivered
    delivery_signal rate up app_key_check service notices sealed_notices notices_version ephemerals
    socket_tickets socket_signal socket_presence socket_calls socket_answers
    socket_deaf scheduled_turn incoming_seen socket_presence_turn socket_links_closed import
    admin_nonces admin_audit
  `),
};

/** When a moved record expires where its store keeps it for a time only; null: until deleted. */
export function expiryOf(key: Deno.KvKey, value: unknown): number | null {
  const expiry = MOVED.get(String(key[0]));
  return expiry === undefined || expiry === "kept" ? null : expiry(key, value);
}

type ExportKind = keyof typeof PREFIX_KINDS;

/** Every prefix, with what an export does with it. */
export const EXPORTED = new Map<string, ExportKind>(
  (Object.entries(PREFIX_KINDS) as [ExportKind, string[]][])
    .flatMap(([kind, prefixes]) => prefixes.map((p) => [p, kind] as const)),
);

/**
 * Prefixes never copied out of the store, not even by a backup: what a person alone was shown
 * (decisions.md, "Ephemeral messages": never stored), kept only on its way to other instances.
 */
export const NEVER_COPIED = ["notices", "sealed_notices", "ephemerals"] as const;

/** Whether an export copies the keys of `prefix` as they are stored. */
export const isMoved = (prefix: unknown): boolean => EXPORTED.get(String(prefix)) === "moved";
