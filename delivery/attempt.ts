import type { Ctx } from "../domain/context.ts";
import type { OutboxEvent } from "../core/types.ts";
import {
  type DeliveryJob,
  type Redelivery,
  schemeOf,
  type Subscription,
} from "../core/webhook_records.ts";
import { dropIfUnchanged } from "../kv/outbox/settlement.ts";
import type { Connector } from "../core/outbound/connector.ts";
import type { LatestSubscriptions, RecentEvents } from "./latest.ts";
import type { Recorder } from "./record.ts";
import type { SigningKeys } from "./secrets.ts";
import { deliveryHeaders } from "./sign.ts";
import { slackHeaders } from "./slack_events.ts";
import { slackEnvelope } from "../domain/slack/event_callback.ts";
import { type AttemptOutcome, send } from "../core/outbound/send.ts";
import type { Resolver } from "../core/dns.ts";
import type { Leases } from "./leases.ts";
import type { Work } from "../kv/outbox/handed_share.ts";
import { log } from "../core/log.ts";
import { SLACK_ANSWER_MS } from "../core/slack_wire.ts";

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

/** A job or redelivery claimed for one attempt: what the attempt acts on. */
export interface Claimed {
  sub: Subscription;
  /** As leased for the attempt. */
  pending: Work;
  /** The event as it is now (a deleted message's text erased). */
  event: OutboxEvent;
  /** The job's attempt number; null for a redelivery by hand (never retried). */
  attempt: number | null;
}

/** A signed request, ready to send. */
export interface Signed {
  body: string;
  headers: Record<string, string>;
  startedAt: number;
}

/**
 * One attempt, phase by phase: claim (the subscription as it is now, the event, the lease kept),
 * sign, send, and record, which hands the outcome to the Recorder, whose commit records it and
 * settles the job or schedules its retry (delivery/record.ts, delivery/attempt_plan.ts).
 */
export class Attempts {
  constructor(private readonly deps: AttemptDeps) {}

  /** A job this process leased: attempted, with `event` where this process has it already. */
  async runJob(job: Work<DeliveryJob>, event?: OutboxEvent): Promise<Sent> {
    const claimed = await this.claim(job, { eventId: job.value.event_id, event });
    return claimed ? await this.#attempt(claimed) : undefined;
  }

  /** The one attempt of a redelivery asked for by hand, if it is still pending. */
  async runRedelivery(redelivery: Deno.KvEntry<Redelivery>): Promise<Sent> {
    const claimed = await this.claim(redelivery, { eventId: redelivery.value.event_id });
    return claimed ? await this.#attempt(claimed) : undefined;
  }

  /**
   * Claims work this process holds the lease of, acting on the subscription as read lately (see
   * LatestSubscriptions.fresh), so it honours what any process changed (deleted, disabled,
   * rotated). A lease too short to cover the attempt is renewed first, or the work left to
   * whoever took it meanwhile. Work whose subscription or event is gone is dropped: null.
   */
  async claim(
    pending: Work,
    { eventId, event }: { eventId: string; event?: OutboxEvent },
  ): Promise<Claimed | null> {
    const { kv } = this.deps.ctx;
    const v = pending.value;
    const [sub, found] = await Promise.all([
      this.deps.latest.fresh(kv, v.subscription_id, v.subscription_version),
      event ?? this.deps.events.load(kv, eventId),
    ]);
    const held = await this.deps.leases.keep(pending);
    if (!held) return null;
    if (!sub || sub.value.status !== "active" || !found) {
      // Job move "drop" (core/job_states.ts).
      await dropIfUnchanged(kv, held);
      return null;
    }
    const attempt = "attempt" in held.value ? held.value.attempt : null;
    const now = await this.deps.events.asItIsNow(kv, found, attempt === 1);
    return { sub: sub.value, pending: held, event: now, attempt };
  }

  /**
   * Signs the event's body with the subscription's secrets (both during a rotation); for an app's
   * listener, Slack's envelope signed as Slack signs, with the app's signing secret.
   */
  async sign(claimed: Claimed, startedAt: number): Promise<Signed | AttemptOutcome> {
    const { sub, event } = claimed;
    try {
      const signers = await this.deps.signingKeys.for(sub, startedAt);
      if (sub.app) {
        const body = await slackEnvelope(this.deps.ctx.kv, { event, listener: sub.app });
        const job = claimed.attempt === null ? null : claimed.pending.value as DeliveryJob;
        const headers = slackHeaders({ signer: signers[0], body, nowMs: startedAt, job });
        return { body, headers, startedAt };
      }
      const body = this.deps.events.body(event);
      const scheme = schemeOf(sub);
      const headers = deliveryHeaders({ event, signers, body, scheme }, startedAt);
      return { body, headers, startedAt };
    } catch {
      return {
        succeeded: false,
        response_status: null,
        error: "the signing secret could not be decrypted (APP_KEY changed?)",
        response_body: null,
        retryAfterMs: null,
      };
    }
  }

  /** Sends a signed attempt to the subscription's URL, checked for safety first. */
  send({ sub }: Claimed, { body, headers }: Signed): Promise<AttemptOutcome> {
    const { webhooks } = this.deps.ctx.settings;
    return send(sub.url, headers, body, {
      connector: this.deps.connector,
      // An app answers events within Slack's 3 seconds.
      timeoutMs: sub.app ? SLACK_ANSWER_MS : webhooks.timeoutMs,
      allowPrivate: webhooks.allowPrivateUrls,
      resolver: this.deps.resolver,
    });
  }

  /**
   * Logs the attempt and hands it to the Recorder. A failure keeps its slot until recorded, so
   * the subscription's next attempt sees the streak (and a disable) it leads to.
   */
  async record(c: Claimed, { outcome, startedAt }: { outcome: AttemptOutcome; startedAt: number }) {
    const durationMs = Date.now() - startedAt;
    const id = c.sub.id;
    log[outcome.succeeded ? "info" : "warn"]("delivery attempt", {
      subscription_id: id,
      event_id: c.event.id,
      // A test ping is sent as a redelivery of an event made for it alone.
      attempt: c.attempt ?? (c.event.type === "ping" ? "test" : "redelivery"),
      status: outcome.response_status,
      error: outcome.error,
      duration_ms: durationMs,
    });
    this.deps.observe?.(outcome, durationMs);
    // Touched once recorded: a sweep running meanwhile must not forget it before it can prune.
    const rest = this.deps.recorder.record({
      subscriptionId: id,
      event: c.event,
      pending: c.pending,
      attempt: c.attempt,
      outcome,
      startedAt,
      durationMs,
    }).finally(() => this.deps.touched.add(id));
    if (!outcome.succeeded || this.deps.recorder.backlog > MAX_UNRECORDED) await rest;
    return { rest, succeeded: outcome.succeeded, slow: durationMs >= SLOW_RECEIVER_MS };
  }

  async #attempt(claimed: Claimed): Promise<Sent> {
    const startedAt = Date.now();
    const signed = await this.sign(claimed, startedAt);
    const outcome = "body" in signed ? await this.send(claimed, signed) : signed;
    return await this.record(claimed, { outcome, startedAt });
  }
}
