import { errorFields, log } from "./log.ts";
import { startSoon } from "./after_answers.ts";

/** One unit of work: `key` makes it unique, `lane` is what it shares a concurrency bound with. */
export interface Task {
  key: string;
  lane: string;
  /**
   * Does the work. Resolves when the task no longer needs its slot, optionally with `rest`:
   * work that finishes later without a slot (recording), while the key stays taken, and with
   * whether it succeeded and whether it was slow doing so (the lane's bound adapts to both).
   */
  run(): Promise<{ rest?: Promise<void>; succeeded?: boolean; slow?: boolean } | void>;
  /** Told when the task is dropped unstarted (the dispatcher stopped). */
  dropped?(): void;
}

interface Lane {
  waiting: Task[];
  running: number;
  /** Room promised to tasks still on their way (see reserve). */
  reserved: number;
  ready: boolean;
  /** Tasks of the lane that may run at once now, from perLane up to maxPerLane. */
  limit: number;
}

export interface DispatcherLimits {
  /** Tasks running at once, in all and per lane. */
  global: number;
  perLane: number;
  /**
   * What a lane's bound may grow to while its tasks succeed slowly and more wait: a receiver
   * that is slow but sure gets more attempts in flight. A failure puts it back to perLane.
   */
  maxPerLane: number;
  /** Tasks held at once (waiting, running or reserved), in all and per lane: the window. */
  window: number;
  laneWindow: number;
}

/**
 * Runs tasks concurrently under a global bound and a small bound per lane (per subscription),
 * taking lanes in turn: an endpoint that is failing holds at most `perLane` slots, one slow but
 * succeeding at most `maxPerLane`, and neither delays the other subscriptions. It holds at most
 * `window` tasks, `laneWindow` per lane: the rest of a backlog stays in KV until there is room
 * (see `room`). A task already held is
 * not added twice.
 */
export class Dispatcher {
  readonly #lanes = new Map<string, Lane>();
  readonly #ready: string[] = [];
  readonly #known = new Set<string>();
  readonly #unfinished = new Set<Promise<void>>();
  readonly #roomListeners = new Set<() => void>();
  #active = 0;
  #held = 0;
  #freed = 0;
  #refusing = false;
  #stopped = false;
  #gated = false;

  /**
   * `gate`: what starting tasks waits for, when it gives a promise (requests going first, see
   * core/foreground.ts). Tasks wait for it unstarted, holding no slot.
   */
  constructor(
    readonly limits: DispatcherLimits,
    private readonly gate: () => Promise<void> | undefined = () => undefined,
  ) {}

  /** Tasks held now: waiting, running or reserved. */
  get held(): number {
    return this.#held;
  }

  /** Times room was freed so far: a task left the window, or a reservation was given back. */
  get freed(): number {
    return this.#freed;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#active;
  }

  /** Tasks held and not started. */
  get waiting(): number {
    let n = 0;
    for (const lane of this.#lanes.values()) n += lane.waiting.length;
    return n;
  }

  /** Whether a task with this key is held. */
  has(key: string): boolean {
    return this.#known.has(key);
  }

  /** How many more tasks of `lane` fit now. */
  room(lane: string): number {
    if (this.#stopped || this.#refusing) return 0;
    const l = this.#lanes.get(lane);
    const inLane = l ? l.waiting.length + l.running + l.reserved : 0;
    return Math.max(0, Math.min(this.limits.window - this.#held, this.limits.laneWindow - inLane));
  }

  /** Promises room for one task of `lane` that `submit(task, true)` brings later; false if full. */
  reserve(lane: string): boolean {
    if (this.room(lane) < 1) return false;
    this.#lane(lane).reserved++;
    this.#held++;
    return true;
  }

  /** Gives back a reservation that will not be used. */
  release(lane: string): void {
    const l = this.#lanes.get(lane);
    if (!l || l.reserved === 0) return;
    l.reserved--;
    this.#held--;
    this.#forget(lane, l);
    this.#roomFreed();
  }

  /**
   * Adds a task, in a reservation made for it when `reserved`. False when the key is already
   * held, the window is full or the dispatcher stopped (a reservation is then given back).
   */
  submit(task: Task, reserved = false): boolean {
    if (this.#stopped || this.#known.has(task.key) || (!reserved && this.room(task.lane) < 1)) {
      if (reserved) this.release(task.lane);
      return false;
    }
    const lane = this.#lane(task.lane);
    if (reserved) lane.reserved--;
    else this.#held++;
    this.#known.add(task.key);
    lane.waiting.push(task);
    this.#markReady(task.lane, lane);
    this.#pump();
    return true;
  }

  /** Takes no more reservations or new tasks; what is held still runs (the owner is stopping). */
  refuse(): void {
    this.#refusing = true;
  }

  /** Calls `listener` whenever a task leaves the window. Returns the unsubscribe function. */
  onRoom(listener: () => void): () => void {
    this.#roomListeners.add(listener);
    return () => this.#roomListeners.delete(listener);
  }

  /** Resolves once nothing waits or runs. */
  async idle(): Promise<void> {
    while (this.#unfinished.size > 0) await Promise.allSettled([...this.#unfinished]);
  }

  /** Drops what waits (telling each task) and lets what runs finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    // Nothing waits any more: a lane named here may be forgotten below, and a task that finishes
    // meanwhile must not start one.
    this.#ready.length = 0;
    for (const [name, lane] of this.#lanes) {
      for (const task of lane.waiting) {
        this.#known.delete(task.key);
        this.#held--;
        task.dropped?.();
      }
      lane.waiting = [];
      lane.ready = false;
      this.#forget(name, lane);
    }
    await this.idle();
  }

  #lane(name: string): Lane {
    let lane = this.#lanes.get(name);
    if (!lane) {
      lane = { waiting: [], running: 0, reserved: 0, ready: false, limit: this.limits.perLane };
      this.#lanes.set(name, lane);
    }
    return lane;
  }

  #forget(name: string, lane: Lane) {
    if (lane.running === 0 && lane.waiting.length === 0 && lane.reserved === 0) {
      this.#lanes.delete(name);
    }
  }

  #markReady(name: string, lane: Lane) {
    if (!lane.ready && lane.waiting.length > 0 && lane.running < lane.limit) {
      lane.ready = true;
      this.#ready.push(name);
    }
  }

  #pump() {
    while (this.#active < this.limits.global && this.#ready.length > 0) {
      if (this.#gated) return;
      const wait = this.gate();
      if (wait) {
        this.#gated = true;
        // Once the requests in front have their answers: the lanes ready, counted now, start
        // right after, or once those answers are written when they are many.
        void wait.then(() =>
          startSoon(this.#ready.length, () => {
            this.#gated = false;
            this.#pump();
          })
        );
        return;
      }
      const name = this.#ready.shift()!;
      const lane = this.#lanes.get(name)!;
      lane.ready = false;
      const task = lane.waiting.shift();
      if (task) this.#start(name, lane, task);
      this.#markReady(name, lane);
    }
  }

  #start(name: string, lane: Lane, task: Task) {
    this.#active++;
    lane.running++;
    const finished: Promise<void> = task.run()
      .then((done) => {
        if (done) this.#adapt(lane, done);
        return done;
      })
      .finally(() => this.#release(name, lane))
      .then((done) => done?.rest)
      .catch((e) => log.error("delivery: a task failed unexpectedly", errorFields(e)))
      .finally(() => {
        this.#unfinished.delete(finished);
        this.#known.delete(task.key);
        this.#held--;
        this.#roomFreed();
      });
    this.#unfinished.add(finished);
  }

  /** Additive increase while a backlogged lane succeeds slowly; back to the floor on a failure. */
  #adapt(lane: Lane, done: { succeeded?: boolean; slow?: boolean }) {
    if (done.succeeded === false) lane.limit = this.limits.perLane;
    else if (done.succeeded && done.slow && lane.waiting.length > 0) {
      lane.limit = Math.min(this.limits.maxPerLane, lane.limit + 1);
    }
  }

  #release(name: string, lane: Lane) {
    this.#active--;
    lane.running--;
    this.#forget(name, lane);
    if (this.#lanes.has(name)) this.#markReady(name, lane);
    this.#pump();
  }

  #roomFreed() {
    this.#freed++;
    for (const listener of this.#roomListeners) listener();
  }
}
