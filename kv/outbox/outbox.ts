import type { AppEventType, EventType, OutboxEvent } from "../../core/types.ts";
import type { DeliveryJob } from "../../core/webhook_records.ts";
import type { Dispatcher } from "../../core/dispatcher.ts";
import { newId } from "../../core/ids.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import type {
  Handed,
  Heard,
  Plan,
  PlannedEvent,
  QueuedSocket,
  SocketsHere,
} from "../store/plan.ts";
import { queueSocketEvent, socketListenerOf } from "../apps/socket_outbox.ts";
import { enqueue, firstJob, hand, signal } from "./job_moves.ts";

export interface EventDraft {
  type: EventType;
  team_id: string;
  channel_id: string;
  data: unknown;
  /**
   * Routing only, never stored: the metadata a message event's message carries (carried, for a
   * delete), and the app that posted it, which apps' `metadata_subscriptions` are matched on.
   */
  metadata_of?: { event_type: string; app_id: string | null };
}

/** Where an event happened, as the feed's indexes need it: not part of the event itself. */
export interface EventPlace {
  /** Whether every human of the team sees the channel: public and not direct. */
  open: boolean;
}

/**
 * The room this process's delivery engine has for the jobs of its own commits: the store leases
 * such jobs to it in the same commit, without a read, while its window has room.
 */
export interface JobRoom {
  window: Pick<Dispatcher, "reserve" | "release">;
  /** How long a lease taken now lasts. */
  leaseMs: number;
  /** Whether one more first attempt may wait in its record, leased here, for the window's room. */
  mayWait(): boolean;
}

/**
 * The mutations an event puts into a commit for `subscriptions` that hear it, at most: the
 * event, its team, channel and open indexes and the delivery signal, and per subscription its
 * job and job count. The team's stream markers are shared by the commit's events (a batch's
 * few, see kv/stream/stream_markers.ts).
 */
export const eventWrites = (subscriptions: number): number => 6 + 2 * subscriptions;

/** The events that hold a message as it was then (`data` is the Message). */
const CARRYING = new Set(["message.created", "message.updated", "poll.closed"]);

/**
 * The message whose text an event carries, or null: a message.created, message.updated or
 * poll.closed event holds the message (`data.id`) as it was then. Deleting that message rewrites such events
 * (domain/messages/erasure.ts), found through `["message_events", ...]`.
 */
export function carriedMessageId(event: Pick<OutboxEvent, "type" | "data">): string | null {
  if (!CARRYING.has(event.type)) return null;
  const id = (event.data as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : null;
}

/**
 * Adds an event to a plan (the transactional outbox), with the subscriptions that hear it
 * (domain/webhooks/audience.ts decides which): the store writes it, its indexes and one delivery job per
 * subscription in the same commit (`writePlannedEvents`). The change, its event and its jobs
 * then exist together or not at all.
 */
export function addEvent(
  op: Plan,
  heard: Heard[],
  { open, metadata_of: _routing, ...draft }: EventDraft & EventPlace,
): OutboxEvent {
  const now = Date.now();
  const event: OutboxEvent = {
    id: newId(now),
    ...draft,
    created_at: new Date(now).toISOString(),
  };
  op.event({ event, open, expireIn: EVENT_TTL_MS, heard });
  return event;
}

/**
 * Adds an event addressed to one app's listener (`heard`) alone: delivered as any other, but
 * listed in no feed, stream or index (a person opened the app's Home).
 */
export function addAppEvent(
  op: Plan,
  heard: Heard[],
  draft: Omit<EventDraft, "type"> & { type: AppEventType },
): OutboxEvent {
  const now = Date.now();
  const event: OutboxEvent = {
    id: newId(now),
    ...draft,
    created_at: new Date(now).toISOString(),
    listed: false,
  };
  op.event({ event, open: false, expireIn: EVENT_TTL_MS, heard });
  return event;
}

/**
 * Gives the events of `plan` that carry message `m` its `ts`, which its append assigns only as it
 * commits (kv/store/appender.ts): the event carries the message as stored.
 */
export function stampMessage(plan: Plan | undefined, m: { id: string; ts?: string }): void {
  for (const planned of plan?.events ?? []) {
    if (carriedMessageId(planned.event) !== m.id) continue;
    planned.event = { ...planned.event, data: { ...planned.event.data as object, ts: m.ts } };
  }
}

/** An event written again as it was (a move between stores): no jobs. */
export function writeEvent(
  op: Plan,
  event: OutboxEvent,
  { open, expireIn }: EventPlace & { expireIn: number },
): void {
  op.event({ event, open, expireIn, heard: [] });
}

/**
 * First attempts one handed-jobs record holds at most: what one commit may turn into jobs (two
 * mutations each, kv/outbox/handed_jobs.ts) and a value may hold, with room to spare. An event more
 * subscriptions hear leaves the rest as free jobs.
 */
export const HANDED_MAX = 200;

/**
 * Writes a plan's events into the commit about to be made: each event, its indexes (the team's,
 * the channel's, the open events' when every human of the team sees it, and the message's whose
 * text it carries), and its delivery work. The first attempts this process's engine has room for,
 * or may keep waiting for room, are leased to it in one handed-jobs record per event (instead of a
 * job and a count per subscription: the commit a post waits for stays small), to be handed over
 * once the commit lands; the rest are written as free jobs, with the delivery signal that engines
 * of every process watch (kv/outbox/backlog.ts). Returns what is handed over.
 */
export function writePlannedEvents(
  op: Deno.AtomicOperation,
  planned: PlannedEvent[],
  { room, socketsHere }: { room: JobRoom | undefined; socketsHere: SocketsHere | null },
): { handed: Handed[]; sockets: QueuedSocket[] } {
  const handed: Handed[] = [];
  const sockets: QueuedSocket[] = [];
  const now = Date.now();
  for (const { event, open, expireIn, heard } of planned) {
    const kept = { expireIn };
    op.set(keys.event(event.id), event, kept);
    if (event.listed !== false) writeIndexes(op, { event, open, kept });
    if (heard.length === 0) continue;
    const webhooks = queueSockets(op, { event, heard, socketsHere, into: sockets });
    if (webhooks.length === 0) continue;
    const leaseUntil = now + (room?.leaseMs ?? 0);
    const [jobs, waiting]: DeliveryJob[][] = [[], []];
    let free = false;
    // Job moves "hand", "wait" and "enqueue" (core/job_states.ts), as the window has room.
    for (const { id, version } of webhooks) {
      const handing = room && jobs.length + waiting.length < HANDED_MAX;
      if (handing && room.window.reserve(id)) jobs.push(firstJob(event, id, leaseUntil, version));
      else if (handing && room.mayWait()) waiting.push(firstJob(event, id, leaseUntil, version));
      else {
        enqueue(op, firstJob(event, id, null, version));
        free = true;
      }
    }
    if (jobs.length + waiting.length > 0) {
      const record = hand(op, { event, jobs: [...jobs, ...waiting], leaseUntil });
      handed.push({ event, jobs, waiting, record });
    }
    if (free) signal(op);
  }
  return { handed, sockets };
}

/** An event's places in its team's and channel's feeds, and its message's list of events. */
function writeIndexes(
  op: Deno.AtomicOperation,
  { event, open, kept }: { event: OutboxEvent; open: boolean; kept: { expireIn: number } },
) {
  const entry = { type: event.type, channel_id: event.channel_id };
  op.set(keys.teamEvent(event.team_id, event.id), entry, kept)
    .set(keys.channelEvent(event.channel_id, event.id), { type: event.type }, kept);
  if (open) op.set(keys.openEvent(event.team_id, event.id), entry, kept);
  const carried = carriedMessageId(event);
  if (carried) op.set(keys.messageEvent(carried, event.id), null, kept);
}

/**
 * Queues the event for the Socket Mode listeners among `heard` (kv/apps/socket_queue.ts): no job, it
 * waits for the app's connections. Returns the rest, the subscriptions that get delivery jobs.
 */
function queueSockets(
  op: Deno.AtomicOperation,
  { event, heard, socketsHere, into }: {
    event: OutboxEvent;
    heard: Heard[];
    socketsHere: SocketsHere | null;
    into: QueuedSocket[];
  },
): Heard[] {
  const rest: Heard[] = [];
  for (const h of heard) {
    const listener = socketListenerOf(h);
    if (!listener) {
      rest.push(h);
      continue;
    }
    const claimed = socketsHere?.(listener.app_id) ?? false;
    const record = queueSocketEvent(op, { event, subscriptionId: h.id, listener, claimed });
    into.push({ appId: listener.app_id, eventId: event.id, subscriptionId: h.id, claimed, record });
  }
  return rest;
}

/** Gives back the room of jobs leased in a commit that did not land. */
export function releaseHanded(room: JobRoom | undefined, handed: Handed[]): void {
  for (const { jobs } of handed) for (const job of jobs) room?.window.release(job.subscription_id);
}
