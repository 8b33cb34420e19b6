import type { Delivery, Redelivery, Subscription } from "../domain/webhook_records.ts";
import type { OutboxEvent } from "../domain/types.ts";
import { addAudit, type AuditDraft } from "./audit.ts";
import { commitOrThrow } from "./commit.ts";
import { EVENT_TTL_MS, keys } from "./keys.ts";
import { queuesAvailable } from "./queue_support.ts";
import { type DeliveryJob, localDelivery } from "./outbox.ts";
import { putRoute } from "./webhooks.ts";

/** Wakes the engine when a job's next attempt is due. */
export interface RetryQueued {
  kind: "retry";
  subscription_id: string;
  event_id: string;
  attempt: number;
}

/** Wakes the engine for a redelivery asked for by hand. */
export interface RedeliveryQueued {
  kind: "redeliver";
  subscription_id: string;
  redelivery_id: string;
}

/** A subscription's most recent attempts, newest first. */
export async function recentDeliveries(
  kv: Deno.Kv,
  subscriptionId: string,
  limit: number,
): Promise<Delivery[]> {
  const out: Delivery[] = [];
  const entries = kv.list<Delivery>({ prefix: keys.deliveries(subscriptionId) }, {
    reverse: true,
    limit,
  });
  for await (const e of entries) out.push(e.value);
  return out;
}

export async function getDelivery(kv: Deno.Kv, subscriptionId: string, deliveryId: string) {
  return (await kv.get<Delivery>(keys.delivery(subscriptionId, deliveryId))).value;
}

/**
 * Records a redeliver request and wakes the engine for it, provided the subscription is still
 * as read (active). False when it changed since.
 */
export async function insertRedelivery(
  kv: Deno.Kv,
  subscription: Deno.KvEntry<Subscription>,
  redelivery: Redelivery,
  /** An event made for this one attempt (a test ping), written with it. */
  event?: OutboxEvent,
): Promise<boolean> {
  const key = keys.redelivery(redelivery.subscription_id, redelivery.id);
  const wake: RedeliveryQueued = {
    kind: "redeliver",
    subscription_id: redelivery.subscription_id,
    redelivery_id: redelivery.id,
  };
  const op = kv.atomic().check(subscription).set(key, redelivery)
    .set(keys.deliverySignal(), Date.now());
  if (event) op.set(keys.event(event.id), event, { expireIn: EVENT_TTL_MS });
  if (queuesAvailable(kv)) {
    op.enqueue(wake, { keysIfUndelivered: [keys.undelivered(redelivery.id)] });
  }
  const { ok } = await op.commit();
  if (ok) localDelivery(kv)?.wake(redelivery.subscription_id);
  return ok;
}

/**
 * Records many redeliveries of one subscription at once (a recover), and wakes the engines. Not
 * checked against the subscription: one deleted or disabled meanwhile drops them unattempted.
 */
export async function insertRedeliveries(
  kv: Deno.Kv,
  subscriptionId: string,
  redeliveries: Redelivery[],
): Promise<void> {
  const op = kv.atomic().set(keys.deliverySignal(), Date.now());
  for (const r of redeliveries) op.set(keys.redelivery(subscriptionId, r.id), r);
  await commitOrThrow(op, "recover");
  localDelivery(kv)?.wake(subscriptionId);
}

/** A job or redelivery an attempt settles: deleted, or moved to its next attempt. */
export interface Settlement {
  pending: Deno.KvEntry<DeliveryJob | Redelivery>;
  retry?: { job: DeliveryJob; delayMs: number };
  /** Whether the attempt that settles it succeeded: recover re-sends what never did. */
  succeeded: boolean;
}

/** How long an event counts as failed for recover: its window (7 days), and a day to spare. */
const FAILED_KEEP_MS = 8 * 24 * 3_600_000;

/** Marks an event as failed for good to a subscription, for a later recover. */
export function markFailed(op: Deno.AtomicOperation, subscriptionId: string, eventId: string) {
  op.set(keys.failedEvent(subscriptionId, eventId), { failed_at: new Date().toISOString() }, {
    expireIn: FAILED_KEEP_MS,
  });
}

/** Everything some attempts of one subscription change, written by `commitAttempt`. */
export interface AttemptCommit {
  /** The subscription as last known (checked), and what it becomes. */
  subscription: Deno.KvEntry<Subscription>;
  next: Subscription;
  deliveries: Delivery[];
  /** Each checked: one that changed meanwhile makes the commit fail. */
  settle: Settlement[];
  audit?: AuditDraft;
}

/**
 * The one commit after attempts: their Delivery records, the subscription's stats (and route,
 * when the status changes), and each job deleted or moved to its next attempt with the queue
 * message that will wake it. Null on a conflict: re-read and try again.
 */
export async function commitAttempt(kv: Deno.Kv, c: AttemptCommit): Promise<string | null> {
  const sub = c.next;
  const op = kv.atomic()
    .check(c.subscription)
    .set(keys.webhook(sub.id), sub);
  if (sub.status !== c.subscription.value.status) {
    putRoute(op, sub);
  }
  for (const d of c.deliveries) op.set(keys.delivery(sub.id, d.id), d);
  let settled = 0n;
  for (const { pending, retry, succeeded } of c.settle) {
    op.check(pending);
    if (!retry) {
      op.delete(pending.key);
      if (isJob(pending)) settled++;
      // A job given up is failed for good, until a redelivery of its event succeeds.
      if (isJob(pending) && !succeeded) markFailed(op, sub.id, pending.value.event_id);
      if (!isJob(pending) && succeeded) op.delete(keys.failedEvent(sub.id, pending.value.event_id));
      continue;
    }
    const wake: RetryQueued = {
      kind: "retry",
      subscription_id: retry.job.subscription_id,
      event_id: retry.job.event_id,
      attempt: retry.job.attempt,
    };
    op.set(pending.key, retry.job);
    if (queuesAvailable(kv)) {
      const lost = keys.undelivered(`${retry.job.subscription_id}/${retry.job.event_id}`);
      op.enqueue(wake, { delay: retry.delayMs, keysIfUndelivered: [lost] });
    }
  }
  if (settled > 0n) op.sum(keys.jobsSettled(sub.id), settled);
  if (c.audit) addAudit(op, c.audit);
  const res = await op.commit();
  return res.ok ? res.versionstamp : null;
}

const isJob = (entry: Deno.KvEntry<unknown>) => entry.key[0] === keys.jobs()[0];

/** Deletes a job or redelivery that can no longer be attempted, if it is still as read. */
export async function dropIfUnchanged(kv: Deno.Kv, entry: Deno.KvEntry<unknown>): Promise<void> {
  const op = kv.atomic().check(entry).delete(entry.key);
  if (isJob(entry)) op.sum(keys.jobsSettled(entry.key[1] as string), 1n);
  await op.commit();
}

/** A job or a redelivery: work one process at a time may hold under a lease. */
export type Leasable = DeliveryJob | Redelivery;

/** Whether `entry` is free to lease at `now`: nobody holds it, or the holder's lease ran out. */
export const isFree = (entry: Deno.KvEntry<Leasable>, now: number) =>
  (entry.value.lease_until ?? 0) <= now;

/** KV allows 10 checks per commit: one per entry leased. */
const LEASE_BATCH = 10;

/**
 * Leases entries as read, until `until`: each is taken only if unchanged since it was read, so
 * of two processes that found the same job, one gets it. Returns the leased entries as they now
 * stand; an entry someone else changed meanwhile is left out.
 */
export async function lease(
  kv: Deno.Kv,
  entries: Deno.KvEntry<Leasable>[],
  until: number,
): Promise<Deno.KvEntry<Leasable>[]> {
  const out: Deno.KvEntry<Leasable>[] = [];
  for (let i = 0; i < entries.length; i += LEASE_BATCH) {
    const batch = entries.slice(i, i + LEASE_BATCH);
    const won = await leaseTogether(kv, batch, until);
    if (won) out.push(...won);
    else if (batch.length > 1) {
      // One of them changed: each goes alone, so the others are still taken.
      for (const e of batch) out.push(...(await leaseTogether(kv, [e], until) ?? []));
    }
  }
  return out;
}

async function leaseTogether(kv: Deno.Kv, batch: Deno.KvEntry<Leasable>[], until: number) {
  const op = kv.atomic();
  const next = batch.map((e) => ({ ...e.value, lease_until: until }));
  batch.forEach((e, i) => op.check(e).set(e.key, next[i]));
  const res = await op.commit();
  if (!res.ok) return null;
  return batch.map((e, i) => ({ key: e.key, value: next[i], versionstamp: res.versionstamp }));
}

/** Frees leased entries this process will not attempt after all (it is stopping). */
export async function unlease(kv: Deno.Kv, entries: Deno.KvEntry<Leasable>[]): Promise<void> {
  for (let i = 0; i < entries.length; i += LEASE_BATCH) {
    const op = kv.atomic();
    for (const e of entries.slice(i, i + LEASE_BATCH)) {
      op.check(e).set(e.key, { ...e.value, lease_until: null });
    }
    await op.commit();
  }
}

/** A subscription's pending jobs in event order, from just after `after` when given. */
export function listJobs(
  kv: Deno.Kv,
  subscriptionId: string,
  after: Deno.KvKey | null,
  limit: number,
): Deno.KvListIterator<DeliveryJob> {
  const prefix = keys.jobs(subscriptionId);
  const selector = after ? { prefix, start: [...after, ""] } : { prefix };
  return kv.list<DeliveryJob>(selector, { limit, batchSize: Math.min(limit, 500) });
}

/** Events failed for good to a subscription whose ids are at or after `fromId`, in id order. */
export function listFailedEvents(kv: Deno.Kv, subscriptionId: string, fromId: string) {
  const prefix = keys.failedEvents(subscriptionId);
  return kv.list({ prefix, start: [...prefix, fromId] });
}

/** A subscription's pending redeliveries. */
export function listRedeliveries(kv: Deno.Kv, subscriptionId: string) {
  return kv.list<Redelivery>({ prefix: keys.redeliveries(subscriptionId) });
}

/** How much delivery work waits in KV: the pending jobs, and when the oldest was made. */
export interface Backlog {
  pending: number;
  oldestCreatedAt: string | null;
}

const countOf = (e: Deno.KvEntryMaybe<Deno.KvU64>) => e.value?.value ?? 0n;

/**
 * The backlog without a scan: per subscription, the jobs made minus those settled (both summed
 * in the commits that make and settle them), and its first job, the oldest (ids sort by time).
 * A few reads per subscription, whatever the backlog.
 */
export async function measureBacklog(kv: Deno.Kv): Promise<Backlog> {
  let pending = 0n;
  let oldest: string | null = null;
  for (const id of await listSubscriptionIds(kv)) {
    const [created, settled] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([
      keys.jobsCreated(id),
      keys.jobsSettled(id),
    ]);
    const open = countOf(created) - countOf(settled);
    if (open > 0n) pending += open;
    for await (const e of kv.list<DeliveryJob>({ prefix: keys.jobs(id) }, { limit: 1 })) {
      if (oldest === null || e.value.created_at < oldest) oldest = e.value.created_at;
    }
  }
  return { pending: Number(pending), oldestCreatedAt: oldest };
}

/** The delivery signal's entry: its versionstamp moves whenever work is left for any engine. */
export const readSignal = (kv: Deno.Kv) => kv.get(keys.deliverySignal());

/** Forgets queue messages the queue gave up on: the sweeper finds their jobs by itself. */
export async function clearUndelivered(kv: Deno.Kv): Promise<void> {
  const op = kv.atomic();
  let n = 0;
  for await (const e of kv.list({ prefix: keys.undeliveredAll() }, { limit: 500 })) {
    op.delete(e.key);
    n++;
  }
  if (n) await op.commit();
}

/** Deletes a subscription's attempts beyond the `keep` most recent. Returns how many. */
export async function pruneDeliveries(
  kv: Deno.Kv,
  subscriptionId: string,
  keep: number,
): Promise<number> {
  const stale: Deno.KvKey[] = [];
  let seen = 0;
  for await (
    const e of kv.list({ prefix: keys.deliveries(subscriptionId) }, { reverse: true })
  ) {
    if (++seen > keep) stale.push(e.key);
  }
  for (let i = 0; i < stale.length; i += 500) {
    const op = kv.atomic();
    for (const key of stale.slice(i, i + 500)) op.delete(key);
    await op.commit();
  }
  return stale.length;
}

/** Every subscription id, for pruning at start. */
export async function listSubscriptionIds(kv: Deno.Kv): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of kv.list({ prefix: keys.webhooks() })) ids.push(e.key[1] as string);
  return ids;
}
