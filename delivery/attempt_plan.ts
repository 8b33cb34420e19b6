import type { Settings } from "../core/settings.ts";
import { newId } from "../core/ids.ts";
import type { Delivery, DeliveryJob, Subscription } from "../core/webhook_records.ts";
import type { HandedShare, Work } from "../kv/outbox/handed_share.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { AttemptCommit, Settlement } from "../kv/outbox/settlement.ts";
import { isLastAttempt, retryDelayMs } from "./schedule.ts";
import { retryReasonOf } from "./slack_events.ts";
import type { AttemptOutcome } from "../core/outbound/send.ts";

/**
 * A job or redelivery whose lease this process holds for this much longer is settled without a
 * check (see Settlement.checked), so a busy subscription's commits are not bound by the 10 checks
 * a commit allows. The margin covers the commit's round trip and clocks a little apart.
 */
const HELD_MARGIN_MS = 5_000;
export type Pending = Work;

/**
 * Whether settling `pending` at `now` needs a check of its own: no one else may write it until its
 * lease ends. A first attempt still in a handed-jobs record checks the record instead, once per
 * commit whatever number of its attempts the commit settles.
 */
export const needsCheck = (pending: Pending, now: number) =>
  !pending.handed && (pending.value.lease_until ?? 0) - now < HELD_MARGIN_MS;

/**
 * The checks settling `pending` adds to a commit that checks `records` already: its own where it
 * needs one, or its handed-jobs record's where the commit doesn't check that yet.
 */
export function checksFor(pending: Pending, now: number, records: Set<HandedShare>): number {
  if (!pending.handed) return needsCheck(pending, now) ? 1 : 0;
  return records.has(pending.handed) ? 0 : 1;
}

/** Where settling `pendings` in order would first take a commit past `room` checks; -1: never. */
export function pastChecks(pendings: (Pending | null)[], now: number, room: number): number {
  const records = new Set<HandedShare>();
  let checks = 0;
  return pendings.findIndex((p) => {
    if (!p) return false;
    checks += checksFor(p, now, records);
    if (p.handed) records.add(p.handed);
    return checks > room;
  });
}

/** One finished attempt, waiting to be recorded. */
export interface Attempted {
  subscriptionId: string;
  event: OutboxEvent;
  /** The job or redelivery the attempt was made for, as read before it. */
  pending: Pending;
  /** The job's attempt number; null for a redelivery by hand (never retried). */
  attempt: number | null;
  outcome: AttemptOutcome;
  startedAt: number;
  durationMs: number;
}

export const deliveryOf = (a: Attempted): Delivery => ({
  id: newId(a.startedAt),
  subscription_id: a.subscriptionId,
  event_id: a.event.id,
  event_type: a.event.type,
  attempt: a.attempt,
  succeeded: a.outcome.succeeded,
  response_status: a.outcome.response_status,
  error: a.outcome.error,
  response_body: a.outcome.response_body,
  duration_ms: a.durationMs,
  created_at: new Date(a.startedAt).toISOString(),
});

/**
 * What attempts change, applied in order: the streak (a success resets it, a failure may
 * disable the subscription) and each job (settled, or moved to its next attempt). `pending`
 * null: someone else settled that job meanwhile, leave it alone.
 */
export function planCommit(
  webhooks: Settings["webhooks"],
  sub: Deno.KvEntry<Subscription>,
  items: { a: Attempted; delivery: Delivery; pending: Pending | null }[],
  nowMs = Date.now(),
): AttemptCommit {
  const next: Subscription = {
    ...sub.value,
    records_written: (sub.value.records_written ?? 0) + items.length,
  };
  let audit: AttemptCommit["audit"];
  let trouble: AttemptCommit["trouble"];
  const half = Math.ceil(webhooks.disableAfter / 2);
  for (const { a, delivery } of items) {
    if (a.outcome.succeeded) {
      next.consecutive_failures = 0;
      next.last_success_at = delivery.created_at;
      continue;
    }
    // Attempts still in flight when the subscription was disabled don't lengthen the streak.
    if (next.status === "active" || next.consecutive_failures < webhooks.disableAfter) {
      next.consecutive_failures++;
    }
    if (next.status === "active" && next.consecutive_failures === half) {
      trouble = { stage: "half", last: delivery };
    }
    if (next.status === "active" && next.consecutive_failures >= webhooks.disableAfter) {
      next.status = "disabled";
      next.disabled_at = new Date(nowMs).toISOString();
      audit = {
        team_id: next.team_id,
        action: "webhook.disabled",
        actor_id: null,
        actor_name: "system",
        target_id: next.id,
        target_name: next.name,
      };
      trouble = { stage: "disabled", last: delivery };
    }
  }
  const settle: Settlement[] = [];
  const retryAt = new Map<Delivery, string>();
  for (const { a, pending, delivery } of items) {
    if (!pending) continue;
    const retrying = a.attempt !== null && !a.outcome.succeeded && next.status === "active" &&
      !isLastAttempt(webhooks, a.attempt);
    const checked = needsCheck(pending, nowMs);
    if (!retrying) {
      settle.push({ pending, succeeded: a.outcome.succeeded, checked });
      continue;
    }
    const delayMs = retryDelayMs(webhooks, a.attempt!, a.outcome.retryAfterMs);
    const job: DeliveryJob = {
      ...(pending.value as DeliveryJob),
      attempt: a.attempt! + 1,
      next_attempt_at: new Date(nowMs + delayMs).toISOString(),
      lease_until: null,
      ...(sub.value.app
        ? { retry_reason: retryReasonOf(a.outcome.error, a.outcome.response_status) }
        : {}),
    };
    settle.push({ pending, retry: { job, delayMs }, succeeded: false, checked });
    retryAt.set(delivery, job.next_attempt_at);
  }
  return {
    subscription: sub,
    next,
    deliveries: items.map((i) => ({
      ...i.delivery,
      next_attempt_at: retryAt.get(i.delivery) ?? null,
    })),
    settle,
    audit,
    ...(trouble && !next.app ? { trouble } : {}),
  };
}
