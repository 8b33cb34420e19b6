import type { EventType, OutboxEvent } from "../core/types.ts";
import type { DeliveryJob } from "../core/webhook_records.ts";
import { newId } from "../core/ids.ts";
import { afterCommit } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";
import { markPending } from "./stream_log.ts";

/** A subscription that hears an event, with its route's versionstamp as the write saw it. */
export interface Heard {
  id: string;
  version: string;
}

export interface EventDraft {
  type: EventType;
  team_id: string;
  channel_id: string;
  data: unknown;
}

/** Where an event happened, as the feed's indexes need it: not part of the event itself. */
export interface EventPlace {
  /** Whether every human of the team sees the channel: public and not direct. */
  open: boolean;
}

/**
 * This process's delivery engine, as the outbox sees it: the engine takes the jobs of the
 * process's own commits at once, without a read, while its window has room.
 */
export interface LocalDelivery {
  /** Promises room for a job of each subscription; the ids it could take (possibly none). */
  claim(subscriptionIds: string[]): string[];
  /** The claimed jobs of a commit that landed; `versionstamp` is the commit's (so theirs). */
  take(handed: Handed[], versionstamp: string): void;
  /** Gives back the room of claimed jobs whose commit failed. */
  release(subscriptionIds: string[]): void;
  /** Until when a claimed job is leased to this process, from `now`. */
  leaseUntil(now: number): number;
  /** Redeliveries of the subscription were committed here: take them now. */
  wake(subscriptionId: string): void;
}

const engines = new WeakMap<Deno.Kv, LocalDelivery>();

/** This process's engine on `kv`, if it runs one. */
export const localDelivery = (kv: Deno.Kv): LocalDelivery | undefined => engines.get(kv);

/** Lets this process's engine take the jobs of events committed to `kv` here. */
export function attachDelivery(kv: Deno.Kv, engine: LocalDelivery): () => void {
  engines.set(kv, engine);
  return () => engines.get(kv) === engine && engines.delete(kv);
}

/**
 * The mutations `addEvent` puts into a commit for an event `subscriptions` hear, at most: the
 * event, its team, channel and open indexes and the delivery signal, and per subscription its
 * job and job count. The team's stream markers are shared by the commit's events (a batch's
 * few, see stream_log).
 */
export const eventWrites = (subscriptions: number): number => 5 + 2 * subscriptions;

/**
 * Adds an event to a commit (the transactional outbox): the event itself, its indexes (the
 * team's, the channel's, and the open events' when every human of the team sees it), and one
 * delivery job per subscription that hears it (domain/audience.ts decides which). Jobs this
 * process's engine claims are written leased to it and handed over once the commit lands; the
 * rest are written free, with the delivery signal that engines of every process watch
 * (kv/backlog.ts). The change, its event and its jobs then exist together or not at all.
 */
export function addEvent(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  heard: Heard[],
  { open, ...draft }: EventDraft & EventPlace,
): OutboxEvent {
  const subscription_ids = heard.map((h) => h.id);
  const now = Date.now();
  const created_at = new Date(now).toISOString();
  const event: OutboxEvent = { id: newId(now), ...draft, created_at, subscription_ids };
  writeEvent(kv, op, event, { open, expireIn: EVENT_TTL_MS });
  if (subscription_ids.length === 0) return event;
  const engine = engines.get(kv);
  const claimed = new Set(engine?.claim(subscription_ids) ?? []);
  const jobs: Record<string, DeliveryJob> = {};
  for (const { id, version } of heard) {
    jobs[id] = firstJob(event, id, claimed.has(id) ? engine!.leaseUntil(now) : null, version);
    op.set(keys.job(id, event.id), jobs[id]).sum(keys.jobsCreated(id), 1n);
  }
  if (claimed.size > 0) handOver(op, engine!, { event, jobs: [...claimed].map((id) => jobs[id]) });
  if (claimed.size < subscription_ids.length) op.set(keys.deliverySignal(), now);
  return event;
}

/**
 * An event, its indexes (the team's, the channel's, and the open events' when every human of
 * the team sees it) and its place in the team's stream log, into a commit.
 */
export function writeEvent(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  event: OutboxEvent,
  { open, expireIn }: EventPlace & { expireIn: number },
): void {
  const kept = { expireIn };
  const entry = { type: event.type, channel_id: event.channel_id };
  op.set(keys.event(event.id), event, kept)
    .set(keys.teamEvent(event.team_id, event.id), entry, kept)
    .set(keys.channelEvent(event.channel_id, event.id), { type: event.type }, kept);
  if (open) op.set(keys.openEvent(event.team_id, event.id), entry, kept);
  markPending(kv, op, event.team_id, event);
}

/** The job an event starts with for a matching subscription. */
export const firstJob = (
  event: OutboxEvent,
  subscriptionId: string,
  leaseUntil: number | null,
  subscriptionVersion: string,
): DeliveryJob => ({
  subscription_id: subscriptionId,
  event_id: event.id,
  attempt: 1,
  next_attempt_at: event.created_at,
  created_at: event.created_at,
  lease_until: leaseUntil,
  subscription_version: subscriptionVersion,
});

/** An event's jobs written leased to this process's engine. */
export interface Handed {
  event: OutboxEvent;
  jobs: DeliveryJob[];
}

/**
 * Hands an event's claimed jobs to the engine when the commit lands, or gives their room back
 * when it does not. Nothing is lost if the process dies in between: the
 * jobs are committed, and their lease runs out for another engine to take them.
 */
function handOver(op: Deno.AtomicOperation, engine: LocalDelivery, handed: Handed) {
  afterCommit(op, (versionstamp) => {
    if (!versionstamp) return engine.release(handed.jobs.map((j) => j.subscription_id));
    // After the writer's own continuation: the answer to a post goes out before its deliveries
    // start, not after the first steps of each (a hundred of them, for a busy channel).
    setTimeout(() => engine.take([handed], versionstamp), 0);
  });
}
