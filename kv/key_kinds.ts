/**
 * What an export (kv/store_export.ts) does with the keys of each prefix, decided here for every
 * prefix kv/keys.ts builds (tests/keys_test.ts fails on one left out), so that a new kind of key is
 * moved only when someone says so:
 * - `moved`: copied as stored (secrets stay sealed);
 * - `rebuilt`: remade by the target as it writes each event again (kv/outbox.ts writeEvent);
 * - `local`: of the running processes or the store itself (rate windows, open streams, leases,
 *   the key check, the service's URL): meaningless in another store, or remade by its processes.
 * `events` is moved too, last and oldest first, so each lands after its channel.
 */
const words = (text: string) => text.trim().split(/\s+/);

const PREFIX_KINDS = {
  moved: words(`
    teams users team_users system_bots tokens token_ids user_tokens user_tokens_version login_links
    sessions layout migrations channels channel_slugs members user_channels
    user_channels_version channels_version
    user_closed_channels members_version messages timeline timeline_len thread thread_len
    client_uuids channel_ts message_ts reactions poll_votes poll_ballots emoji events tokens_version jobs handed_jobs job_counts delivery_counts redeliveries
    user_emails scheduled scheduled_due user_scheduled
    failed_events webhooks team_webhooks routes_version deliveries delivery_slots incoming incoming_ids
    team_incoming apps app_clients app_installs oauth_codes audit team_commands team_commands_version
    responses triggers view_stacks app_tokens app_token_ids socket_events socket_counts pins
  `),
  rebuilt: words(`
    team_events open_events channel_events team_events_version stream_pending team_stream
    message_events views view_externals
  `),
  local: words(`
    append_turn streams streams_version user_streams user_streams_version undelivered
    delivery_signal rate up app_key_check service notices sealed_notices notices_version ephemerals
    socket_tickets socket_signal socket_presence socket_calls socket_answers
    socket_deaf scheduled_turn incoming_seen socket_presence_turn socket_links_closed import
  `),
};

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
