import type { Ctx } from "../domain/context.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { Redelivery, Subscription } from "../core/webhook_records.ts";
import { dropIfUnchanged } from "../kv/settlement.ts";
import type { DeliveryJob } from "../core/webhook_records.ts";
import type { Connector } from "./connector.ts";
import type { LatestSubscriptions, RecentEvents } from "./latest.ts";
import type { Recorder } from "./record.ts";
import type { SigningKeys } from "./secrets.ts";
import { deliveryHeaders, type Signer } from "./sign.ts";
import { type AttemptOutcome, send } from "./send.ts";
import type { Resolver } from "../core/dns.ts";
import type { Leases } from "./leases.ts";
import { log } from "../core/log.ts";

/** Attempts sent but not yet recorded beyond which a task keeps its slot until recorded. */
const MAX_UNRECORDED = 256;

/** What a task leaves behind when it gives up its slot: the recording still under way. */
export type Sent = { rest?: Promise<void>; succeeded?: boolean; slow?: boolean } | void;

/**
 * A receiver this slow to answer lets its subscription have more attempts in flight. Quicker
 * ones are not the limit: this process's CPU is, and more at once would only take it from the
 * rest (posting, above all). Kept well above what a busy event loop adds to a fast answer.
 */
const SLOW_RECEIVER_MS = 100;

/** What attempts need, shared by every attempt of the process. */
export interface AttemptDeps {
  ctx: Ctx;
  connector: Connector;
  signingKeys: SigningKeys;
  latest: LatestSubscriptions;
  events: RecentEvents;
  recorder: Recorder;
  /** Subscriptions with new Delivery records since the sweeper last pruned. */
  touched: Set<string>;
  leases: Leases;
  resolver?: Resolver;
  /** Told of every attempt's outcome and duration (the metrics). */
  observe?: (outcome: AttemptOutcome, durationMs: number) => void;
}

/**
 * Attempts a job this process holds the lease of (`job`, as leased), acting on the subscription
 * as read lately (see LatestSubscriptions.fresh), so it honours what any process changed
 * (deleted, disabled, rotated), and on the event from this process's copy where it has one
 * (events never change). A lease too short to cover the attempt is renewed first, or the job
 * is left to whoever took it meanwhile.
 */
export async function runJob(
  deps: AttemptDeps,
  job: Deno.KvEntry<DeliveryJob>,
  event?: OutboxEvent,
): Promise<Sent> {
  const { kv } = deps.ctx;
  const [sub, found] = await Promise.all([
    deps.latest.fresh(kv, job.value.subscription_id, job.value.subscription_version),
    event ?? deps.events.load(kv, job.value.event_id),
  ]);
  const held = await deps.leases.keep(job);
  if (!held) return;
  return await attemptAndRecord(deps, sub, held, found, held.value.attempt);
}

/** Makes the one attempt of a redelivery asked for by hand, if it is still pending. */
export async function runRedelivery(
  deps: AttemptDeps,
  redelivery: Deno.KvEntry<Redelivery>,
): Promise<Sent> {
  const { kv } = deps.ctx;
  const [sub, event] = await Promise.all([
    deps.latest.fresh(kv, redelivery.value.subscription_id, redelivery.value.subscription_version),
    deps.events.load(kv, redelivery.value.event_id),
  ]);
  const held = await deps.leases.keep(redelivery);
  if (!held) return;
  return await attemptAndRecord(deps, sub, held, event, null);
}

async function attemptAndRecord(
  deps: AttemptDeps,
  sub: Deno.KvEntry<Subscription> | null,
  pending: Deno.KvEntry<DeliveryJob | Redelivery>,
  event: OutboxEvent | null,
  attempt: number | null,
): Promise<Sent> {
  if (!sub || sub.value.status !== "active" || !event) {
    await dropIfUnchanged(deps.ctx.kv, pending);
    return;
  }
  event = await deps.events.asItIsNow(deps.ctx.kv, event, attempt === 1);
  const startedAt = Date.now();
  const outcome = await deliver(deps, sub.value, event, startedAt);
  const id = sub.value.id;
  const durationMs = Date.now() - startedAt;
  log[outcome.succeeded ? "info" : "warn"]("delivery attempt", {
    subscription_id: id,
    event_id: event.id,
    // A test ping is sent as a redelivery of an event made for it alone.
    attempt: attempt ?? (event.type === "ping" ? "test" : "redelivery"),
    status: outcome.response_status,
    error: outcome.error,
    duration_ms: durationMs,
  });
  deps.observe?.(outcome, durationMs);
  // Touched once recorded: a sweep running meanwhile must not forget it before it can prune.
  const rest = deps.recorder.record({
    subscriptionId: id,
    event,
    pending,
    attempt,
    outcome,
    startedAt,
    durationMs,
  }).finally(() => deps.touched.add(id));
  // A failure keeps its slot until recorded, so the subscription's next attempt sees the
  // streak (and a disable) it leads to.
  if (!outcome.succeeded || deps.recorder.backlog > MAX_UNRECORDED) await rest;
  return { rest, succeeded: outcome.succeeded, slow: durationMs >= SLOW_RECEIVER_MS };
}

/** Signs and sends one attempt. */
async function deliver(
  deps: AttemptDeps,
  sub: Subscription,
  event: OutboxEvent,
  nowMs: number,
): Promise<AttemptOutcome> {
  const body = deps.events.body(event);
  let signers: Signer[];
  try {
    signers = await deps.signingKeys.for(sub, nowMs);
  } catch {
    return {
      succeeded: false,
      response_status: null,
      error: "the signing secret could not be decrypted (APP_KEY changed?)",
      response_body: null,
      retryAfterMs: null,
    };
  }
  const { webhooks } = deps.ctx.settings;
  return await send(sub.url, deliveryHeaders(event, signers, body, nowMs), body, {
    connector: deps.connector,
    timeoutMs: webhooks.timeoutMs,
    allowPrivate: webhooks.allowPrivateUrls,
    resolver: deps.resolver,
  });
}
