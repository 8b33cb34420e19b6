/**
 * The whole Deno KV key space, in one place. Every key the service reads or writes is built
 * here; no other module spells a key prefix.
 *
 * | key                                           | value                | notes                                   |
 * |-----------------------------------------------|----------------------|-----------------------------------------|
 * | ["teams", teamId]                             | Team                 |                                         |
 * | ["users", userId]                             | User                 | its role and deactivation change (domain/people/people.ts); its tokens carry the role, rewritten with it |
 * | ["team_users", teamId, userId]                | null                 | index: a team's users                   |
 * | ["user_emails", teamId, email]                | userId               | a person's email, lower-cased, unique in the team (users.lookupByEmail) |
 * | ["system_bots", teamId]                       | userId               | the team's "Integrations" bot (domain/webhooks/trouble.ts) |
 * | ["tokens", tokenHash]                         | Token                | primary, by SHA-256 of the value; read with each request's first resource |
 * | ["token_ids", tokenId]                        | tokenHash            | index: id to primary key                |
 * | ["user_tokens", userId, tokenId]              | tokenHash            | index: a user's tokens, by age (UUIDv7)  |
 * | ["user_tokens_version", userId]               | number (time)        | rewritten by every token creation: a count of live tokens checks it |
 * | ["login_links", linkHash]                     | LoginLink            | a one-time sign-in link, by SHA-256 of its secret; marked used; kept a day past its expiry |
 * | ["sessions", sessionHash]                     | Session              | a settings-screen session, by SHA-256 of its cookie; expires |
 * | ["layout"]                                    | { version, upgraded_at } | the store's key layout version (kv/store/migrations.ts); stores made before it have none |
 * | ["import"]                                    | { export_id, started_at, finished_at, pid, host, heartbeat_at } | written by `admin import` (domain/data/moves.ts) in the commit of its first records: an import cut short is finished by running it again; of this store only, never exported |
 * | ["migrations", name]                          | { at }               | a data migration that has run, before the layout version was kept: read to tell a store's layout, never written |
 * | ["channels", channelId]                       | Channel              | team, visibility, directness never change |
 * | ["channel_slugs", teamId, slug]               | channelId            | unique slug per team                    |
 * | ["members", channelId, userId]                | MemberRef            | channel membership                      |
 * | ["user_channels", userId, channelId]          | null                 | index: a user's channels                |
 * | ["user_channels_version", userId]             | number (time)        | rewritten with every change of the user's memberships: a cached list of its channels is current while this is (written from 0.29, read from 0.30) |
 * | ["channels_version", teamId]                  | number (time)        | rewritten with every channel record of the team made or changed: with the above, what a cached channel list is checked against |
 * | ["user_closed_channels", userId, channelId]   | null                 | index: a user's private and direct channels, whose events only members see: the event feed's sources beyond the open events; kept with user_channels |
 * | ["members_version", channelId]                | number (time)        | rewritten with every membership change: who hears the channel's events |
 * | ["messages", messageId]                       | Message              | primary                                 |
 * | ["timeline", channelId, pos]                  | Message              | copy; pos is dense from 1: page N is a range |
 * | ["timeline_len", channelId]                   | Deno.KvU64           | highest pos; every append checks its versionstamp |
 * | ["append_turn", channelId]                   | { owner, until }     | a process that kept losing appends to the channel's lists claims them until `until` (ms); expires |
 * | ["thread", rootId, pos]                       | Message              | copy of a thread reply, oldest first    |
 * | ["thread_len", rootId]                        | Deno.KvU64           | highest pos in the thread               |
 * | ["client_uuids", authorId, clientUuid]        | messageId            | idempotency of posts, forever           |
 * | ["channel_ts", channelId]                     | Deno.KvU64           | the channel's last message `ts`, in microseconds: each append takes the next (written from 0.29) |
 * | ["message_ts", channelId, ts]                 | messageId            | index: a message by its Slack-style `ts` (written from 0.29; older messages have none) |
 * | ["reactions", messageId, emoji, userId]       | null                 | who reacted; the counts live on Message |
 * | ["poll_votes", messageId, optionId, userId]  | MemberRef            | who voted for a poll's option; the counts live on Message (domain/messages/polls.ts) |
 * | ["poll_ballots", messageId, userId]           | optionId[]           | a voter's options of a poll: a single-choice vote moves from them |
 * | ["emoji", teamId, name]                       | { name }             | custom emoji                            |
 * | ["events", eventId]                           | OutboxEvent          | the outbox; expires after EVENT_TTL_MS  |
 * | ["team_events", teamId, eventId]              | { type, channel_id } | index: a team's events in id order: the stream turns a time into a place in its log with it (an entry's versionstamp is its event's commit's); expires with the event |
 * | ["open_events", teamId, eventId]              | { type, channel_id } | index: a team's events in public channels, which every human of the team sees: the event feed reads it; expires with the event |
 * | ["channel_events", channelId, eventId]        | { type }             | index: a channel's events in id order: the event feed reads those of the reader's closed channels (a bot's: all of its channels); expires with the event |
 * | ["team_events_version", teamId]               | eventId              | rewritten by every commit with events of the team: its versionstamp is the latest such commit's |
 * | ["stream_pending", teamId, eventId]           | { events: [{ id, type, channel_id }] } | a commit's events of the team (up to 100 a marker, keyed by the first); moved into team_stream shortly after (kv/stream/stream_log.ts); expires with the events. Older ones hold { type, channel_id } of the key's event |
 * | ["team_stream", teamId, versionstamp, eventId] | { events: [{ id, type, channel_id }] } | the team's events in commit order, a marker's events to an entry, for the event stream; expires with the events. Older ones hold { type, channel_id } |
 * | ["streams", tokenId, streamId]                | { expires_at }       | an open event stream of a token, renewed while it lasts |
 * | ["streams_version", tokenId]                  | number (time)        | rewritten when a stream of the token opens: a count of them checks it |
 * | ["user_streams", userId, streamId]            | { expires_at }       | the same registration, per user: a user's tokens together hold at most a user's cap of streams |
 * | ["user_streams_version", userId]              | number (time)        | rewritten when a stream of the user opens: a count of them checks it |
 * | ["sealed_notices", teamId, noticeId]          | SealedNotice         | an ephemeral message or opened view for one person's open streams, relayed to every instance (kv/ephemeral.ts), what it says sealed under APP_KEY; expires in a minute; never exported nor backed up |
 * | ["notices", teamId, noticeId]                 | PersonalNotice       | the same unsealed, as 0.31.0 relays them: read, never written (drop in 0.33.0) |
 * | ["notices_version", teamId]                   | noticeId             | the team's last notice: instances with open streams poll it; expires |
 * | ["tokens_version"]                            | number (time)        | rewritten by every revocation and rotation: open streams check their tokens again; a post that reuses its token's entry checks it |
 * | ["jobs", subscriptionId, eventId]             | DeliveryJob          | one per event and matching subscription, but for first attempts handed over (next row): a retry, or a first attempt no engine of the committing process had room for |
 * | ["job_counts", subscriptionId, "created"|"settled"] | Deno.KvU64     | jobs ever made and settled, summed in their commits: pending = created - settled, without a scan |
 * | ["handed_jobs", leaseUntil, eventId]          | HandedJobs           | an event's first attempts leased to the process that committed it, in one record (written from 0.31.0, at most 200 each), by when the lease runs out; that process takes each out as its attempt is recorded, or makes it a job of its own (kv/outbox/handed_share.ts); turned into free jobs once the lease ran out (kv/outbox/handed_jobs.ts) |
 * | ["undelivered", wakeId]                       | queue message        | keysIfUndelivered: the sweeper deletes it (pulls find the work anyway) |
 * | ["delivery_signal"]                           | number (time)        | set by commits that leave jobs for any engine; every engine polls it |
 * | ["redeliveries", subscriptionId, redeliveryId] | Redelivery          | a redeliver request until its one attempt is recorded |
 * | ["failed_events", subscriptionId, eventId]    | { failed_at }        | an event whose every attempt to the subscription failed; for recover; expires after 8 days |
 * | ["webhooks", subscriptionId]                  | Subscription         | signing secrets sealed (AES-GCM); stats updated by every attempt |
 * | ["team_webhooks", teamId, subscriptionId]     | WebhookRoute         | routing copy (events, channel_ids, status, owner), kept in the same commits, so its versionstamp is that of the subscription's last change (jobs carry it); UUIDv7 so it sorts by age |
 * | ["routes_version", teamId]                    | number (time)        | rewritten with every route change: its versionstamp tells cached routes are stale |
 * | ["deliveries", subscriptionId, deliveryId]    | Delivery             | attempts releases before 0.32.0 recorded, by age (UUIDv7); the sweep deletes each once 100 newer are kept in either layout |
 * | ["delivery_counts", subscriptionId, "written"|"pruned"] | Deno.KvU64  | the records keyed by id ever written and pruned, summed in their commits (stored = written - pruned, as 0.31.0 prunes); a prune checks "pruned" |
 * | ["delivery_slots", subscriptionId, slot]      | Delivery             | attempts in a ring of 100 slots (0-99), each rewritten in place by the record 100 later: the subscription's `records_written` says which slot is next (read from 0.31.0, written from 0.32.0; readers take both layouts, newest first by id); never pruned |
 * | ["incoming", secretHash]                     | IncomingWebhook      | primary, by SHA-256 of the secret: a post through the hook reads only this |
 * | ["incoming_ids", hookId]                      | secretHash           | index: id to primary key                |
 * | ["team_incoming", teamId, hookId]             | secretHash           | index: a team's incoming webhooks; UUIDv7 so it sorts by age |
 * | ["incoming_seen", hookId, deliveryId]         | Posting              | a signed sender's delivery posted, for 5 minutes (expireIn) |
 * | ["audit", teamId, entryId]                    | AuditEntry           | by age (UUIDv7)                         |
 * | ["apps", appId]                               | App                  | an OAuth client, registered by the operator; its secret hashed |
 * | ["app_clients", clientId]                     | appId                | index: client_id to app                 |
 * | ["app_installs", teamId, appId]               | AppInstall           | the app in the team: its bot, its last token and hook; kept after an uninstall, so a reinstall reuses the bot |
 * | ["team_commands", teamId, command]            | TeamCommand          | a slash command's name in a team, held by the app whose install brought it (kv/apps/commands.ts) |
 * | ["team_commands_version", teamId]             | number (time)        | rewritten with every change of the team's commands: a change checks it |
 * | ["responses", urlHash]                        | ResponseTarget       | a command's or action's `response_url` (kv/apps/responses.ts): 10 uses in 30 minutes; expires; moved by an export |
 * | ["triggers", triggerHash]                     | Trigger              | a `trigger_id`: opens one view within 30 seconds; expires; moved by an export |
 * | ["view_stacks", stackId]                      | ViewStack            | a person's open modals from one app (kv/apps/views.ts), expiring a day after it opened; or an app's Home for one person, 400 days after its last publish (domain/apps/home.ts); moved by an export |
 * | ["app_tokens", tokenHash]                     | AppToken             | an app-level `xapp-` token (Socket Mode), by SHA-256 of its value; works for apps.connections.open only |
 * | ["app_token_ids", appId, tokenId]             | tokenHash            | index: an app's app-level tokens, by age (UUIDv7) |
 * | ["socket_tickets", ticketHash]                | SocketTicket         | a single-use Socket Mode connection URL's ticket, by SHA-256; taken within 60 s; expires |
 * | ["socket_events", appId, eventId, subscriptionId] | SocketPending    | an event for a Socket Mode app, pending until a connection acks its envelope (kv/apps/socket_queue.ts); in id order: commit order per app |
 * | ["socket_counts", appId, "queued"\|"acked"\|"dropped"] | Deno.KvU64 | the app's envelopes ever queued, acked and dropped (past SOCKET_MODE_BACKLOG): its backlog without a scan |
 * | ["socket_signal"(, appId)]                    | number (time)        | set, with the app's own, by commits that queue events or calls for a Socket Mode app; instances with connections poll the first, then their apps' |
 * | ["socket_presence", appId, instanceId]        | SocketPresence       | an instance's open connections of an app, renewed every 20 s; expires: how many an app has across instances |
 * | ["agent_threads", channelId, threadTs \| ""] | AgentThread          | an agent's conversation with a person, or one of its threads: what the person looks at, the agent's status and suggested prompts (kv/apps/agent_threads.ts) |
 * | ["open_streams", startedMs, messageId]       | OpenStream           | a reply an agent is streaming, until its stream stops (kv/apps/open_streams.ts): how one left open ten minutes is found and stopped |
 * | ["admin_nonces", nonce], ["admin_audit", id]  | number, AdminAuditEntry | a signed admin request's nonce, kept past its 5 minutes: a replay is refused (kv/service/admin_nonces.ts); each admin request that ran or was refused, 90 days (kv/service/admin_audit.ts) |
 * | ["socket_presence_turn", appId]               | Deno.KvU64           | bumped by every write of the app's presences, and checked by an opening's count-and-record: two instances never both take the tenth slot |
 * | ["socket_links_closed", appId]                | number (time)        | the app's connections opened before it are closed on every instance (its last install went; domain/apps/installs.ts) |
 * | ["socket_calls", appId, callId]               | SocketCall           | a command or interaction for an app connected to other instances only, until one takes it (delivery/apps/socket/relay.ts); expires |
 * | ["socket_answers", callId]                    | SocketAnswer         | what became of a relayed call, for the instance that waits on it; expires |
 * | ["socket_deaf", appId]                        | SocketDeaf           | a Socket Mode app seen with events waiting and no connection: since when, whether its people were told (domain/apps/socket/deaf_watch.ts) |
 * | ["ephemerals", id]                           | sealed ephemeral     | an ephemeral message with elements its person may press, 30 minutes (kv/apps/pressable_ephemerals.ts); sealed under APP_KEY; never exported nor backed up |
 * | ["view_externals", appId, teamId, externalId] | viewId              | index: a view by the `external_id` its app gave it (views.update); expires with its stack; rebuilt by an import |
 * | ["scheduled", id]                             | ScheduledMessage     | a message to post at `post_at` (domain/messages/scheduled.ts): deleted in the commit that posts it |
 * | ["scheduled_due", postAtMs, id]              | null                 | index: scheduled messages by when they are due |
 * | ["user_scheduled", userId, id]               | null                 | index: a user's scheduled messages (chat.scheduledMessages.list) |
 * | ["scheduled_turn"]                           | { owner, until }     | the process that posts what is due, until `until` (ms): the others look again then |
 * | ["pins", channelId, messageId]                | Pin                  | a message pinned in its channel (domain/messages/pins.ts); gone with the message's delete |
 * | ["views", viewId]                             | stackId              | index: a view's stack; expires with it; rebuilt by an import from its stack |
 * | ["oauth_codes", codeHash]                     | AuthorizationCode    | one-time, 10 minutes; marked used; kept a day past its expiry to recognise a replay |
 * | ["rate", window, name]                        | number               | requests of a rate-limited name (token:id, hook:id) claimed by all instances in one minute window; expires |
 * | ["up"]                                        | (never written)      | read by GET /up to probe that KV answers |
 * | ["app_key_check"]                             | sealed text          | a known text sealed with APP_KEY: a process with another key refuses to start |
 * | ["service", "base_url"]                       | string               | the BASE_URL the service last started with: the URLs the CLI prints |
 */
export const keys = {
  teams: () => ["teams"],
  team: (teamId: string) => ["teams", teamId],
  user: (userId: string) => ["users", userId],
  teamUsers: (teamId: string) => ["team_users", teamId],
  teamUser: (teamId: string, userId: string) => ["team_users", teamId, userId],
  userEmail: (teamId: string, email: string) => ["user_emails", teamId, email],
  systemBot: (teamId: string) => ["system_bots", teamId],
  tokens: () => ["tokens"],
  token: (hash: string) => ["tokens", hash],
  tokenId: (tokenId: string) => ["token_ids", tokenId],
  userTokens: (userId: string) => ["user_tokens", userId],
  userToken: (userId: string, tokenId: string) => ["user_tokens", userId, tokenId],
  userTokensVersion: (userId: string) => ["user_tokens_version", userId],
  loginLinks: () => ["login_links"],
  loginLink: (hash: string) => ["login_links", hash],
  sessions: () => ["sessions"],
  session: (hash: string) => ["sessions", hash],
  layout: () => ["layout"],
  importState: () => ["import"],
  migration: (name: string) => ["migrations", name],
  channels: () => ["channels"],
  channel: (channelId: string) => ["channels", channelId],
  channelSlugs: (teamId: string) => ["channel_slugs", teamId],
  channelSlug: (teamId: string, slug: string) => ["channel_slugs", teamId, slug],
  members: (channelId: string) => ["members", channelId],
  member: (channelId: string, userId: string) => ["members", channelId, userId],
  userChannels: (userId: string) => ["user_channels", userId],
  userChannelsVersion: (userId: string) => ["user_channels_version", userId],
  channelsVersion: (teamId: string) => ["channels_version", teamId],
  userChannel: (userId: string, channelId: string) => ["user_channels", userId, channelId],
  userClosedChannels: (userId: string) => ["user_closed_channels", userId],
  userClosedChannel: (user: string, channel: string) => ["user_closed_channels", user, channel],
  membersVersion: (channelId: string) => ["members_version", channelId],
  message: (messageId: string) => ["messages", messageId],
  timeline: (channelId: string) => ["timeline", channelId],
  timelineAt: (channelId: string, pos: number) => ["timeline", channelId, pos],
  timelineLen: (channelId: string) => ["timeline_len", channelId],
  appendTurn: (channelId: string) => ["append_turn", channelId],
  thread: (rootId: string) => ["thread", rootId],
  threadAt: (rootId: string, pos: number) => ["thread", rootId, pos],
  threadLen: (rootId: string) => ["thread_len", rootId],
  clientUuid: (authorId: string, clientUuid: string) => ["client_uuids", authorId, clientUuid],
  channelTs: (channelId: string) => ["channel_ts", channelId],
  messageTs: (channelId: string, ts: string) => ["message_ts", channelId, ts],
  reaction: (message: string, emoji: string, user: string) => ["reactions", message, emoji, user],
  reactions: (messageId: string) => ["reactions", messageId],
  pollVote: (msg: string, option: string, user: string) => ["poll_votes", msg, option, user],
  pollVoters: (messageId: string, optionId: string) => ["poll_votes", messageId, optionId],
  pollVotes: (messageId: string) => ["poll_votes", messageId],
  pollBallot: (messageId: string, userId: string) => ["poll_ballots", messageId, userId],
  pollBallots: (messageId: string) => ["poll_ballots", messageId],
  emoji: (teamId: string, name: string) => ["emoji", teamId, name],
  emojis: (teamId: string) => ["emoji", teamId],
  event: (eventId: string) => ["events", eventId],
  events: () => ["events"],
  allTeamEvents: () => ["team_events"],
  teamEventsOf: (teamId: string) => ["team_events", teamId],
  teamEvent: (teamId: string, eventId: string) => ["team_events", teamId, eventId],
  openEvents: (teamId: string) => ["open_events", teamId],
  openEvent: (teamId: string, eventId: string) => ["open_events", teamId, eventId],
  channelEvents: (channelId: string) => ["channel_events", channelId],
  channelEvent: (channelId: string, eventId: string) => ["channel_events", channelId, eventId],
  messageEvents: (messageId: string) => ["message_events", messageId],
  messageEvent: (messageId: string, eventId: string) => ["message_events", messageId, eventId],
  teamEventsVersion: (teamId: string) => ["team_events_version", teamId],
  streamPendingAll: (teamId?: string) => teamId ? ["stream_pending", teamId] : ["stream_pending"],
  streamPending: (teamId: string, eventId: string) => ["stream_pending", teamId, eventId],
  teamStream: (teamId: string) => ["team_stream", teamId],
  teamStreamAt: (teamId: string, versionstamp: string, eventId: string) => [
    "team_stream",
    teamId,
    versionstamp,
    eventId,
  ],
  streams: (tokenId: string) => ["streams", tokenId],
  stream: (tokenId: string, streamId: string) => ["streams", tokenId, streamId],
  streamsVersion: (tokenId: string) => ["streams_version", tokenId],
  userStreams: (userId: string) => ["user_streams", userId],
  userStream: (userId: string, streamId: string) => ["user_streams", userId, streamId],
  userStreamsVersion: (userId: string) => ["user_streams_version", userId],
  notices: (teamId: string) => ["notices", teamId],
  notice: (teamId: string, noticeId: string) => ["notices", teamId, noticeId],
  sealedNotices: (teamId: string) => ["sealed_notices", teamId],
  sealedNotice: (teamId: string, noticeId: string) => ["sealed_notices", teamId, noticeId],
  noticesVersion: (teamId: string) => ["notices_version", teamId],
  tokensVersion: () => ["tokens_version"],
  job: (subscriptionId: string, eventId: string) => ["jobs", subscriptionId, eventId],
  undelivered: (wakeId: string) => ["undelivered", wakeId],
  deliverySignal: () => ["delivery_signal"],
  jobCounts: (subscriptionId: string) => ["job_counts", subscriptionId],
  jobsCreated: (subscriptionId: string) => ["job_counts", subscriptionId, "created"],
  jobsSettled: (subscriptionId: string) => ["job_counts", subscriptionId, "settled"],
  jobs: (subscriptionId?: string) => subscriptionId ? ["jobs", subscriptionId] : ["jobs"],
  handedJobs: () => ["handed_jobs"],
  handedJob: (leaseUntil: number, eventId: string) => ["handed_jobs", leaseUntil, eventId],
  undeliveredAll: () => ["undelivered"],
  redelivery: (sub: string, redelivery: string) => ["redeliveries", sub, redelivery],
  redeliveries: (subscriptionId?: string) =>
    subscriptionId ? ["redeliveries", subscriptionId] : ["redeliveries"],
  failedEvents: (subscriptionId: string) => ["failed_events", subscriptionId],
  failedEvent: (sub: string, eventId: string) => ["failed_events", sub, eventId],
  webhooks: () => ["webhooks"],
  webhook: (subscriptionId: string) => ["webhooks", subscriptionId],
  teamWebhooks: (teamId: string) => ["team_webhooks", teamId],
  teamWebhook: (teamId: string, sub: string) => ["team_webhooks", teamId, sub],
  routesVersion: (teamId: string) => ["routes_version", teamId],
  deliveries: (subscriptionId: string) => ["deliveries", subscriptionId],
  deliveryCounts: (subscriptionId: string) => ["delivery_counts", subscriptionId],
  deliveriesWritten: (subscriptionId: string) => ["delivery_counts", subscriptionId, "written"],
  deliveriesPruned: (subscriptionId: string) => ["delivery_counts", subscriptionId, "pruned"],
  delivery: (sub: string, deliveryId: string) => ["deliveries", sub, deliveryId],
  deliverySlots: (subscriptionId: string) => ["delivery_slots", subscriptionId],
  deliverySlot: (subscriptionId: string, slot: number) => ["delivery_slots", subscriptionId, slot],
  incoming: (hash: string) => ["incoming", hash],
  incomingId: (hookId: string) => ["incoming_ids", hookId],
  teamIncoming: (teamId: string) => ["team_incoming", teamId],
  teamIncomingHook: (teamId: string, hookId: string) => ["team_incoming", teamId, hookId],
  incomingSeen: (hookId: string, deliveryId: string) => ["incoming_seen", hookId, deliveryId],
  apps: () => ["apps"],
  app: (appId: string) => ["apps", appId],
  appClient: (clientId: string) => ["app_clients", clientId],
  installs: () => ["app_installs"],
  teamInstalls: (teamId: string) => ["app_installs", teamId],
  install: (teamId: string, appId: string) => ["app_installs", teamId, appId],
  oauthCode: (hash: string) => ["oauth_codes", hash],
  responseUrl: (hash: string) => ["responses", hash],
  trigger: (hash: string) => ["triggers", hash],
  viewStack: (stackId: string) => ["view_stacks", stackId],
  appTokens: (appId: string) => ["app_token_ids", appId],
  appTokenId: (appId: string, tokenId: string) => ["app_token_ids", appId, tokenId],
  appToken: (hash: string) => ["app_tokens", hash],
  socketTicket: (hash: string) => ["socket_tickets", hash],
  socketEvents: (app: string) => ["socket_events", app],
  socketEvent: (app: string, event: string, sub: string) => ["socket_events", app, event, sub],
  socketCount: (app: string, kind: SocketCount) => ["socket_counts", app, kind],
  socketCountsAll: () => ["socket_counts"],
  socketSignal: () => ["socket_signal"],
  socketAppSignal: (appId: string) => ["socket_signal", appId],
  socketPresences: (appId: string) => ["socket_presence", appId],
  socketPresenceAll: () => ["socket_presence"],
  socketCalls: (appId: string) => ["socket_calls", appId],
  socketCall: (appId: string, callId: string) => ["socket_calls", appId, callId],
  socketAnswer: (callId: string) => ["socket_answers", callId],
  socketDeaf: (appId: string) => ["socket_deaf", appId],
  socketPresence: (appId: string, instanceId: string) => ["socket_presence", appId, instanceId],
  socketPresenceTurn: (appId: string) => ["socket_presence_turn", appId],
  socketLinksClosed: (appId: string) => ["socket_links_closed", appId],
  adminNonce: (nonce: string) => ["admin_nonces", nonce],
  adminAudits: () => ["admin_audit"],
  adminAudit: (entryId: string) => ["admin_audit", entryId],
  agentThread: (channelId: string, threadTs: string) => ["agent_threads", channelId, threadTs],
  openStreams: () => ["open_streams"],
  openStream: (startedMs: number, messageId: string) => ["open_streams", startedMs, messageId],
  view: (viewId: string) => ["views", viewId],
  viewExternal: (app: string, team: string, ext: string) => ["view_externals", app, team, ext],
  pressableEphemeral: (id: string) => ["ephemerals", id],
  scheduled: (id: string) => ["scheduled", id],
  scheduledDue: (postAt: number, id: string) => ["scheduled_due", postAt, id],
  scheduledDueAll: () => ["scheduled_due"],
  userScheduled: (userId: string) => ["user_scheduled", userId],
  userScheduledOne: (userId: string, id: string) => ["user_scheduled", userId, id],
  scheduledTurn: () => ["scheduled_turn"],
  pins: (channelId: string) => ["pins", channelId],
  pin: (channelId: string, messageId: string) => ["pins", channelId, messageId],
  teamCommands: (teamId: string) => ["team_commands", teamId],
  teamCommand: (teamId: string, command: string) => ["team_commands", teamId, command],
  teamCommandsVersion: (teamId: string) => ["team_commands_version", teamId],
  audits: (teamId: string) => ["audit", teamId],
  audit: (teamId: string, entryId: string) => ["audit", teamId, entryId],
  rateCounts: () => ["rate"],
  rateCount: (window: number, name: string) => ["rate", window, name],
  probe: () => ["up"],
  appKeyCheck: () => ["app_key_check"],
  serviceBaseUrl: () => ["service", "base_url"],
  serviceDeno: () => ["service", "deno"],
  serviceInstances: () => ["service", "instances"],
  serviceInstance: (instanceId: string) => ["service", "instances", instanceId],
} satisfies Record<string, (...args: never[]) => Deno.KvKey>;

/** What an app's Socket Mode envelopes are counted by. */
type SocketCount = "queued" | "acked" | "dropped";

/** Outbox entries are kept this long so a delivery can be redelivered by hand. */
export const EVENT_TTL_MS = 30 * 24 * 3_600_000;
