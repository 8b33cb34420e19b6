import type { DeliveryJob, Subscription } from "../core/webhook_records.ts";
import type { AuditAction } from "../core/types.ts";
import { addAudit, type AuditBy, type AuditDraft } from "./audit.ts";
import { getAll } from "./store/commit.ts";
import { markFailed } from "./outbox/failed_events.ts";
import { keys } from "./keys.ts";
import { settle, settleAll } from "./outbox/job_moves.ts";
import { dropRoute, putRoute } from "./routes.ts";
import type { Store } from "./store/store.ts";

/** Deletes per commit when clearing a subscription's leftovers (the KV limit is 1000). */
const DELETE_BATCH = 500;

/**
 * Creates a subscription with its route and audit entry in one commit, if the team's routes are
 * still as `routesVersion` was read with them: a count of them (the team's bound) still holds.
 */
export async function insertSubscription(
  kv: Store,
  sub: Subscription,
  routesVersion: Deno.KvEntryMaybe<unknown>,
  audit: AuditDraft,
): Promise<boolean> {
  const op = kv.atomic()
    .check({ key: keys.webhook(sub.id), versionstamp: null })
    .check({ key: keys.routesVersion(sub.team_id), versionstamp: routesVersion.versionstamp })
    .set(keys.webhook(sub.id), sub);
  putRoute(op, sub);
  addAudit(op, audit);
  return (await op.commit()).ok;
}

export async function getSubscription(kv: Store, id: string) {
  return await kv.get<Subscription>(keys.webhook(id));
}

/** A team's subscriptions, newest first (ids are UUIDv7). */
export async function listTeamSubscriptions(kv: Store, teamId: string): Promise<Subscription[]> {
  const ids: Deno.KvKey[] = [];
  for await (const e of kv.list({ prefix: keys.teamWebhooks(teamId) }, { reverse: true })) {
    ids.push(keys.webhook(e.key[2] as string));
  }
  return (await getAll<Subscription>(kv, ids)).flatMap((e) => e.value ? [e.value] : []);
}

/** How many subscriptions there are of each status, in every team. */
export async function countSubscriptionsByStatus(kv: Store): Promise<Record<string, number>> {
  const out: Record<string, number> = { active: 0, disabled: 0 };
  for await (const e of kv.list<Subscription>({ prefix: keys.webhooks() })) {
    out[e.value.status] = (out[e.value.status] ?? 0) + 1;
  }
  return out;
}

/** The audit entry of `action` by `by` on a subscription, named as it is (or was). */
const auditOf = (s: Subscription, action: AuditAction, by: AuditBy): AuditDraft => ({
  team_id: s.team_id,
  action,
  ...by,
  target_id: s.id,
  target_name: s.name,
});

/**
 * Replaces a subscription read as `entry` (and its route) in one commit, audited as `action` by
 * `by`. False when it changed since: read again and decide again.
 */
export async function replaceSubscription(
  kv: Store,
  entry: Deno.KvEntry<Subscription>,
  { next, action, by }: { next: Subscription; action: AuditAction; by: AuditBy },
): Promise<boolean> {
  const op = kv.atomic()
    .check(entry)
    .set(keys.webhook(next.id), next);
  putRoute(op, next);
  addAudit(op, auditOf(next, action, by));
  return (await op.commit()).ok;
}

/** Deletes a subscription and its route, audited as deleted by `by`. False when it changed since. */
export async function removeSubscription(
  kv: Store,
  entry: Deno.KvEntry<Subscription>,
  by: AuditBy,
): Promise<boolean> {
  const op = kv.atomic()
    .check(entry)
    .delete(keys.webhook(entry.value.id));
  dropRoute(op, entry.value);
  addAudit(op, auditOf(entry.value, "webhook.deleted", by));
  return (await op.commit()).ok;
}

/**
 * Deletes every key under `prefix`, in batches. For leftovers of a subscription that is already
 * deleted or disabled: an attempt re-reads the subscription first, so one that runs before the
 * cleanup finishes drops its job instead of sending.
 */
export async function deleteAll(kv: Store, prefix: Deno.KvKey): Promise<number> {
  let deleted = 0;
  let batch: Deno.KvKey[] = [];
  const flush = async () => {
    const op = kv.atomic();
    for (const key of batch) op.delete(key);
    await op.commit();
    deleted += batch.length;
    batch = [];
  };
  for await (const e of kv.list({ prefix })) {
    batch.push(e.key);
    if (batch.length === DELETE_BATCH) await flush();
  }
  if (batch.length) await flush();
  return deleted;
}

/** Deletes a subscription's jobs, each marked failed for good (recover can send it again). */
async function dropJobs(kv: Store, subscriptionId: string): Promise<void> {
  let batch: Deno.KvEntry<DeliveryJob>[] = [];
  const flush = async () => {
    const op = kv.atomic();
    for (const e of batch) {
      settle(op, e.key);
      markFailed(op, subscriptionId, e.value.event_id);
    }
    await op.commit();
    batch = [];
  };
  for await (const e of kv.list<DeliveryJob>({ prefix: keys.jobs(subscriptionId) })) {
    batch.push(e);
    if (batch.length === DELETE_BATCH / 2) await flush();
  }
  if (batch.length) await flush();
}

/**
 * Drops a subscription's pending jobs and redeliveries: nothing more will be attempted. Its job
 * counts then say none is pending (settled as many as were made), whatever raced the deletes.
 */
export async function dropPending(kv: Store, subscriptionId: string): Promise<void> {
  await dropJobs(kv, subscriptionId);
  await deleteAll(kv, keys.redeliveries(subscriptionId));
  for (let i = 0; i < 10; i++) {
    const created = await kv.get<Deno.KvU64>(keys.jobsCreated(subscriptionId));
    const op = kv.atomic();
    settleAll(op, created, subscriptionId);
    if ((await op.commit()).ok) return;
  }
}
