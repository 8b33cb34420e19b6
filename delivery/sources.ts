/**
 * The engine's sources of work besides its own commits, each reduced to a reason to wake (see
 * `WakeReason` in delivery/engine.ts): the one timer for the earliest time something seen in KV
 * becomes workable, the delivery signal other processes set, queue messages, the sweep timer, the
 * stall watch, the backlog report, and the start. Without timers (DELIVERY_TIMERS=false) only the
 * engine's own commits remain; the cron task then finds what is due (`Engine.runDue`).
 */
import { errorFields, log } from "../core/log.ts";
import type { Dispatcher } from "../core/dispatcher.ts";
import { readSignal } from "../kv/outbox/backlog.ts";
import type { RedeliveryQueued } from "../kv/outbox/redeliveries.ts";
import type { RetryQueued } from "../kv/outbox/settlement.ts";
import type { Store } from "../kv/store/store.ts";
import type { EngineOptions } from "./engine_contract.ts";
import type { CommitWork } from "../kv/store/plan.ts";
import type { Puller } from "./puller.ts";
import { listenQueue } from "./queue.ts";
import { StallWatch } from "./stall_watch.ts";

/** A queue message that names one piece of work. */
export type QueuedWork = RetryQueued | RedeliveryQueued;

/**
 * Why the engine looks for work. Every source of work is one of these, and `wake` alone decides
 * what each one runs: a commit of this process (its jobs leased to this engine in the commit, its
 * redeliveries), the one timer (a retry falls due, a lease runs out), the delivery signal (another
 * process left work), a queue message, a sweep, the stall watch, and the start.
 */
export type WakeReason =
  | { source: "commit"; work: CommitWork }
  | { source: "due" | "signal" | "stall" }
  | { source: "queue"; message: QueuedWork }
  | { source: "sweep" | "start" };

export interface SourceDeps {
  kv: Store;
  timers: boolean;
  opts: EngineOptions;
  puller: Puller;
  dispatcher: Dispatcher;
  wake(reason: WakeReason): void;
  /** Measures the backlog in KV (and logs it while there is one). */
  report(): Promise<unknown>;
}

/** The running sources: the one timer's setter, and how to stop them all. */
export interface Sources {
  /** Something seen in KV becomes workable at `at`: the one timer wakes the engine then. */
  wakeAt(at: number): void;
  stop(): void;
}

export function startSources(deps: SourceDeps): Sources {
  const timer = new DueTimer(deps);
  const stops: (() => void)[] = [];
  if (deps.timers) {
    const signal = watchSignal(deps);
    // The signal as it stood before the start-up sweep: any change after it is work to look for.
    void signal.read.finally(() => deps.wake({ source: "start" }));
    stops.push(signal.stop, everyInterval(deps));
  }
  if (deps.kv.queues) listenForWork(deps);
  return {
    wakeAt: (at) => timer.at(at),
    stop() {
      timer.stop();
      for (const stop of stops) stop();
    },
  };
}

/** One timer, for the earliest time something seen in KV becomes workable. */
class DueTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #time = Infinity;
  #stopped = false;

  constructor(private readonly deps: SourceDeps) {}

  at(at: number) {
    if (!this.deps.timers || this.#stopped || at >= this.#time) return;
    clearTimeout(this.#timer);
    this.#time = at;
    this.#timer = setTimeout(() => {
      this.#time = Infinity;
      this.deps.wake({ source: "due" });
    }, Math.max(0, at - Date.now()));
  }

  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}

/** Polls the delivery signal, which commits that leave work for any engine set. */
function watchSignal({ kv, opts, wake }: SourceDeps) {
  let last: string | null | undefined;
  const read = readSignal(kv).then((e) => void (last = e.versionstamp)).catch(() => {});
  const timer = setInterval(async () => {
    try {
      const { versionstamp } = await readSignal(kv);
      if (last !== undefined && versionstamp !== last) wake({ source: "signal" });
      last = versionstamp;
    } catch (e) {
      log.error("delivery: reading the delivery signal failed", errorFields(e));
    }
  }, opts.signalEveryMs ?? 250);
  return { read, stop: () => clearInterval(timer) };
}

/** The sweep, the stall watch and the backlog report, each on its interval. */
function everyInterval(deps: SourceDeps): () => void {
  const { opts, wake } = deps;
  const watch = new StallWatch({
    dispatcher: deps.dispatcher,
    puller: deps.puller,
    pull: () => wake({ source: "stall" }),
  });
  const timers = [
    setInterval(() => watch.check(), opts.stallCheckEveryMs ?? 2_000),
    // Retries this process scheduled, and what pulls saw, wake it at their time; sweeps catch
    // the rest (retries another process scheduled and then died).
    setInterval(() => wake({ source: "sweep" }), opts.sweepEveryMs ?? 30_000),
    // Delivery lag made visible: what waits in KV, and for how long the oldest has.
    setInterval(() => void deps.report(), opts.reportEveryMs ?? 60_000),
  ];
  return () => timers.forEach(clearInterval);
}

/** Queue messages: a retry or redelivery at its time, where the store has queues. */
function listenForWork({ kv, wake }: SourceDeps) {
  const message = (m: QueuedWork) => wake({ source: "queue", message: m });
  listenQueue(kv, {
    probe: () => {},
    // Left by earlier versions, which woke engines per event: a pull finds the jobs.
    event: () => wake({ source: "signal" }),
    retry: message,
    redeliver: message,
  }).catch((e) => log.error("delivery: the queue listener stopped", errorFields(e)));
}
