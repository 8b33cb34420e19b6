import type { Ctx } from "../domain/context.ts";
import type { OutboxEvent } from "../domain/types.ts";
import type { Redelivery, Subscription } from "../domain/webhook_records.ts";
import { dropIfUnchanged } from "../kv/deliveries.ts";
import { keys } from "../kv/keys.ts";
import type { DeliveryJob } from "../kv/outbox.ts";
import type { Connector } from "./connector.ts";
import type { LatestSubscriptions, RecentEvents } from "./latest.ts";
import type { Recorder } from "./record.ts";
import type { SigningKeys } from "./secrets.ts";
import { deliveryHeaders, envelope, type Signer } from "./sign.ts";
import { type AttemptOutcome, send } from "./send.ts";
import type { Resolver } from "./ssrf.ts";

/** A wake-up for the right attempt this much before its time still runs it (clock skew). */
const EARLY_MS = 1_000;
/** Attempts sent but not yet recorded beyond which a task keeps its slot until recorded. */
const MAX_UNRECORDED = 256;

/** What a task leaves behind when it gives up its slot: the recording still under way. */
export type Sent = { rest?: Promise<void> } | void;

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
  resolver?: Resolver;
}

/**
 * How long this process trusts its copy of an active subscription without reading it again.
 * Its own enables, rotations and deletes drop the copy at once (onSubscriptionChanged); this
 * bounds how late a rotation by another process (the CLI) is seen, which costs nothing as the
 * old secret stays valid for a day. A copy that is not active is never trusted: the CLI may
 * have enabled it since, and the job in hand says it was routed as active.
 */
const TRUST_COPY_MS = 10_000;

/**
 * What woke a job: the attempt it is for, and what is at hand: the event, and the job itself
 * when this process just committed or listed it.
 */
export interface JobWake {
  attempt: number;
  event?: OutboxEvent;
  job?: Deno.KvEntry<DeliveryJob>;
}

/**
 * Attempts a delivery job if it still exists and is due: the job key is the truth, whatever
 * woke us (the local commit hook, a queue message, the sweeper) may be stale or repeated. A
 * wake-up for another attempt than the job's next one is stale: that attempt was made already.
 * Reads only what is not at hand, in one call; on the local path that is nothing at all.
 */
export async function runJob(
  deps: AttemptDeps,
  subscriptionId: string,
  eventId: string,
  wake: JobWake,
): Promise<Sent> {
  const copy = deps.latest.recent(subscriptionId, TRUST_COPY_MS);
  const known = copy?.value.status === "active" ? copy : undefined;
  const atHand = wake.event ?? deps.events.get(eventId);
  const wanted: Deno.KvKey[] = [];
  if (!wake.job) wanted.push(keys.job(subscriptionId, eventId));
  if (!known) wanted.push(keys.webhook(subscriptionId));
  // With only the event missing (a backlog the sweeper found), the other subscriptions' jobs
  // for it are likely asking too: they share one read.
  const shared = atHand ?? (wanted.length === 0 ? deps.events.load(deps.ctx.kv, eventId) : null);
  if (!shared) wanted.push(keys.event(eventId));
  const read = wanted.length > 0 ? await deps.ctx.kv.getMany(wanted) : [];
  const job = wake.job ?? read.shift() as Deno.KvEntryMaybe<DeliveryJob>;
  const sub = known ?? deps.latest.freshest(read.shift() as Deno.KvEntryMaybe<Subscription>);
  const event = shared ? await shared : (read.shift() as Deno.KvEntryMaybe<OutboxEvent>).value;
  if (event) deps.events.add(event);
  if (job.versionstamp === null) return;
  if (wake.attempt !== job.value.attempt) return;
  if (Date.parse(job.value.next_attempt_at) > Date.now() + EARLY_MS) return;
  return await attemptAndRecord(deps, sub, job, event ?? null, job.value.attempt);
}

/** Makes the one attempt of a redelivery asked for by hand, if it is still pending. */
export async function runRedelivery(
  deps: AttemptDeps,
  subscriptionId: string,
  redeliveryId: string,
): Promise<Sent> {
  const { kv } = deps.ctx;
  const [pending, sub] = await kv.getMany<[Redelivery, Subscription]>([
    keys.redelivery(subscriptionId, redeliveryId),
    keys.webhook(subscriptionId),
  ]);
  if (pending.versionstamp === null) return;
  const event = await kv.get<OutboxEvent>(keys.event(pending.value.event_id));
  return await attemptAndRecord(deps, deps.latest.freshest(sub), pending, event.value, null);
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
  const startedAt = Date.now();
  const outcome = await deliver(deps, sub.value, event, startedAt);
  const id = sub.value.id;
  // Touched once recorded: a sweep running meanwhile must not forget it before it can prune.
  const rest = deps.recorder.record({
    subscriptionId: id,
    event,
    pending,
    attempt,
    outcome,
    startedAt,
  }).finally(() => deps.touched.add(id));
  // A failure keeps its slot until recorded, so the subscription's next attempt sees the
  // streak (and a disable) it leads to.
  if (!outcome.succeeded || deps.recorder.backlog > MAX_UNRECORDED) await rest;
  return { rest };
}

/** Signs and sends one attempt. */
async function deliver(
  deps: AttemptDeps,
  sub: Subscription,
  event: OutboxEvent,
  nowMs: number,
): Promise<AttemptOutcome> {
  const body = envelope(event);
  let signers: Signer[];
  try {
    signers = await deps.signingKeys.for(sub, nowMs);
  } catch {
    return {
      succeeded: false,
      response_status: null,
      error: "the signing secret could not be decrypted (APP_KEY changed?)",
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
