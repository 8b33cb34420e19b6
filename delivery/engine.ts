import type { Ctx } from "../domain/context.ts";
import { errorFields, log } from "../domain/log.ts";
import { attemptDuration, deliveries, reportInMemory } from "../domain/metrics.ts";
import type { OutboxEvent } from "../domain/types.ts";
import type { Redelivery } from "../domain/webhook_records.ts";
import {
  type Backlog,
  isFree,
  type Leasable,
  listJobs,
  listRedeliveries,
  listSubscriptionIds,
  measureBacklog,
  readSignal,
  type RedeliveryQueued,
  type RetryQueued,
  unlease,
} from "../kv/deliveries.ts";
import { keyId, keys } from "../kv/keys.ts";
import { attachDelivery, type DeliveryJob, type LocalDelivery } from "../kv/outbox.ts";
import { forgoQueues, queuesAvailable } from "../kv/queue_support.ts";
import { type AttemptDeps, runJob, runRedelivery } from "./attempt.ts";
import { Connector } from "./connector.ts";
import { Dispatcher } from "./dispatcher.ts";
import { LatestSubscriptions, RecentEvents } from "./latest.ts";
import { Leases } from "./leases.ts";
import { listenQueue } from "./queue.ts";
import { Recorder } from "./record.ts";
import { SigningKeys } from "./secrets.ts";
import type { Resolver } from "./ssrf.ts";
import { sweep } from "./sweeper.ts";

export interface EngineOptions {
  /** Attempts running at once, in all and per subscription. */
  concurrency?: number;
  perSubscription?: number;
  /** Jobs held in memory at once, in all (default: WEBHOOKS_MAX_IN_MEMORY) and per subscription. */
  window?: number;
  laneWindow?: number;
  /** How often everything pending is looked over, and old Delivery records pruned. */
  sweepEveryMs?: number;
  /** How often the delivery signal (work left by other processes) is read. */
  signalEveryMs?: number;
  /** How often the backlog in KV is measured, and logged while there is one. */
  reportEveryMs?: number;
  /** For tests: DNS answers, extra trusted certificate authorities. */
  resolver?: Resolver;
  caCerts?: string[];
  /**
   * Whether the engine runs timers of its own (default DELIVERY_TIMERS). Without them it only
   * delivers what this process commits, as it commits it, and what `runDue` finds: the cron
   * task's work on hosts where timers run only while a request is served.
   */
  timers?: boolean;
}

/** What one `runDue` did. */
export interface DueRun {
  /** Attempts made (jobs and redeliveries). */
  attempted: number;
  /** Whether it stopped at its time budget with work left, for the next run. */
  cutShort: boolean;
}

export interface DeliveryEngine {
  /** Resolves once no attempt is waiting or running. */
  idle(): Promise<void>;
  /** Looks over everything pending now (it also does so at start and every `sweepEveryMs`). */
  sweep(): Promise<void>;
  /**
   * Sends everything due and free now (retries, redeliveries, recovers, work a dead process
   * left), pulling again as attempts finish until nothing due is left or `budgetMs` has passed,
   * then prunes and returns: what a cron run does. Leases keep two runs, or a run and a
   * running instance, from sending anything twice.
   */
  runDue(budgetMs: number): Promise<DueRun>;
  /** Jobs and redeliveries held in memory now. */
  held(): number;
  /** The backlog in KV as last measured (once a minute), with when. */
  backlog(): (Backlog & { measuredAt: number }) | null;
  /** Stops taking work, lets running attempts finish and record, frees what it held unstarted. */
  stop(): Promise<void>;
}

/** Entries read past per subscription and pull, looking for due, free jobs. */
const SCAN_LIMIT = 500;
/** A backlogged subscription is pulled again once this many of its jobs fit (fewer reads). */
const PULL_BATCH = 16;
const jobKey = (subscriptionId: string, eventId: string) => `job/${subscriptionId}/${eventId}`;
const due = (job: DeliveryJob) => Date.parse(job.next_attempt_at);
/** Never early: a retry waits its full backoff, and a receiver's Retry-After. */
const isDue = (job: DeliveryJob, now: number) => due(job) <= now;

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
  if (!timers) forgoQueues(kv);
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
   * Leases what was found in KV and hands what it won to the dispatcher. Room is reserved before
   * the lease is taken: a lease this process won but had no room for would keep every process
   * off the job until it ran out.
   */
  async function take<T extends Leasable>(
    found: Deno.KvEntry<T>[],
    submit: (entry: Deno.KvEntry<T>, reserved: boolean) => void,
  ) {
    const roomy = found.filter((e) => {
      const fits = dispatcher.reserve(e.value.subscription_id);
      if (!fits) backlogged.add(e.value.subscription_id);
      return fits;
    });
    const won = await leases.take(roomy);
    const wonKeys = new Set(won.map((e) => keyId(e.key)));
    for (const e of roomy) {
      if (!wonKeys.has(keyId(e.key))) dispatcher.release(e.value.subscription_id);
    }
    for (const e of won) submit(e, true);
  }

  const local: LocalDelivery = {
    wake: (id) =>
      void pullRedeliveries(id).catch((e) => log.error("delivery: a pull failed", errorFields(e))),
    claim: (ids) => ids.filter((id) => dispatcher.reserve(id)),
    release: (ids) => ids.forEach((id) => dispatcher.release(id)),
    leaseUntil: (now) => leases.until(now),
    take(handed, versionstamp) {
      for (const { event, jobs } of handed) {
        deps.events.add(event);
        for (const value of jobs) {
          const entry = { key: keys.job(value.subscription_id, event.id), value, versionstamp };
          submitJob(entry, event, true);
        }
      }
    },
  };
  const detach = attachDelivery(kv, local);

  // Subscriptions whose pending work did not all fit at the last pull, and where to read on.
  const backlogged = new Set<string>();
  const cursors = new Map<string, Deno.KvKey>();

  /** Leases what fits of one subscription's due, free jobs; true when more may be waiting. */
  async function pullSubscription(id: string, fromStart: boolean): Promise<boolean> {
    const room = dispatcher.room(id);
    if (room < 1) return true;
    if (fromStart) cursors.delete(id);
    const now = Date.now();
    const found: Deno.KvEntry<DeliveryJob>[] = [];
    let more = false;
    // From where the last scan stopped, then, if that reached the end, from the start again.
    for (const from of [cursors.get(id) ?? null, null].slice(0, cursors.has(id) ? 2 : 1)) {
      let scanned = 0;
      let last: Deno.KvKey | null = null;
      for await (const e of listJobs(kv, id, from, SCAN_LIMIT)) {
        scanned++;
        last = e.key;
        if (dispatcher.has(jobKey(id, e.value.event_id))) continue;
        if (!isDue(e.value, now)) {
          wakeAt(due(e.value));
          continue;
        }
        if (!isFree(e, now)) {
          // Another process holds it; if that process is gone, the lease runs out then.
          wakeAt(e.value.lease_until!);
          continue;
        }
        found.push(e);
        if (found.length >= room) break;
      }
      if (found.length >= room) {
        // A backlog is taken in order: the next pull goes on after what this one took, rather
        // than reading again past the jobs this process holds.
        more = true;
        cursors.set(id, found.at(-1)!.key);
        break;
      }
      if (scanned === SCAN_LIMIT && last) {
        // Too much to skip over in one go: go on from here next time.
        cursors.set(id, last);
        more = true;
        break;
      }
      cursors.delete(id);
    }
    await take(found, (job, reserved) => submitJob(job, undefined, reserved));
    return more;
  }

  async function pullRedeliveries(id: string) {
    const found: Deno.KvEntry<Redelivery>[] = [];
    for await (const e of listRedeliveries(kv, id)) {
      if (!dispatcher.has(`redelivery/${e.value.id}`)) found.push(e);
    }
    await take(found, submitRedelivery);
  }

  /** Pulls for `ids`, starting at a different one each time so none is always last. */
  let turn = 0;
  async function pull(ids: string[], redeliveries: boolean) {
    const start = turn++ % Math.max(1, ids.length);
    for (const id of [...ids.slice(start), ...ids.slice(0, start)]) {
      if (await pullSubscription(id, redeliveries)) backlogged.add(id);
      else backlogged.delete(id);
      if (redeliveries) await pullRedeliveries(id);
    }
  }

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

  // One pull at a time; asking during one runs one more after it, over everything if any asked so.
  let pulling: Promise<void> | null = null;
  let again: "backlog" | "all" | null = null;
  const requestPull = (scope: "backlog" | "all") => {
    if (pulling) {
      if (again !== "all") again = scope;
      return pulling;
    }
    pulling = (async () => {
      let next: "backlog" | "all" | null = scope;
      while (next) {
        const ids = next === "all" ? await listSubscriptionIds(kv) : [...backlogged];
        await pull(ids, next === "all");
        [next, again] = [again, null];
      }
    })().catch((e) => log.error("delivery: a pull failed", errorFields(e)))
      .finally(() => pulling = null);
    return pulling;
  };
  // A backlog is pulled on as the window empties, not only when someone signals.
  const refillAt = Math.max(1, Math.min(PULL_BATCH, Math.floor(laneWindow / 2)));
  const stopRoom = dispatcher.onRoom(() => {
    for (const id of backlogged) {
      if (dispatcher.room(id) >= refillAt) return void requestPull("backlog");
    }
  });

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

  if (queuesAvailable(kv)) {
    listenQueue(kv, {
      probe: () => {},
      // Left by earlier versions, which woke engines per event: a pull finds the jobs.
      event: () => void requestPull("all"),
      retry: async (m: RetryQueued) => {
        const job = await kv.get<DeliveryJob>(keys.job(m.subscription_id, m.event_id));
        if (job.versionstamp === null || job.value.attempt !== m.attempt) return;
        if (!isDue(job.value, Date.now())) return;
        await take(
          [job as Deno.KvEntry<DeliveryJob>],
          (won, reserved) => submitJob(won, undefined, reserved),
        );
      },
      redeliver: async (m: RedeliveryQueued) => {
        const entry = await kv.get<Redelivery>(keys.redelivery(m.subscription_id, m.redelivery_id));
        if (entry.versionstamp === null) return;
        await take([entry as Deno.KvEntry<Redelivery>], submitRedelivery);
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
  let lastBacklog: (Backlog & { measuredAt: number }) | null = null;
  async function reportBacklog() {
    try {
      lastBacklog = { ...await measureBacklog(kv), measuredAt: Date.now() };
      if (lastBacklog.pending === 0) return;
      const age = (Date.now() - Date.parse(lastBacklog.oldestCreatedAt!)) / 1000;
      log.info(
        `delivery: backlog of ${lastBacklog.pending} pending jobs, the oldest ${
          age.toFixed(1)
        } s old; ${dispatcher.held} in this process's memory`,
        { pending: lastBacklog.pending, oldest_age_s: age, in_memory: dispatcher.held },
      );
    } catch (e) {
      log.error("delivery: measuring the backlog failed", errorFields(e));
    }
  }
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
    backlog: () => lastBacklog,
    async stop() {
      stopped = true;
      clearTimeout(wakeTimer);
      clearInterval(reportTimer);
      detach();
      stopRoom();
      clearInterval(signalTimer);
      clearInterval(sweepTimer);
      await sweeping;
      await pulling;
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
