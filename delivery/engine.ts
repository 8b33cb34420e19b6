import type { Ctx } from "../domain/context.ts";
import type { OutboxEvent } from "../domain/types.ts";
import type { RedeliveryQueued, RetryQueued } from "../kv/deliveries.ts";
import { type EventQueued, firstJob, onEventsCommitted } from "../kv/outbox.ts";
import { keys } from "../kv/keys.ts";
import { onSubscriptionChanged } from "../kv/webhooks.ts";
import { type AttemptDeps, type JobWake, runJob, runRedelivery } from "./attempt.ts";
import { Connector } from "./connector.ts";
import { Dispatcher } from "./dispatcher.ts";
import { LatestSubscriptions, RecentEvents } from "./latest.ts";
import { Recorder } from "./record.ts";
import { listenQueue } from "./queue.ts";
import { queuesAvailable } from "../kv/queue_support.ts";
import { SigningKeys } from "./secrets.ts";
import { SettledAttempts } from "./settled.ts";
import type { Resolver } from "./ssrf.ts";
import { sweep, type SweepTarget } from "./sweeper.ts";

export interface EngineOptions {
  /** Attempts running at once, in all and per subscription. */
  concurrency?: number;
  perSubscription?: number;
  /** How often the sweeper runs, and how long a due job is left to its own queue message. */
  sweepEveryMs?: number;
  sweepGraceMs?: number;
  /** For tests: DNS answers, extra trusted certificate authorities. */
  resolver?: Resolver;
  caCerts?: string[];
}

export interface DeliveryEngine {
  /** Resolves once no attempt is waiting or running. */
  idle(): Promise<void>;
  /** Runs the sweeper now (it also runs at start and every `sweepEveryMs`). */
  sweep(): Promise<void>;
  /** Stops taking work, lets running attempts finish and record, and closes connections. */
  stop(): Promise<void>;
}

/**
 * Starts delivering webhooks: the process's queue listener, the in-process dispatcher and the
 * sweeper. Work arrives three ways, all ending in the dispatcher, which ignores what it already
 * has: this process's own commits (at once), queue messages (other processes, retries after
 * their delay, redeliveries), and the sweeper (anything left behind by a crash).
 */
export function startDeliveryEngine(ctx: Ctx, opts: EngineOptions = {}): DeliveryEngine {
  const connector = new Connector({ caCerts: opts.caCerts });
  const latest = new LatestSubscriptions();
  const settled = new SettledAttempts();
  const recorder = new Recorder(ctx.kv, ctx.settings.webhooks, latest, (a) => {
    if (a.attempt !== null) settled.add(a.subscriptionId, a.event.id, a.attempt);
  });
  const deps: AttemptDeps = {
    ctx,
    connector,
    signingKeys: new SigningKeys(ctx.keyring),
    latest,
    events: new RecentEvents(),
    recorder,
    touched: new Set(),
    resolver: opts.resolver,
  };
  const dispatcher = new Dispatcher({
    global: opts.concurrency ?? 64,
    perLane: opts.perSubscription ?? 4,
  });
  const job = (subscriptionId: string, eventId: string, wake: JobWake) => {
    if (settled.has(subscriptionId, eventId, wake.attempt)) return;
    dispatcher.submit({
      key: `job/${subscriptionId}/${eventId}`,
      lane: subscriptionId,
      run: () => runJob(deps, subscriptionId, eventId, wake),
    });
  };
  const redelivery = (subscriptionId: string, redeliveryId: string) =>
    void dispatcher.submit({
      key: `redelivery/${subscriptionId}/${redeliveryId}`,
      lane: subscriptionId,
      run: () => runRedelivery(deps, subscriptionId, redeliveryId),
    });
  const unsubscribeChanges = onSubscriptionChanged((id) => latest.forget(id));
  const unsubscribe = onEventsCommitted((events, versionstamp) => {
    for (const event of events) {
      deps.events.add(event);
      for (const id of event.subscription_ids) {
        const fresh = { key: keys.job(id, event.id), value: firstJob(event, id), versionstamp };
        job(id, event.id, { attempt: 1, event, job: fresh });
      }
    }
  });
  if (queuesAvailable()) {
    listenQueue(ctx.kv, {
      probe: () => {},
      event: async (m: EventQueued) => {
        // A message that does not list the subscriptions is resolved through its event.
        const ids = m.subscription_ids ??
          (await ctx.kv.get<OutboxEvent>(keys.event(m.event_id))).value?.subscription_ids ?? [];
        for (const id of ids) job(id, m.event_id, { attempt: 1 });
      },
      retry: (m: RetryQueued) => job(m.subscription_id, m.event_id, { attempt: m.attempt }),
      redeliver: (m: RedeliveryQueued) => redelivery(m.subscription_id, m.redelivery_id),
    }).catch((e) => console.error("delivery: the queue listener stopped:", e));
  }

  const target: SweepTarget = {
    kv: ctx.kv,
    job: (entry) =>
      job(entry.value.subscription_id, entry.value.event_id, {
        attempt: entry.value.attempt,
        job: entry,
      }),
    redelivery,
    touched: deps.touched,
  };
  let sweeping: Promise<void> | null = null;
  const runSweep = (graceMs: number, everything: boolean) => {
    sweeping ??= sweep(target, { graceMs, everything })
      .catch((e) => console.error("delivery: sweep failed:", e))
      .finally(() => sweeping = null);
    return sweeping;
  };
  runSweep(0, true);
  // Without queues the sweeper is what wakes retries, redeliveries and other writers' events.
  const queued = queuesAvailable();
  const graceMs = opts.sweepGraceMs ?? (queued ? 5_000 : 0);
  const everyMs = opts.sweepEveryMs ?? (queued ? 60_000 : 2_000);
  const timer = setInterval(() => runSweep(graceMs, false), everyMs);

  return {
    idle: () => dispatcher.idle(),
    sweep: () => runSweep(0, false),
    async stop() {
      unsubscribe();
      unsubscribeChanges();
      clearInterval(timer);
      await sweeping;
      await dispatcher.stop();
      connector.close();
    },
  };
}
