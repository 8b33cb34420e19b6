import type { Resolver } from "../core/dns.ts";
import type { Foreground } from "../core/foreground.ts";
import type { JobRoom } from "../kv/outbox/outbox.ts";
import type { Backlog } from "../kv/outbox/backlog.ts";

export interface EngineOptions {
  /**
   * Attempts running at once, in all and per subscription; a subscription whose receiver keeps
   * succeeding with a backlog waiting may go up to maxPerSubscription.
   */
  concurrency?: number;
  perSubscription?: number;
  maxPerSubscription?: number;
  /** Jobs held in memory at once, in all (default: WEBHOOKS_MAX_IN_MEMORY) and per subscription. */
  window?: number;
  laneWindow?: number;
  /** How often everything pending is looked over, and old Delivery records pruned. */
  sweepEveryMs?: number;
  /** How often the delivery signal (work left by other processes) is read. */
  signalEveryMs?: number;
  /** How often the backlog in KV is measured, and logged while there is one. */
  reportEveryMs?: number;
  /** How often the engine checks that known work is under way (see StallWatch). */
  stallCheckEveryMs?: number;
  /** For tests: DNS answers, extra trusted certificate authorities. */
  resolver?: Resolver;
  caCerts?: string[];
  /**
   * Whether the engine runs timers of its own (default DELIVERY_TIMERS). Without them it only
   * delivers what this process commits, as it commits it, and what `runDue` finds: the cron
   * task's work on hosts where timers run only while a request is served.
   */
  timers?: boolean;
  /** This process's requests in flight, which delivery lets go first (main.ts makes it). */
  foreground?: Foreground;
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
  /** The room for jobs of this process's commits, leased to it as they are written. */
  readonly room: JobRoom;
}
