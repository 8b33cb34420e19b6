import type { Ctx } from "../domain/context.ts";
import { errorFields, log } from "../core/log.ts";
import { attemptDuration, deliveries, reportInMemory } from "../core/metrics.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { Redelivery } from "../core/webhook_records.ts";
import { type RedeliveryQueued } from "../kv/redeliveries.ts";
import { readSignal } from "../kv/backlog.ts";
import { type Leasable, unlease } from "../kv/leases.ts";
import { type RetryQueued } from "../kv/settlement.ts";
import { keys } from "../kv/keys.ts";
import type { Handed } from "../kv/plan.ts";
import type { DeliveryEngine, DueRun, EngineOptions } from "./engine_contract.ts";
import { type DeliveryJob } from "../core/webhook_records.ts";
import { type AttemptDeps, runJob, runRedelivery } from "./attempt.ts";
import { Connector } from "./connector.ts";
import { Dispatcher } from "../core/dispatcher.ts";
import { LatestSubscriptions, RecentEvents } from "./latest.ts";
import { Leases } from "./leases.ts";
import { listenQueue } from "./queue.ts";
import { Recorder } from "./record.ts";
import { due, isDue, jobKey, Puller, type PullScope } from "./puller.ts";
import { SigningKeys } from "./secrets.ts";
import { BacklogReport } from "./backlog_report.ts";
import { sweep } from "./sweeper.ts";
import { StallWatch } from "./stall_watch.ts";

/**
 * Delivers webhooks. KV holds every pending job; this process holds a bounded window of them
 * (the dispatcher), each under a lease so no other process attempts it meanwhile. Work enters
 * the window three ways: this process's own commits hand their jobs over at once (leased in
 * the same commit, while there is room); pulls lease due, free jobs from KV, subscription by
 * subscription, when the window has room and work is known to wait (the delivery signal other
 * writers set, a backlog, a sweep); and queue messages wake retries and redeliveries at their
 * time where the store has queues.
 */
export function startDeliveryEngine(ctx: Ctx, opts: EngineOptions = {}): DeliveryEngine {
  const { kv } = ctx;
  const timers = opts.timers ?? ctx.settings.deliveryTimers;
  if (!timers) kv.forgoQueues();
  const connector = new Connector({ caCerts: opts.caCerts });
  const latest = new LatestSubscriptions();
  const leases = new Leases(kv, ctx.settings.webhooks.timeoutMs);
  let attempted = 0;
  const deps: AttemptDeps = {
    ctx,
    connector,
    signingKeys: new SigningKeys(ctx.keyring),
    latest,
    events: new RecentEvents(),
    recorder: new Recorder(kv, ctx.settings.webhooks, latest, (job) => wakeAt(due(job))),
    touched: new Set(),
    leases,
    resolver: opts.resolver,
    observe(outcome, durationMs) {
      attempted++;
      deliveries.inc({ outcome: outcome.succeeded ? "succeeded" : "failed" });
      attemptDuration.observe(durationMs / 1000);
    },
  };
  const window = opts.window ?? ctx.settings.webhooks.window;
  const laneWindow = Math.min(opts.laneWindow ?? 64, window);
  const dispatcher = new Dispatcher({
    global: opts.concurrency ?? 64,
    perLane: opts.perSubscription ?? 4,
    maxPerLane: Math.max(opts.perSubscription ?? 4, opts.maxPerSubscription ?? 16),
    window,
    laneWindow,
  });
  const unstarted: Deno.KvEntry<Leasable>[] = [];
  reportInMemory(() => dispatcher.held);

  const submitJob = (job: Deno.KvEntry<DeliveryJob>, event?: OutboxEvent, reserved = false) =>
    dispatcher.submit({
      key: jobKey(job.value.subscription_id, job.value.event_id),
      lane: job.value.subscription_id,
      run: () => runJob(deps, job, event),
      dropped: () => unstarted.push(job),
    }, reserved);
  const submitRedelivery = (entry: Deno.KvEntry<Redelivery>, reserved: boolean) =>
    dispatcher.submit({
      key: `redelivery/${entry.value.id}`,
      lane: entry.value.subscription_id,
      run: () => runRedelivery(deps, entry),
      dropped: () => unstarted.push(entry),
    }, reserved);

  /**
   * Takes the jobs a commit here leased to this engine. One the dispatcher no longer takes (it
   * stopped meanwhile) is freed with the unstarted ones at stop, not left leased.
   */
  const take = (handed: Handed[], versionstamp: string) => {
    for (const { event, jobs } of handed) {
      deps.events.add(event);
      for (const value of jobs) {
        const entry = { key: keys.job(value.subscription_id, event.id), value, versionstamp };
        if (!submitJob(entry, event, true)) unstarted.push(entry);
      }
    }
  };
  /** Handovers of this process's commits not yet taken (see `heard`): stop waits for them. */
  const handing = new Set<Promise<void>>();
  const wake = (subscriptionId: string) =>
    void puller.pullRedeliveries(subscriptionId).catch((e) =>
      log.error("delivery: a pull failed", errorFields(e))
    );

  const puller = new Puller({
    kv,
    dispatcher,
    leases,
    laneWindow,
    submitJob: (job, reserved) => submitJob(job, undefined, reserved),
    submitRedelivery,
    wakeAt: (at) => wakeAt(at),
    preload: (eventIds) => deps.events.loadMany(kv, eventIds),
  });
  const requestPull = (scope: PullScope) => puller.request(scope);
  const watch = new StallWatch({ dispatcher, puller, pull: () => void requestPull("backlog") });
  const watchTimer = timers
    ? setInterval(() => watch.check(), opts.stallCheckEveryMs ?? 2_000)
    : undefined;

  // One timer, for the earliest time something seen in KV becomes workable: a retry falling due,
  // a lease running out. Without timers, the next cron run finds it.
  let wakeTimer: ReturnType<typeof setTimeout> | undefined;
  let wakeTime = Infinity;
  function wakeAt(at: number) {
    if (!timers || stopped || at >= wakeTime) return;
    clearTimeout(wakeTimer);
    wakeTime = at;
    wakeTimer = setTimeout(() => {
      wakeTime = Infinity;
      void requestPull("all");
    }, Math.max(0, at - Date.now()));
  }
  let stopped = false;

  // The signal as it stood before the start-up pull: any change after it is work to look for.
  let lastSignal: string | null | undefined;
  const signalRead = timers ? readSignal(kv).then((e) => void (lastSignal = e.versionstamp)) : null;
  const signalTimer = timers
    ? setInterval(async () => {
      try {
        const { versionstamp } = await readSignal(kv);
        if (lastSignal !== undefined && versionstamp !== lastSignal) void requestPull("all");
        lastSignal = versionstamp;
      } catch (e) {
        log.error("delivery: reading the delivery signal failed", errorFields(e));
      }
    }, opts.signalEveryMs ?? 250)
    : undefined;

  if (kv.queues) {
    listenQueue(kv, {
      probe: () => {},
      // Left by earlier versions, which woke engines per event: a pull finds the jobs.
      event: () => void requestPull("all"),
      retry: async (m: RetryQueued) => {
        const job = await kv.get<DeliveryJob>(keys.job(m.subscription_id, m.event_id));
        if (job.versionstamp === null || job.value.attempt !== m.attempt) return;
        if (!isDue(job.value, Date.now())) return;
        await puller.takeJobs([job as Deno.KvEntry<DeliveryJob>]);
      },
      redeliver: async (m: RedeliveryQueued) => {
        const entry = await kv.get<Redelivery>(keys.redelivery(m.subscription_id, m.redelivery_id));
        if (entry.versionstamp === null) return;
        await puller.takeRedeliveries([entry as Deno.KvEntry<Redelivery>]);
      },
    }).catch((e) => log.error("delivery: the queue listener stopped", errorFields(e)));
  }

  let sweeping: Promise<void> | null = null;
  const runSweep = (everything: boolean) => {
    sweeping ??= (async () => {
      await requestPull("all");
      await sweep({ kv, touched: deps.touched }, { everything });
    })().catch((e) => log.error("delivery: a sweep failed", errorFields(e)))
      .finally(() => sweeping = null);
    return sweeping;
  };
  signalRead?.finally(() => runSweep(true));
  // Retries this process scheduled, and what pulls saw, wake it at their time; sweeps catch the
  // rest (retries another process scheduled and then died).
  const sweepTimer = timers
    ? setInterval(() => runSweep(false), opts.sweepEveryMs ?? 30_000)
    : undefined;

  // Delivery lag made visible: what waits in KV, and for how long the oldest has.
  const report = new BacklogReport(kv, () => dispatcher.held);
  const reportBacklog = () => report.measure();
  const reportTimer = timers ? setInterval(reportBacklog, opts.reportEveryMs ?? 60_000) : undefined;

  /** Rounds of pull-everything-then-wait, until a round finds nothing due or time is up. */
  async function runDue(budgetMs: number): Promise<DueRun> {
    const deadline = Date.now() + budgetMs;
    const before = attempted;
    let cutShort = false;
    for (let round = -1; round !== attempted;) {
      round = attempted;
      const settled = await within(
        (async () => {
          await requestPull("all");
          await dispatcher.idle();
        })(),
        deadline - Date.now(),
      );
      if (!settled) {
        cutShort = true;
        break;
      }
    }
    await sweep({ kv, touched: deps.touched }, { everything: false })
      .catch((e) => log.error("delivery: a sweep failed", errorFields(e)));
    if (cutShort) await reportBacklog();
    return { attempted: attempted - before, cutShort };
  }

  return {
    idle: () => dispatcher.idle(),
    sweep: () => runSweep(false),
    runDue,
    held: () => dispatcher.held,
    backlog: () => report.last,
    room: { window: dispatcher, leaseMs: leases.duration },
    heard({ handed, versionstamp, redeliveries }) {
      // After the writer's own continuation: the answer to a post goes out before its deliveries
      // start, not after the first steps of each (a hundred of them, for a busy channel).
      for (const id of new Set(redeliveries)) wake(id);
      if (handed.length === 0) return;
      const handover = new Promise<void>((resolve) =>
        setTimeout(() => resolve(take(handed, versionstamp)), 0)
      );
      handing.add(handover);
      void handover.finally(() => handing.delete(handover));
    },
    async stop() {
      stopped = true;
      // No job of a commit from now on is leased to this engine; those leased before are taken
      // (or freed below).
      dispatcher.refuse();
      await Promise.all(handing);
      clearTimeout(wakeTimer);
      clearInterval(reportTimer);
      clearInterval(watchTimer);
      puller.stop();
      clearInterval(signalTimer);
      clearInterval(sweepTimer);
      await sweeping;
      await puller.pulling;
      await dispatcher.stop();
      await unlease(kv, unstarted.splice(0)).catch((e) =>
        log.error("delivery: freeing leases at stop failed", errorFields(e))
      );
      connector.close();
    },
  };
}

/** Whether `work` settles within `ms`; the timer is cleared either way. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
