import type { Ctx } from "../domain/context.ts";
import { TroubleTeller } from "../domain/webhooks/trouble.ts";
import { errorFields, log } from "../core/log.ts";
import { attemptDuration, deliveries, reportInMemory } from "../core/metrics.ts";
import type { WorkIntake } from "../core/work_pair.ts";
import { startSoon } from "../core/after_answers.ts";
import { within } from "../core/settled.ts";
import type { OutboxEvent } from "../core/types.ts";
import type { DeliveryJob, Redelivery } from "../core/webhook_records.ts";
import { unlease } from "../kv/outbox/leases.ts";
import { heldFrom, type Work } from "../kv/outbox/handed_share.ts";
import type { JobRoom } from "../kv/outbox/outbox.ts";
import type { CommitWork } from "../kv/store/plan.ts";
import type { Store } from "../kv/store/store.ts";
import type { DeliveryEngine, DueRun, EngineOptions } from "./engine_contract.ts";
import { Attempts } from "./attempt.ts";
import { Connector } from "../core/outbound/connector.ts";
import { Dispatcher } from "../core/dispatcher.ts";
import { LatestSubscriptions, RecentEvents } from "./latest.ts";
import { Leases } from "./leases.ts";
import { Recorder } from "./record.ts";
import { due, jobKey, Puller } from "./puller.ts";
import { SigningKeys } from "./secrets.ts";
import { BacklogReport } from "./backlog_report.ts";
import { sweep, type SweepTarget } from "./sweeper.ts";
import { WaitingFirstAttempts } from "./waiting.ts";
import { type Sources, startSources, type WakeReason } from "./sources.ts";

/** First attempts that may wait in their records for the window's room: times the window. */
const WAITING_PER_WINDOW = 10;

/**
 * Delivers webhooks. KV holds every pending job; this process holds a bounded window of them
 * (the dispatcher), each under a lease so no other process attempts it meanwhile. Work enters the
 * window through `wake`: this process's commits hand their jobs over at once (leased in the same
 * commit, while there is room, through the work pair made in main.ts); pulls lease due, free jobs
 * from KV, subscription by subscription, when work is known to wait; queue messages take one job
 * or redelivery. Each attempt then runs its phases (delivery/attempt.ts): claim, sign, send,
 * record, and the Recorder's commit settles it or schedules its retry.
 */
export class Engine implements DeliveryEngine {
  readonly room: JobRoom;
  readonly #kv: Store;
  readonly #connector: Connector;
  readonly #recorder: Recorder;
  readonly #events = new RecentEvents();
  readonly #touched = new Set<string>();
  readonly #swept: SweepTarget;
  readonly #attempts: Attempts;
  readonly #dispatcher: Dispatcher;
  readonly #puller: Puller;
  readonly #report: BacklogReport;
  readonly #teller: TroubleTeller;
  readonly #sources: Sources;
  readonly #detach: () => void;
  /** Work leased to this engine that it will not start: freed at stop. */
  readonly #unstarted: Work[] = [];
  readonly #waiting: WaitingFirstAttempts;
  /** Handovers of this process's commits not yet taken: stop waits for them. */
  readonly #handing = new Set<Promise<void>>();
  #attempted = 0;
  #sweeping: Promise<void> | null = null;
  #stopped = false;

  constructor(ctx: Ctx, intake: WorkIntake<CommitWork, JobRoom>, opts: EngineOptions = {}) {
    const kv = this.#kv = ctx.kv;
    this.#swept = { kv, touched: this.#touched };
    const timers = opts.timers ?? ctx.settings.deliveryTimers;
    if (!timers) kv.forgoQueues();
    this.#connector = new Connector({ caCerts: opts.caCerts });
    const latest = new LatestSubscriptions();
    const leases = new Leases(kv, ctx.settings.webhooks.timeoutMs);
    this.#recorder = new Recorder(kv, ctx.settings.webhooks, latest, {
      scheduled: this.#wakeAt,
      troubled: (this.#teller = new TroubleTeller(ctx)).tell,
      foreground: opts.foreground,
    });
    this.#attempts = new Attempts({
      ctx,
      connector: this.#connector,
      signingKeys: new SigningKeys(ctx.keyring),
      latest,
      events: this.#events,
      recorder: this.#recorder,
      touched: this.#touched,
      leases,
      resolver: opts.resolver,
      observe: (outcome, durationMs) => {
        this.#attempted++;
        deliveries.inc({ outcome: outcome.succeeded ? "succeeded" : "failed" });
        attemptDuration.observe(durationMs / 1000);
      },
    });
    const window = opts.window ?? ctx.settings.webhooks.window;
    const laneWindow = Math.min(opts.laneWindow ?? 64, window);
    this.#dispatcher = new Dispatcher({
      global: opts.concurrency ?? 64,
      perLane: opts.perSubscription ?? 4,
      maxPerLane: Math.max(opts.perSubscription ?? 4, opts.maxPerSubscription ?? 16),
      window,
      laneWindow,
    }, () => opts.foreground?.turn());
    reportInMemory(() => this.#dispatcher.held);
    this.#waiting = new WaitingFirstAttempts({
      kv,
      dispatcher: this.#dispatcher,
      max: WAITING_PER_WINDOW * window,
      covers: (until, now) => leases.covers(until, now),
      submit: (job) => this.#submitJob(job, { reserved: false }) || this.#unstarted.push(job),
      timers,
    });
    this.#dispatcher.onRoom(() => this.#waiting.feed());
    this.room = {
      window: this.#dispatcher,
      leaseMs: leases.duration,
      mayWait: () => this.#waiting.roomy,
    };
    this.#puller = new Puller({
      kv,
      dispatcher: this.#dispatcher,
      leases,
      laneWindow,
      submitJob: (job, reserved) => this.#submitJob(job, { reserved }),
      submitRedelivery: (entry, reserved) => this.#submitRedelivery(entry, reserved),
      wakeAt: (at) => this.#sources.wakeAt(at),
      preload: (eventIds) => this.#events.loadMany(kv, eventIds),
    });
    this.#report = new BacklogReport(kv, () => this.#dispatcher.held);
    this.#sources = startSources({
      kv,
      timers,
      opts,
      puller: this.#puller,
      dispatcher: this.#dispatcher,
      wake: (reason) => this.wake(reason),
      report: () => this.#report.measure(),
    });
    this.#detach = intake.attach({
      room: this.room,
      take: (work) => this.wake({ source: "commit", work }),
    });
  }

  /** The one place that decides what runs, for each reason work may be waiting. */
  wake(reason: WakeReason): void {
    if (this.#stopped) return;
    switch (reason.source) {
      case "commit":
        return this.#handOver(reason.work);
      case "due":
      case "signal":
        return void this.#puller.request("all");
      case "stall":
        return void this.#puller.request("backlog");
      case "queue":
        return void this.#puller.takeQueued(reason.message).catch((e) =>
          log.error("delivery: taking queued work failed", errorFields(e))
        );
      case "start":
        return void this.#sweep(true);
      case "sweep":
        return void this.#sweep(false);
    }
  }

  idle(): Promise<void> {
    return this.#dispatcher.idle();
  }

  sweep(): Promise<void> {
    return this.#sweep(false);
  }

  held(): number {
    return this.#dispatcher.held;
  }

  backlog() {
    return this.#report.last;
  }

  /** Rounds of pull-everything-then-wait, until a round finds nothing due or time is up. */
  async runDue(budgetMs: number): Promise<DueRun> {
    const deadline = Date.now() + budgetMs;
    const before = this.#attempted;
    let cutShort = false;
    for (let round = -1; round !== this.#attempted;) {
      round = this.#attempted;
      const settled = await within(
        this.#puller.request("all").then(() => this.#dispatcher.idle()),
        deadline - Date.now(),
      );
      if (!settled) {
        cutShort = true;
        break;
      }
    }
    await sweep(this.#swept, { everything: false })
      .catch((e) => log.error("delivery: a sweep failed", errorFields(e)));
    if (cutShort) await this.#report.measure();
    return { attempted: this.#attempted - before, cutShort };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#detach();
    // No job of a commit from now on is leased to this engine; those leased before are taken
    // (or freed below).
    this.#dispatcher.refuse();
    await Promise.all(this.#handing);
    this.#sources.stop();
    this.#puller.stop();
    await this.#sweeping;
    await this.#puller.pulling;
    await this.#dispatcher.stop();
    await this.#teller.settled();
    this.#unstarted.push(...this.#waiting.takeAll());
    await unlease(this.#kv, this.#unstarted.splice(0)).catch((e) =>
      log.error("delivery: freeing leases at stop failed", errorFields(e))
    );
    this.#connector.close();
  }

  /**
   * Takes the jobs a commit here leased to this engine (job move "start") once the writer's own
   * continuation ran, and its answer is written when many (core/after_answers.ts); redeliveries.
   * A job the dispatcher no longer takes (it stopped meanwhile) is freed at stop, not left leased.
   */
  #handOver({ handed, versionstamp, redeliveries }: CommitWork) {
    for (const id of new Set(redeliveries)) {
      void this.#puller.pullRedeliveries(id).catch((e) =>
        log.error("delivery: a pull failed", errorFields(e))
      );
    }
    if (handed.length === 0) return;
    const count = handed.reduce((n, h) => n + h.jobs.length, 0);
    const handover = new Promise<void>((resolve) =>
      startSoon(count, () => {
        for (const h of handed) {
          this.#events.add(h.event);
          const { jobs, waiting } = heldFrom(h, versionstamp);
          for (const job of jobs) {
            if (!this.#submitJob(job, { event: h.event, reserved: true })) {
              this.#unstarted.push(job);
            }
          }
          for (const job of waiting) this.#waiting.add(job);
        }
        this.#waiting.feed();
        resolve();
      })
    );
    this.#handing.add(handover);
    void handover.finally(() => this.#handing.delete(handover));
  }

  #sweep(everything: boolean): Promise<void> {
    this.#sweeping ??= (async () => {
      await this.#puller.request("all");
      await sweep(this.#swept, { everything });
    })().catch((e) => log.error("delivery: a sweep failed", errorFields(e)))
      .finally(() => this.#sweeping = null);
    return this.#sweeping;
  }

  #wakeAt = (job: DeliveryJob) => this.#sources.wakeAt(due(job));

  #submitJob(
    job: Work<DeliveryJob>,
    { event, reserved }: { event?: OutboxEvent; reserved: boolean },
  ) {
    return this.#dispatcher.submit({
      key: jobKey(job.value.subscription_id, job.value.event_id),
      lane: job.value.subscription_id,
      run: () => this.#attempts.runJob(job, event),
      dropped: () => this.#unstarted.push(job),
    }, reserved);
  }

  #submitRedelivery(entry: Deno.KvEntry<Redelivery>, reserved: boolean) {
    return this.#dispatcher.submit({
      key: `redelivery/${entry.value.id}`,
      lane: entry.value.subscription_id,
      run: () => this.#attempts.runRedelivery(entry),
      dropped: () => this.#unstarted.push(entry),
    }, reserved);
  }
}

/**
 * Starts a delivery engine that takes the work of this process's commits from `intake` (the
 * consuming side of the work pair main.ts makes) and finds the rest in KV.
 */
export function startDeliveryEngine(
  ctx: Ctx,
  intake: WorkIntake<CommitWork, JobRoom>,
  opts: EngineOptions = {},
): DeliveryEngine {
  return new Engine(ctx, intake, opts);
}
